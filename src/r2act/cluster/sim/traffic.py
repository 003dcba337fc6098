"""The engine's request model: which calls a user request makes, and the rates per route.

What is true of one application (its handlers' call patterns, per-call costs, think time)
is the system's load model (``System.route_calls``, ``service_ms``, ``think_s``, e.g.
``systems/onlineboutique/traffic.py``); this module only reads it for a topology. Idle CPU
is the language runtime's, so it is the engine's.
"""

from __future__ import annotations

from collections.abc import Mapping

from r2act.schema import Topology
from r2act.systems import Call, system_of

__all__ = [
    "IDLE_CORES",
    "Call",
    "redirects",
    "route_calls",
    "route_rates",
    "service_ms",
    "user_rate",
]

IDLE_CORES: dict[str, float] = {
    "go": 0.002,
    "node": 0.005,
    "python": 0.004,
    "java": 0.012,
    "csharp": 0.008,
    "redis": 0.003,
    "locust": 0.03,
}
"""CPU an idle container burns (runtime, GC, timers), by language."""


def service_ms(topology: Topology) -> Mapping[str, float]:
    """Own processing time per call (ms, unloaded pod) of each service of ``topology``."""
    return system_of(topology).service_ms


def route_calls(topology: Topology, scope: str) -> tuple[Call, ...]:
    """The calls of a route; unknown routes call each of their services once, directly."""
    known = system_of(topology).route_calls.get(scope)
    if known is not None:
        return known
    route = next(r for r in topology.routes if r.scope == scope)
    return tuple(Call(s, "Call") for s in route.services if s != topology.entrypoint)


def user_rate(topology: Topology, users: int) -> float:
    """Requests per second the load generator sends (and counts): each user sends one
    task's requests, then waits its think time (response times, milliseconds against a
    5.5 s wait, are left out)."""
    system = system_of(topology)
    return users * system.requests_per_task / system.think_s


def redirects(topology: Topology) -> Mapping[str, str]:
    """Route scope -> the route its successful answer redirects the user's client to."""
    return system_of(topology).redirects


def route_rates(topology: Topology, users: int) -> dict[str, float]:
    """Requests per second per route scope."""
    total = sum(r.weight for r in topology.routes) or 1.0
    rate = user_rate(topology, users)
    return {r.scope: rate * r.weight / total for r in topology.routes}
