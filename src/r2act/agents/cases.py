"""The one boundary between a published dataset and what a method may see of its cases.

Everything in :mod:`r2act.agents` reaches a dataset through :class:`CaseSource`, so how a
dataset names its cases (today's incident ids; opaque case ids with an answers table once
the dataset stage has them) is decided here and nowhere else. A :class:`CaseInputs` holds
only method-visible things: the case id the prediction carries, the system's topology, the
action space and the observations of the chosen view. Records (labels, gold, fault) stay
behind this boundary.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from r2act.baselines.reader import DatasetReader
from r2act.errors import DataError
from r2act.schema import ActionSpace, BenchmarkRecord, ClusterState, Topology


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


class CaseSource:
    """The cases of one dataset view, by the id a prediction line carries."""

    def __init__(self, root: Path | str, view: str = "full") -> None:
        self.root = Path(root)
        self.view = view
        self._reader = DatasetReader(self.root, view)
        self._records: dict[str, BenchmarkRecord] = {
            self._case_id(r): r for r in self._reader.records
        }

    @staticmethod
    def _case_id(record: BenchmarkRecord) -> str:
        return record.incident_id

    def ids(self) -> list[str]:
        """Every case id, in the dataset's order."""
        return list(self._records)

    def select(self, only: list[str] | None) -> list[str]:
        """``only`` checked against the dataset (DataError naming unknown ids), else all."""
        if not only:
            return self.ids()
        unknown = [c for c in only if c not in self._records]
        if unknown:
            raise DataError(
                f"{self.root}: unknown case id(s) {', '.join(unknown[:3])} "
                f"(list them with `r2act agent cases {self.root}`)"
            )
        return [c for c in self.ids() if c in set(only)]

    def inputs(self, case_id: str) -> CaseInputs:
        """The method-visible inputs of one case; KeyError for an unknown id."""
        record = self._records[case_id]
        case = self._reader.case(record)
        return CaseInputs(
            case_id=case_id,
            view=self.view,
            topology=case.topology,
            action_space=case.action_space,
            logs=case.logs,
            events=case.events,
            metrics=case.metrics,
            states=dict(case.states),
        )

    def __iter__(self) -> Iterator[CaseInputs]:
        for case_id in self.ids():
            yield self.inputs(case_id)
