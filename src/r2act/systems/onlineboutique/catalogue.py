"""Online Boutique's fault catalogue: the (service, fault type) cells the shipped deployment
can realise, each pointing at its row of the per-cell evidence table in ``docs/faults.md``.

A cell is here only if its fault can be injected on v0.10.6 as ``deploy/`` installs it and
its signal reaches the labelled service (``docs/faults.md``, "Per-cell table"). Campaigns
choose among these cells; ``r2act systems list`` shows their fault types by injector.
"""

from __future__ import annotations

from r2act.schema import FaultType
from r2act.systems.base import FaultCell

_EVIDENCE = "docs/faults.md#per-cell-table"

_CELLS: tuple[tuple[FaultType, tuple[str, ...]], ...] = (
    (
        FaultType.POD_FAILURE,
        ("frontend", "checkoutservice", "cartservice", "productcatalogservice", "paymentservice"),
    ),
    (
        FaultType.CPU_SATURATION,
        (
            "frontend",
            "checkoutservice",
            "recommendationservice",
            "cartservice",
            "productcatalogservice",
            "paymentservice",
        ),
    ),
    (
        FaultType.MEMORY_PRESSURE,
        ("frontend", "checkoutservice", "cartservice", "productcatalogservice", "paymentservice"),
    ),
    (FaultType.NETWORK_DELAY, ("frontend", "checkoutservice", "cartservice")),
    (FaultType.HTTP_ERROR, ("frontend",)),
    (FaultType.HTTP_ABORT, ("frontend",)),
    (
        FaultType.DNS_FAULT,
        ("checkoutservice", "cartservice", "productcatalogservice", "paymentservice"),
    ),
    (
        FaultType.DNS_RANDOM,
        ("checkoutservice", "cartservice", "productcatalogservice", "paymentservice"),
    ),
)

CELLS: tuple[FaultCell, ...] = tuple(
    FaultCell(service, fault, _EVIDENCE) for fault, services in _CELLS for service in services
)
"""Every realizable cell, by fault type in the schema's order."""
