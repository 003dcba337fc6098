"""Read a published dataset one incident at a time, so a baseline never holds it all.

A paper-scale dataset has about twelve million log lines. ``datasets.load`` gives whole
DataFrames, which is right for a notebook but not for a pass over every incident. The
dataset build writes one Parquet row group per incident in id order, so this reader maps
each incident to its row groups once (from the row-group statistics, or from the id column
when statistics are missing) and then reads exactly those groups per incident. Peak memory
is one incident's observations.

Only method-visible files are opened, and only those of the chosen view (the paper's
modality ablation): ``logs`` -> logs; ``logs+events`` -> + events; ``full`` -> + metrics
and state. A case is keyed by its opaque case id; ground truth stays in the records (the
answers), which callers hand out deliberately.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyarrow import ArrowException

from r2act.datasets import VIEWS, layout
from r2act.datasets.folds import Folds, key_of
from r2act.datasets.tables import read_records
from r2act.errors import DataError
from r2act.schema import ActionSpace, BenchmarkRecord, ClusterState, Topology
from r2act.systems import SYSTEMS

_LOG_COLUMNS = ["phase", "ts", "pod", "service", "line"]
_EVENT_COLUMNS = ["phase", "ts", "type", "reason", "object_kind", "object_name", "message", "count"]
_METRIC_COLUMNS = ["phase", "ts", "query", "labels", "value"]


@dataclass(frozen=True)
class Case:
    """What a method may see of one incident: its action space and the view's observations.

    ``events`` and ``metrics`` are None when the view leaves them out; ``states`` maps a
    phase to the cluster state read at its end (empty unless the view is ``full``)."""

    case_id: str
    action_space: ActionSpace
    topology: Topology
    logs: pd.DataFrame
    events: pd.DataFrame | None = None
    metrics: pd.DataFrame | None = None
    states: dict[str, ClusterState] = field(default_factory=dict)


class _Table:
    """One observation Parquet file with its case -> row groups index."""

    def __init__(self, path: Path, columns: list[str]) -> None:
        self.file = pq.ParquetFile(path)
        self.columns = columns
        self.groups: dict[str, list[int]] = defaultdict(list)
        self.mixed: set[str] = set()
        meta = self.file.metadata
        key = self.file.schema_arrow.get_field_index("case_id")
        for index in range(meta.num_row_groups):
            stats = meta.row_group(index).column(key).statistics
            if stats is not None and stats.has_min_max and stats.min == stats.max:
                self.groups[str(stats.min)].append(index)
                continue
            ids = set(self.file.read_row_group(index, columns=["case_id"]).column(0).to_pylist())
            for incident in map(str, ids):
                self.groups[incident].append(index)
                self.mixed.add(incident)

    def frame(self, case_id: str) -> pd.DataFrame:
        """The rows of one case (an empty frame with the columns when it has none)."""
        groups = self.groups.get(case_id, [])
        if not groups:
            return pd.DataFrame({c: [] for c in self.columns})
        if case_id not in self.mixed:  # the build's layout: one row group per case
            table = self.file.read_row_groups(groups, columns=self.columns)
        else:
            table = self.file.read_row_groups(groups, columns=["case_id", *self.columns])
            table = table.filter(pc.equal(table["case_id"], case_id))
            table = table.drop_columns(["case_id"])
        frame: pd.DataFrame = table.to_pandas()
        return frame


def _states(path: Path) -> dict[str, dict[str, str]]:
    """case -> phase -> raw ClusterState JSON (parsed lazily, per case)."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for row in pq.read_table(path).to_pylist():
        out[row["case_id"]][row["phase"]] = row["state"]
    return out


class DatasetReader:
    """Records, folds and per-incident observations of one view of a dataset."""

    def __init__(self, root: Path | str, view: str = "full") -> None:
        self.root = Path(root)
        if view not in VIEWS:
            raise DataError(f"view {view!r}: unknown (use one of {', '.join(VIEWS)})")
        self.view = view
        try:
            self.records = read_records(self.root / layout.INCIDENTS)
            folds = Folds.model_validate_json((self.root / layout.FOLDS).read_bytes())
        except (OSError, ValueError, ArrowException) as exc:
            raise DataError(
                f"{self.root}: not a readable r2act dataset ({type(exc).__name__}); "
                f"run `r2act dataset validate {self.root}`"
            ) from exc
        self.folds: list[list[str]] = [list(f) for f in folds.folds]
        self._files = VIEWS[view]
        self._logs: _Table | None = None
        self._events: _Table | None = None
        self._metrics: _Table | None = None
        self._state: dict[str, dict[str, str]] | None = None

    def topology(self, record: BenchmarkRecord) -> Topology:
        """The topology of the record's system; DataError for an unknown system."""
        topology = SYSTEMS.get(record.metadata.system)
        if topology is None:
            raise DataError(
                f"{self.root / layout.INCIDENTS}: {record.incident_id}: unknown system "
                f"{record.metadata.system!r} (known: {', '.join(SYSTEMS)})"
            )
        return topology

    def _open(self) -> None:
        try:
            if self._logs is None:
                self._logs = _Table(self.root / layout.LOGS, _LOG_COLUMNS)
            if self._events is None and layout.EVENTS in self._files:
                self._events = _Table(self.root / layout.EVENTS, _EVENT_COLUMNS)
            if self._metrics is None and layout.METRICS in self._files:
                self._metrics = _Table(self.root / layout.METRICS, _METRIC_COLUMNS)
            if self._state is None and layout.STATE in self._files:
                self._state = _states(self.root / layout.STATE)
        except (OSError, ValueError, KeyError) as exc:
            raise DataError(
                f"{self.root}: observations are unreadable ({type(exc).__name__}: {exc}); "
                f"run `r2act dataset validate {self.root}`"
            ) from exc

    def case(self, record: BenchmarkRecord) -> Case:
        """The method-visible observations of one incident."""
        self._open()
        assert self._logs is not None
        case = key_of(record)
        states = {}
        if self._state is not None:
            states = {
                phase: ClusterState.model_validate_json(raw)
                for phase, raw in self._state.get(case, {}).items()
            }
        return Case(
            case_id=case,
            action_space=record.action_space,
            topology=self.topology(record),
            logs=self._logs.frame(case),
            events=self._events.frame(case) if self._events is not None else None,
            metrics=self._metrics.frame(case) if self._metrics is not None else None,
            states=states,
        )

    def cases(self) -> Iterator[Case]:
        """Every incident's case, in record order, one at a time."""
        for record in self.records:
            yield self.case(record)
