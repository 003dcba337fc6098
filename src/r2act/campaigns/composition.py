"""Recompose a paper's cell counts onto the cells the shipped deployment can realise.

The rule (``docs/faults.md``, "Paper scale"): a cell keeps its count when it is realizable
(moved to the service whose fault it really is, if that differs); the incidents of a cell
that cannot break what users see go, one at a time in the order they were lost, to the
realizable paper cell of the same fault type and intensity that has the fewest incidents so
far (ties: the first in service order). So the totals per fault type and intensity are the
paper's whenever some cell of the fault type is realizable, which holds for every fault type
on the shipped deployment (HTTP faults all move to the entry point, whose route rules every
user request of the route meets now that the load generator opens a connection per
request). Only if no cell of a fault type were realizable would its incidents go to the
realizable paper cell of the same intensity, of any fault type, with the fewest incidents
(ties: service order, then fault type order). No list order other than the campaign's own
service order matters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from r2act.schema import FaultType, Intensity, Topology

Cell = tuple[str, FaultType, Intensity]

_FAILURES = frozenset(
    {
        FaultType.POD_FAILURE,
        FaultType.MEMORY_PRESSURE,
        FaultType.DNS_FAULT,
        FaultType.DNS_RANDOM,
    }
)
"""Faults whose effect on callers is a fast failure (no added latency)."""

TOLERATED: Mapping[str, frozenset[FaultType]] = MappingProxyType(
    {
        # frontend: recommendations fail soft on product and cart pages and are ignored on
        # checkout; the call has no deadline, so added latency (cpu, delay) is still seen
        "recommendationservice": _FAILURES,
        # frontend: ads fail soft and have a 100 ms deadline, so latency turns into a
        # tolerated failure too
        "adservice": frozenset(FaultType),
        # checkout: a failed confirmation e-mail is logged as a warning only
        "emailservice": _FAILURES,
    }
)
"""Faults on a service that Online Boutique's handlers tolerate: users never see them."""

ROUTE_FAULTS: frozenset[FaultType] = frozenset({FaultType.HTTP_ERROR, FaultType.HTTP_ABORT})
"""Fault types injected as a rule on one entry-point route (HTTPChaos cannot reach gRPC), so
they are the entry point's faults whatever service the paper's cell named. The shipped load
generator sends ``Connection: close`` (``deploy/``), so every user request of the route
opens a connection the rule meets, and the Locust stats show its failures."""


VISIBLE_SHARE = 0.05
"""Least share of user requests (load-generator route weights) a caller-side fault must break
to be seen: the health error-rate threshold of every shipped manifest. Below it the callee
stays healthy and the caller's few error lines in a 120 s window show no effect."""


def user_share(topology: Topology, service: str) -> float:
    """Share of user requests (route weights) whose handling reaches ``service``."""
    total = sum(r.weight for r in topology.routes) or 1.0
    return sum(r.weight for r in topology.routes_of(service)) / total


def online_boutique_home(topology: Topology) -> Callable[[str, FaultType], str | None]:
    """Where each (service, fault) of a paper design belongs on the shipped deployment.

    HTTP faults are rules on an entry-point route, so they belong to the entry point
    (``ROUTE_FAULTS``); DNS faults need a primary caller
    holding the service's address and enough user requests through it (``VISIBLE_SHARE``:
    checkout and payment are reached only by the checkout route, 1 request in 22); a fault
    the handlers tolerate has no home (it cannot break user-facing health)."""

    def home(service: str, fault: FaultType) -> str | None:
        if fault in ROUTE_FAULTS:
            return topology.entrypoint
        if fault in TOLERATED.get(service, frozenset()):
            return None
        if fault in (FaultType.DNS_FAULT, FaultType.DNS_RANDOM):
            seen = user_share(topology, service) >= VISIBLE_SHARE
            return service if seen and topology.address_variable(service) is not None else None
        return service

    return home


def recompose(
    paper: Mapping[Cell, int],
    services: Sequence[str],
    home: Callable[[str, FaultType], str | None],
) -> dict[Cell, int]:
    """The paper's counts moved onto realizable cells.

    ``home(service, fault)`` says where a paper cell's incidents really belong: the service
    itself, another service whose fault it really is (an HTTP route rule belongs to the
    entry point), or None when the fault cannot break user-facing health on that service
    (its incidents then spread over the realizable cells of the same fault and intensity).
    """
    result: dict[Cell, int] = {}
    homeless: list[Cell] = []
    for (service, fault, intensity), count in paper.items():
        if count == 0:
            continue
        owner = home(service, fault)
        if owner is None:
            homeless.extend([(service, fault, intensity)] * count)
            continue
        key = (owner, fault, intensity)
        result[key] = result.get(key, 0) + count
    faults = list(FaultType)
    for _, fault, intensity in homeless:
        cells = [
            (s, fault, intensity)
            for s in services
            if home(s, fault) == s and paper.get((s, fault, intensity), 0)
        ] or [
            (s, other, intensity)
            for s in services
            for other in faults
            if home(s, other) == s and paper.get((s, other, intensity), 0)
        ]
        if not cells:
            raise ValueError(f"no realizable cell takes an incident at {intensity.value}")
        key = min(cells, key=lambda c: (result.get(c, 0), services.index(c[0]), faults.index(c[1])))
        result[key] = result.get(key, 0) + 1
    return result
