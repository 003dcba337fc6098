"""Recompose a paper's cell counts onto the cells the shipped deployment can realise.

The rule (``docs/faults.md``, "Paper scale"): a cell keeps its count when it is realizable;
the incidents of a cell that is not go, one at a time in the order they were lost, to the
realizable cell of the same fault type and intensity that has the fewest incidents so far
(ties: the first in service order). Totals per fault type and intensity are therefore
kept exactly, and no list order other than the campaign's own service order matters.
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


def online_boutique_home(topology: Topology) -> Callable[[str, FaultType], str | None]:
    """Where each (service, fault) of a paper design belongs on the shipped deployment.

    HTTP faults are rules on an entry-point route, so they belong to the entry point; DNS
    faults need a primary caller holding the service's address; a fault the handlers
    tolerate has no home (it cannot break user-facing health)."""

    def home(service: str, fault: FaultType) -> str | None:
        if fault in (FaultType.HTTP_ERROR, FaultType.HTTP_ABORT):
            return topology.entrypoint
        if fault in TOLERATED.get(service, frozenset()):
            return None
        if fault in (FaultType.DNS_FAULT, FaultType.DNS_RANDOM):
            return service if topology.address_variable(service) is not None else None
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
    for _, fault, intensity in homeless:
        candidates = [
            s for s in services if home(s, fault) == s and paper.get((s, fault, intensity), 0)
        ]
        if not candidates:
            raise ValueError(f"no realizable cell takes {fault.value} at {intensity.value}")
        chosen = min(
            candidates, key=lambda s: (result.get((s, fault, intensity), 0), services.index(s))
        )
        key = (chosen, fault, intensity)
        result[key] = result.get(key, 0) + 1
    return result
