"""The one reader of a dataset's method-visible case tables, one case at a time.

Agents (:mod:`r2act.agents`) and baselines (:mod:`r2act.baselines`) see a case the same
way, so they read it through the same code: :class:`CaseReader` opens ``cases.parquet``
and, of ``observations/``, only the tables the chosen view includes (the paper's modality
ablation); it never opens ``answers/``. A :class:`Case` holds the opaque case id, the
system's topology, the action space and the view's observations, nothing else.

Opening is cheap and reading is lazy: a paper-scale dataset holds about twelve million
log lines, and an MCP server must answer its first request within two seconds and a case
selection within 200 ms (issue 26). So the constructor reads three columns of the small
``cases.parquet``; an observation table is opened on first use, when its footer's
row-group statistics give each case's row groups (the build writes one row group per
case; a group that holds several cases is read whole and filtered, so any row-group
layout reads correctly). A case's rows are then read from exactly its row groups: memory
holds one case's observations, never the dataset's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from r2act.datasets import layout
from r2act.errors import DataError
from r2act.schema import ActionSpace, ClusterState, Topology

if TYPE_CHECKING:  # imported by the first case read (``to_pandas``), not by opening a reader
    import pandas as pd

_KEY = "case_id"
OBSERVED: dict[str, list[str]] = {
    layout.LOGS: ["phase", "ts", "pod", "service", "line"],
    layout.EVENTS: [
        "phase",
        "ts",
        "type",
        "reason",
        "object_kind",
        "object_name",
        "message",
        "count",
    ],
    layout.METRICS: ["phase", "ts", "query", "labels", "value"],
    layout.STATE: ["phase", "state"],
    layout.REQUESTS: [f.name for f in layout.REQUEST_TABLE if f.name != _KEY],
    layout.TRACES: [f.name for f in layout.TRACE_TABLE if f.name != _KEY],
}
"""The columns a case carries of each observation table (in this order)."""


@dataclass(frozen=True, kw_only=True)
class Case:
    """What a method may see of one case; the view decides which tables are present.

    ``events``, ``metrics`` and ``requests`` are None when the view leaves them out;
    ``states`` maps a phase to the cluster state read at its end (empty unless the view
    is ``full``)."""

    case_id: str
    """The opaque case id a prediction carries."""
    view: str
    """The view the case was read in: logs, logs+events, full or full+traces."""
    topology: Topology
    """The system's deployments, call graph and routes."""
    action_space: ActionSpace
    """The admissible plans (the same for every case of a system)."""
    logs: pd.DataFrame
    """Log records: phase, ts, pod, service, line (stored order)."""
    events: pd.DataFrame | None = None
    """Kubernetes events (views logs+events and full)."""
    metrics: pd.DataFrame | None = None
    """Metric samples: phase, ts, query, labels (JSON), value (view full)."""
    states: dict[str, ClusterState] = field(default_factory=dict)
    """Cluster state at the end of each phase (view full)."""
    requests: pd.DataFrame | None = None
    """Request series derived from the entry point's log and Locust's stats (view full)."""
    traces: pd.DataFrame | None = None
    """Spans: phase, trace_id, span_id, parent_id, service, operation, kind, start,
    duration_s, status, attributes (JSON) (view full+traces)."""


@dataclass(frozen=True, kw_only=True)
class CaseRows:
    """One case as read from the files, before conversion: Arrow tables, parsed models.

    Reading a case needs only pyarrow; :meth:`case` converts its tables to the DataFrames
    a :class:`Case` holds, and that first conversion imports pandas (about 0.2 CPU s).
    The MCP server's ``select_case`` reads (so a bad case fails there) and leaves the
    conversion to the first question about the case, which keeps pandas off the
    server's start and out of every selection."""

    case_id: str
    view: str
    topology: Topology
    action_space: ActionSpace
    logs: pa.Table
    events: pa.Table | None = None
    metrics: pa.Table | None = None
    states: dict[str, ClusterState] = field(default_factory=dict)
    requests: pa.Table | None = None
    traces: pa.Table | None = None

    def case(self) -> Case:
        """The :class:`Case` of these rows (imports pandas on first use)."""
        return Case(
            case_id=self.case_id,
            view=self.view,
            topology=self.topology,
            action_space=self.action_space,
            logs=self.logs.to_pandas(),
            events=_frame(self.events),
            metrics=_frame(self.metrics),
            states=self.states,
            requests=_frame(self.requests),
            traces=_frame(self.traces),
        )


def _frame(table: pa.Table | None) -> pd.DataFrame | None:
    if table is None:
        return None
    frame: pd.DataFrame = table.to_pandas()
    return frame


def _unreadable(path: Path, root: Path, exc: Exception) -> DataError:
    return DataError(
        f"{path}: unreadable ({type(exc).__name__}: {exc}); run `r2act dataset validate {root}`"
    )


class _Table:
    """One observation table with its case -> row groups index, from the footer alone."""

    def __init__(self, path: Path, columns: list[str]) -> None:
        self.file = pq.ParquetFile(path)
        self.columns = columns
        schema = self.file.schema_arrow
        # not Schema.empty_table(): that imports pandas, which reading must not need
        self.empty = pa.Table.from_batches([], pa.schema([schema.field(c) for c in columns]))
        self.single: dict[str, list[int]] = {}
        """Row groups that hold only this case (read as they are)."""
        self.shared: list[tuple[str, str, int]] = []
        """(min, max, group) of row groups holding several cases (read and filtered)."""
        meta = self.file.metadata
        key = self.file.schema_arrow.get_field_index(_KEY)
        for index in range(meta.num_row_groups):
            stats = meta.row_group(index).column(key).statistics
            if stats is not None and stats.has_min_max:
                low, high = str(stats.min), str(stats.max)
            else:  # no statistics: the group's own ids give its range
                ids = pc.unique(self.file.read_row_group(index, columns=[_KEY]).column(0))
                low, high = str(pc.min(ids)), str(pc.max(ids))
            if low == high:
                self.single.setdefault(low, []).append(index)
            else:
                self.shared.append((low, high, index))

    def rows(self, case_id: str) -> pa.Table:
        """The rows of one case in stored order (the empty table when it has none)."""
        single = self.single.get(case_id, [])
        shared = [g for low, high, g in self.shared if low <= case_id <= high]
        if not shared:
            if not single:
                return self.empty
            return self.file.read_row_groups(single, columns=self.columns)
        table = self.file.read_row_groups(sorted(single + shared), columns=[_KEY, *self.columns])
        return table.filter(pc.equal(table[_KEY], case_id)).drop_columns([_KEY])


class CaseReader:
    """The cases of one view of a dataset, by case id, from method-visible tables only."""

    def __init__(self, root: Path | str, view: str = "full") -> None:
        self.root = Path(root)
        if view not in layout.VIEWS:
            raise DataError(f"view {view!r}: unknown (use one of {', '.join(layout.VIEWS)})")
        self.view = view
        self.files = layout.VIEWS[view]
        layout.require_view(self.root, view)
        path = self.root / layout.CASES
        try:
            # ParquetFile, not pq.read_table: the latter imports pyarrow.dataset and with it
            # pandas, which an MCP server would pay for before its first answer
            table = pq.ParquetFile(path).read(columns=[_KEY, "system", "action_space"])
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise DataError(
                f"{path}: not a readable r2act dataset ({type(exc).__name__}); "
                f"run `r2act dataset validate {self.root}`"
            ) from exc
        self._cases: dict[str, tuple[str, str]] = {
            str(c): (str(s), str(a))
            for c, s, a in zip(
                *(table.column(n).to_pylist() for n in table.column_names), strict=True
            )
        }
        from r2act.systems import SYSTEMS  # imported by whoever opens a reader, not on import

        self._systems = SYSTEMS
        self._tables: dict[str, _Table] = {}
        self._lock = threading.Lock()  # a ParquetFile is not safe for concurrent reads

    def ids(self) -> list[str]:
        """Every case id, in the dataset's (case-id) order."""
        return list(self._cases)

    def __contains__(self, case_id: object) -> bool:
        return case_id in self._cases

    def __len__(self) -> int:
        return len(self._cases)

    def select(self, only: list[str] | None) -> list[str]:
        """``only`` checked against the dataset (DataError naming unknown ids), else all."""
        if not only:
            return self.ids()
        unknown = [c for c in only if c not in self._cases]
        if unknown:
            raise DataError(
                f"{self.root}: unknown case id(s) {', '.join(unknown[:3])} "
                f"(list them with `r2act agent cases --dataset {self.root}`)"
            )
        wanted = set(only)
        return [c for c in self.ids() if c in wanted]

    def _rows(self, name: str, case_id: str) -> pa.Table:
        path = self.root / name
        try:
            with self._lock:
                table = self._tables.get(name)
                if table is None:
                    table = self._tables[name] = _Table(path, OBSERVED[name])
                return table.rows(case_id)
        except (OSError, ValueError, KeyError, pa.ArrowException) as exc:
            raise _unreadable(path, self.root, exc) from exc

    def _optional(self, name: str, case_id: str) -> pa.Table | None:
        return self._rows(name, case_id) if name in self.files else None

    def read(self, case_id: str) -> CaseRows:
        """One case's rows as read from its row groups (Arrow); KeyError for an unknown id.

        Everything that can fail on the files fails here: the row groups are read and
        decoded, the system is known, the action space and every phase's cluster state
        parse. Only the conversion to DataFrames is left, to :meth:`CaseRows.case`."""
        system, space = self._cases[case_id]
        topology = self._systems.get(system)
        if topology is None:
            raise DataError(
                f"{self.root / layout.CASES}: {case_id}: unknown system {system!r} "
                f"(known: {', '.join(self._systems)})"
            )
        states: dict[str, ClusterState] = {}
        if layout.STATE in self.files:
            table = self._rows(layout.STATE, case_id)
            for phase, raw in zip(
                table.column("phase").to_pylist(), table.column("state").to_pylist(), strict=True
            ):
                states[str(phase)] = ClusterState.model_validate_json(str(raw))
        return CaseRows(
            case_id=case_id,
            view=self.view,
            topology=topology,
            action_space=ActionSpace.model_validate_json(space),
            logs=self._rows(layout.LOGS, case_id),
            events=self._optional(layout.EVENTS, case_id),
            metrics=self._optional(layout.METRICS, case_id),
            states=states,
            requests=self._optional(layout.REQUESTS, case_id),
            traces=self._optional(layout.TRACES, case_id),
        )

    def case(self, case_id: str) -> Case:
        """The method-visible inputs of one case; KeyError for an unknown id."""
        return self.read(case_id).case()

    def cases(self, only: list[str] | None = None) -> Iterator[Case]:
        """Every case (or those of ``only``), in case-id order, one at a time."""
        for case_id in self.select(only):
            yield self.case(case_id)

    def __iter__(self) -> Iterator[Case]:
        return self.cases()
