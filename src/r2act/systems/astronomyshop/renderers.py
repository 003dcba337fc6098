"""The Astronomy Shop's renderers as the simulator calls them: its pods' own lines
(``System.renderers``) and the collector's copies (``System.log_relay``).

``RENDERERS`` prints what each pod writes on its **own** stdout (``logsinks.STDOUT``):
cart's console logger, ad's log4j, recommendation's root handler, email's ``puts``, the
frontend's ``console.error`` (``render_backend``) and the start-up banners
(``render_startup``). The entry point (frontend-proxy) logs its requests to the collector
only, so its ``request`` hook prints nothing on its pod.

``COLLECTOR_RENDERERS`` prints the OTLP records services export (``logsinks.COLLECTOR``)
as the collector's debug exporter does, on the collector pod (``render_otlp``,
``render_proxy``, ``render_collector``). ``LOG_RELAY`` tells the engine where they go:
the collector's workload (``topology.COLLECTOR``), which services send to it and which
print on their own pod, all read off the sink table (``logsinks.SINKS``).
"""

from __future__ import annotations

from r2act.systems.astronomyshop.logsinks import SINKS, to_collector, to_stdout
from r2act.systems.astronomyshop.render_backend import error_renderer, served_renderer
from r2act.systems.astronomyshop.render_loadgen import loadgen_periodic, loadgen_startup
from r2act.systems.astronomyshop.render_otlp import collector_failed, collector_served
from r2act.systems.astronomyshop.render_proxy import proxy_request
from r2act.systems.astronomyshop.render_startup import startup_lines
from r2act.systems.astronomyshop.topology import COLLECTOR
from r2act.systems.render import LogRelay, RelayRenderers, Renderers

RENDERERS = Renderers(
    served=served_renderer,
    failed_call=error_renderer,
    startup=startup_lines,
)
"""What the Astronomy Shop's pods print on their own stdout, hook by hook."""

COLLECTOR_RENDERERS = RelayRenderers(
    served=collector_served,
    failed_call=collector_failed,
    request=proxy_request,
    startup=loadgen_startup,
    periodic=loadgen_periodic,
)
"""What the collector pod prints for the records the services export, hook by hook."""

LOG_RELAY = LogRelay(
    deployment=COLLECTOR,
    sources=frozenset(name for name in SINKS if to_collector(name)),
    stdout=frozenset(name for name in SINKS if to_stdout(name)),
    renderers=COLLECTOR_RENDERERS,
)
"""The collector as the engine's log relay: the sink table's two columns."""
