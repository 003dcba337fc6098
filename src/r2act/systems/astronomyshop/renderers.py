"""The Astronomy Shop's renderers as the simulator calls them (``System.renderers``), and
the collector's, which no engine hook calls yet.

``RENDERERS`` prints what each pod writes on its **own** stdout (``logsinks.STDOUT``):
cart's console logger, ad's log4j, recommendation's root handler, email's ``puts``, the
frontend's ``console.error`` (``render_backend``) and the start-up banners
(``render_startup``). The entry point (frontend-proxy) logs its requests to the collector
only, so its ``request`` hook prints nothing on its pod.

``COLLECTOR_RENDERERS`` prints the OTLP records services export (``logsinks.COLLECTOR``)
as the collector's debug exporter does, on the collector pod (``render_otlp``,
``render_proxy``, ``render_collector``). ``systems.render.Renderers`` cannot say "these
lines go to another pod", and the engine is not changed here; the hook it would need is
described in docs/systems.md ("Where the Astronomy Shop's lines go"): per serving pod of
a service with a collector sink, call these with the collector pod of the node and
append the lines to that pod's stream at the same rates as the pod's own.
"""

from __future__ import annotations

from r2act.systems.astronomyshop.render_backend import error_renderer, served_renderer
from r2act.systems.astronomyshop.render_otlp import (
    CollectorRenderers,
    collector_failed,
    collector_served,
)
from r2act.systems.astronomyshop.render_proxy import proxy_request
from r2act.systems.astronomyshop.render_startup import collector_startup, startup_lines
from r2act.systems.render import Renderers

RENDERERS = Renderers(
    served=served_renderer,
    failed_call=error_renderer,
    startup=startup_lines,
)
"""What the Astronomy Shop's pods print on their own stdout, hook by hook."""

COLLECTOR_RENDERERS = CollectorRenderers(
    served=collector_served,
    failed_call=collector_failed,
    request=proxy_request,
    startup=collector_startup,
)
"""What the collector pod prints for the records the services export, hook by hook."""
