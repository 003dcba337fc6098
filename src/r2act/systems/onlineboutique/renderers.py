"""Online Boutique's renderers as the simulator calls them (``System.renderers``).

Each hook dispatches to the service's own renderer: the frontend's request, warning and
probe lines (``render_frontend``), each backend's per-call and failed-call lines
(``render_backend``), each container's start-up banner (``render_startup``) and
cartservice's health checks, which it logs on every probe.
"""

from __future__ import annotations

import random

from r2act.schema import LogLine
from r2act.systems.onlineboutique.render_backend import error_renderer, served_renderer
from r2act.systems.onlineboutique.render_frontend import (
    probe_kinds,
    request_renderer,
    tolerated_renderer,
)
from r2act.systems.onlineboutique.render_startup import startup_lines
from r2act.systems.onlineboutique.texts import T
from r2act.systems.render import Kind, PodIdentity, Renderers

new = tuple.__new__
CART_PROBE_RATE = 0.2
"""cartservice health checks per second: readiness and liveness every 10 s (manifest)."""


def periodic_kinds(logger: PodIdentity) -> tuple[Kind, ...]:
    """Lines at a fixed rate: the frontend's probes, cartservice's health checks."""
    if logger.app == "frontend":
        return probe_kinds(logger)
    if logger.app != "cartservice":
        return ()
    pod, container, app = logger.pod, logger.container, logger.app

    def health(ts: float, r: random.Random, out: list[LogLine]) -> None:
        out.append(new(LogLine, (ts, pod, container, app, T("ca.health")())))

    return ((CART_PROBE_RATE, 1, health),)


RENDERERS = Renderers(
    served=served_renderer,
    failed_call=error_renderer,
    request=request_renderer,
    tolerated=tolerated_renderer,
    startup=startup_lines,
    periodic=periodic_kinds,
)
"""What Online Boutique's services print, hook by hook."""
