"""The one boundary between a published dataset and what a method may see of its cases.

Everything in :mod:`r2act.agents` reaches a dataset through :class:`CaseSource`, and
:class:`CaseSource` opens only method-visible tables (``cases.parquet`` and the view's
``observations/*.parquet``, all keyed by opaque case ids); it never opens ``answers/``.
A :class:`CaseInputs` holds the case id the prediction carries, the system's topology,
the action space and the observations of the chosen view, nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from r2act.datasets import VIEWS, layout
from r2act.errors import DataError
from r2act.schema import ActionSpace, ClusterState, Topology
from r2act.systems import SYSTEMS

_COLUMNS = {
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
    layout.REQUESTS: [
        "phase",
        "ts",
        "source",
        "service",
        "route",
        "requests_per_s",
        "errors_per_s",
        "error_ratio",
        "latency_p95_ms",
    ],
}


@dataclass(frozen=True)
class CaseInputs:
    """What a method may see of one case (the view decides which tables are present)."""

    case_id: str
    view: str
    topology: Topology
    action_space: ActionSpace
    logs: pd.DataFrame
    events: pd.DataFrame | None = None
    metrics: pd.DataFrame | None = None
    states: dict[str, ClusterState] = field(default_factory=dict)
    requests: pd.DataFrame | None = None
    """Request-level series (frontend log, Locust stats) per step; view 'full' only."""


class CaseSource:
    """The cases of one dataset view, by case id, read from method-visible tables only."""

    def __init__(self, root: Path | str, view: str = "full") -> None:
        self.root = Path(root)
        if view not in VIEWS:
            raise DataError(f"view {view!r}: unknown (use one of {', '.join(VIEWS)})")
        self.view = view
        self._files = VIEWS[view]
        path = self.root / layout.CASES
        try:
            rows = pq.read_table(path, columns=["case_id", "system", "action_space"]).to_pylist()
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise DataError(
                f"{path}: not a readable r2act dataset ({type(exc).__name__}); "
                f"run `r2act dataset validate {self.root}`"
            ) from exc
        self._cases: dict[str, tuple[str, str]] = {
            str(r["case_id"]): (str(r["system"]), str(r["action_space"])) for r in rows
        }

    def ids(self) -> list[str]:
        """Every case id, in the dataset's (case-id) order."""
        return list(self._cases)

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

    def _rows(self, name: str, case_id: str) -> pd.DataFrame:
        try:
            table = pq.read_table(
                self.root / name, columns=_COLUMNS[name], filters=pc.field("case_id") == case_id
            )
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise DataError(
                f"{self.root / name}: unreadable ({type(exc).__name__}); "
                f"run `r2act dataset validate {self.root}`"
            ) from exc
        frame: pd.DataFrame = table.to_pandas()
        return frame

    def inputs(self, case_id: str) -> CaseInputs:
        """The method-visible inputs of one case; KeyError for an unknown id."""
        system, space = self._cases[case_id]
        topology = SYSTEMS.get(system)
        if topology is None:
            raise DataError(f"{self.root / layout.CASES}: {case_id}: unknown system {system!r}")
        states: dict[str, ClusterState] = {}
        if layout.STATE in self._files:
            for phase, raw in self._rows(layout.STATE, case_id).itertuples(index=False):
                states[str(phase)] = ClusterState.model_validate(json.loads(str(raw)))
        return CaseInputs(
            case_id=case_id,
            view=self.view,
            topology=topology,
            action_space=ActionSpace.model_validate_json(space),
            logs=self._rows(layout.LOGS, case_id),
            events=self._rows(layout.EVENTS, case_id) if layout.EVENTS in self._files else None,
            metrics=self._rows(layout.METRICS, case_id) if layout.METRICS in self._files else None,
            states=states,
            requests=self._rows(layout.REQUESTS, case_id)
            if layout.REQUESTS in self._files
            else None,
        )

    def __iter__(self) -> Iterator[CaseInputs]:
        for case_id in self.ids():
            yield self.inputs(case_id)
