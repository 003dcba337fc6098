"""Cell quotas and spares: how a campaign ends with exactly its planned main population.

The planner gives every cell (service, fault type, intensity) its quota plus ``spares``
repetitions. Two pure rules use them:

- ``admit``: the audit keeps, per cell, the first ``quota`` incidents that pass the gate
  (in repetition order); later clean ones are surplus spares, kept out of the main set.
- ``needed``: the collector asks, before each incident, whether its cell still needs it; a
  spare is collected only while fewer than ``quota`` incidents of its cell came out clean,
  so a cell stops as soon as it is full and spares cost nothing when nothing failed.

Neither touches files or a cluster: the caller says what it has seen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from r2act.schema import FaultType, Intensity, PlannedIncident

CellKey = tuple[str, FaultType, Intensity]
"""(service, fault type, intensity): the unit a quota counts."""


def cell_of(incident: PlannedIncident) -> CellKey:
    """The cell an incident fills."""
    return (incident.service, FaultType(incident.fault.type), Intensity(incident.fault.intensity))


def is_spare(incident: PlannedIncident) -> bool:
    """True for a repetition planned beyond its cell's quota."""
    return incident.quota is not None and incident.repetition > incident.quota


def quotas(plan: Iterable[PlannedIncident]) -> dict[CellKey, int]:
    """Quota per cell of a plan (cells without a quota are left out)."""
    return {cell_of(i): i.quota for i in plan if i.quota is not None}


def needed(incident: PlannedIncident, clean: Mapping[CellKey, int]) -> bool:
    """Whether to collect ``incident`` given how many of each cell came out ``clean`` so far.

    Quota repetitions are always collected (the plan promised them); a spare only while its
    cell is short."""
    if not is_spare(incident):
        return True
    assert incident.quota is not None
    return clean.get(cell_of(incident), 0) < incident.quota


@dataclass(frozen=True)
class Admission:
    """The audit's split of the incidents that passed the gate."""

    admitted: list[str]
    """Ids within their cell's quota, in input order."""
    surplus: list[str]
    """Ids that passed but whose cell was already full."""


def admit(passed: Iterable[tuple[str, CellKey, int, int | None]]) -> Admission:
    """Split passed incidents ``(id, cell, repetition, quota)`` into admitted and surplus.

    Within a cell the lowest repetitions win, whatever the input order."""
    ordered = sorted(passed, key=lambda row: (row[1], row[2]))
    taken: Counter[CellKey] = Counter()
    surplus: set[str] = set()
    for ident, cell, _, quota in ordered:
        if quota is not None and taken[cell] >= quota:
            surplus.add(ident)
        else:
            taken[cell] += 1
    ids = [row[0] for row in ordered]
    return Admission(
        admitted=[i for i in ids if i not in surplus], surplus=[i for i in ids if i in surplus]
    )


def shortfall(
    wanted: Mapping[CellKey, int], admitted: Iterable[CellKey]
) -> dict[CellKey, tuple[int, int]]:
    """Cells that ended below their quota -> (admitted, quota), in cell order."""
    got = Counter(admitted)
    return {cell: (got[cell], q) for cell, q in sorted(wanted.items()) if got[cell] < q}
