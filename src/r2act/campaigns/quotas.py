"""Cell quotas and spares: how a campaign ends with exactly its planned main population.

The planner gives every cell (service, fault type, intensity) its quota plus ``spares``
repetitions. Pure rules use them:

- ``admit``: the audit keeps, per cell, the first ``quota`` incidents that pass the gate
  (in repetition order); later clean ones are surplus spares, kept out of the main set.
- ``next_round``: the collector collects in rounds. Round 0 is every quota repetition; each
  later round takes, for each cell still short of clean incidents, exactly as many of its
  spares as it lacks, lowest repetition first. A round never takes more spares than its
  cell lacks, so a cell never ends above its target, and the spares a cell takes are the
  shortest run of its spares (in repetition order) that holds enough clean ones. That set
  depends only on the plan and on each incident's outcome: not on round boundaries, on how
  many lanes share a round, or on where an interrupted run resumed.

None of them touches files or a cluster: the caller says what it has seen.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
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


def targets(selection: Iterable[PlannedIncident]) -> Counter[CellKey]:
    """Clean incidents each cell of ``selection`` must end with: its quota repetitions there.

    For a whole campaign that is the cell's quota; for a shard (``campaigns.shard``), the
    shard's share of it, which its own spares fill."""
    return Counter(cell_of(i) for i in selection if i.quota is not None and not is_spare(i))


def next_round(
    selection: Sequence[PlannedIncident],
    taken: Collection[str],
    clean: Callable[[str], bool],
) -> list[PlannedIncident]:
    """The incidents to collect next, in plan order; empty when collection is over.

    ``taken`` holds the ids already collected or tried in this run (a failed one is not
    retried before the next run); ``clean(id)`` says whether a taken incident would pass the
    quality gate, and is asked only about taken incidents of cells that still have spares.
    Quota repetitions come first; then each cell short of ``targets`` gets as many untaken
    spares as it lacks."""
    first = [i for i in selection if not is_spare(i) and i.id not in taken]
    if first:
        return first
    chosen: set[str] = set()
    for cell, spares in _untaken_spares(selection, taken).items():
        chosen.update(i.id for i in spares[: max(0, lacking(selection, taken, clean, cell))])
    return [i for i in selection if i.id in chosen]


def lacking(
    selection: Sequence[PlannedIncident],
    taken: Collection[str],
    clean: Callable[[str], bool],
    cell: CellKey,
) -> int:
    """Clean incidents ``cell`` still lacks (zero or less: it is full)."""
    have = sum(
        clean(i.id)
        for i in selection
        if i.id in taken and i.quota is not None and cell_of(i) == cell
    )
    return targets(i for i in selection if cell_of(i) == cell)[cell] - have


def _untaken_spares(
    selection: Sequence[PlannedIncident], taken: Collection[str]
) -> dict[CellKey, list[PlannedIncident]]:
    spares: defaultdict[CellKey, list[PlannedIncident]] = defaultdict(list)
    for incident in selection:
        if is_spare(incident) and incident.id not in taken:
            spares[cell_of(incident)].append(incident)
    for cell_spares in spares.values():
        cell_spares.sort(key=lambda i: i.repetition)
    return dict(spares)


@dataclass(frozen=True)
class SpareCount:
    """What the stopping rule did with a selection's spares, for the collect summary."""

    planned: int
    """Spares the selection plans."""
    taken: int
    """Spares collected or tried."""
    not_needed: int
    """Untaken spares of cells that are full: never to be collected."""
    short: dict[CellKey, tuple[int, int]]
    """Cells that plan spares, still short with none left: cell -> (clean, target).
    Cells without spares are left to the audit's shortfall report."""


def count_spares(
    selection: Sequence[PlannedIncident], taken: Collection[str], clean: Callable[[str], bool]
) -> SpareCount:
    """Spares planned, taken and skipped, and the cells whose spares ran out."""
    spares = [i for i in selection if is_spare(i)]
    untaken = _untaken_spares(selection, taken)
    want = targets(selection)
    full = {cell for cell in untaken if lacking(selection, taken, clean, cell) <= 0}
    short: dict[CellKey, tuple[int, int]] = {}
    if not [i for i in selection if not is_spare(i) and i.id not in taken]:
        for cell in sorted({cell_of(i) for i in spares} - untaken.keys()):
            if (need := lacking(selection, taken, clean, cell)) > 0:
                short[cell] = (want[cell] - need, want[cell])
    return SpareCount(
        planned=len(spares),
        taken=sum(i.id in taken for i in spares),
        not_needed=sum(len(untaken[cell]) for cell in full),
        short=short,
    )


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
