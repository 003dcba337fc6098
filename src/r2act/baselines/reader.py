"""A published dataset for baselines: its records, its folds and its cases one at a time.

A baseline needs two things a method-visible view does not give: the records (the answers,
which supervised baselines train on out of fold and the gold control reads) and the folds.
Its observations it reads like any other method, through the one reader of case tables
(:class:`r2act.datasets.cases.CaseReader`), one case at a time, so a paper-scale dataset
never sits in memory and a baseline sees exactly what an agent sees of the same view.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pyarrow import ArrowException

from r2act.datasets import layout
from r2act.datasets.cases import Case, CaseReader
from r2act.datasets.folds import Folds, key_of
from r2act.datasets.tables import read_records
from r2act.errors import DataError
from r2act.schema import BenchmarkRecord, Topology
from r2act.systems import SYSTEMS

__all__ = ["Case", "DatasetReader"]


class DatasetReader:
    """Records, folds and per-incident observations of one view of a dataset."""

    def __init__(self, root: Path | str, view: str = "full") -> None:
        self.root = Path(root)
        self._cases = CaseReader(self.root, view)
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

    def topology(self, record: BenchmarkRecord) -> Topology:
        """The topology of the record's system; DataError for an unknown system."""
        topology = SYSTEMS.get(record.metadata.system)
        if topology is None:
            raise DataError(
                f"{self.root / layout.INCIDENTS}: {record.incident_id}: unknown system "
                f"{record.metadata.system!r} (known: {', '.join(SYSTEMS)})"
            )
        return topology

    def case(self, record: BenchmarkRecord) -> Case:
        """The method-visible observations of one incident."""
        case_id = key_of(record)
        if case_id not in self._cases:
            raise DataError(
                f"{self.root / layout.CASES}: no row for case {case_id} of the answers; "
                f"run `r2act dataset validate {self.root}`"
            )
        return self._cases.case(case_id)

    def cases(self) -> Iterator[Case]:
        """Every incident's case, in record order, one at a time."""
        for record in self.records:
            yield self.case(record)
