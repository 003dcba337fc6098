"""``r2act.datasets.load``: typed records plus pandas DataFrames of one view.

A method gets exactly the modalities of its view (the paper's ablation) and never the
provenance files, so reading ground truth by accident takes a deliberate detour.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from r2act.datasets import layout
from r2act.datasets.folds import Folds
from r2act.errors import DataError
from r2act.schema import BenchmarkRecord


@dataclass
class Dataset:
    """One view of a published dataset."""

    root: Path
    view: str
    records: list[BenchmarkRecord]
    logs: pd.DataFrame
    events: pd.DataFrame | None = None
    metrics: pd.DataFrame | None = None
    state: pd.DataFrame | None = None
    folds: list[list[str]] = field(default_factory=list)

    def record(self, incident_id: str) -> BenchmarkRecord:
        """The record with ``incident_id``; KeyError when absent."""
        for record in self.records:
            if record.incident_id == incident_id:
                return record
        raise KeyError(incident_id)


def _table(root: Path, name: str, ids: list[str] | None) -> pd.DataFrame:
    wanted = None if ids is None else pc.field("incident_id").isin(pa.array(ids, pa.string()))
    frame: pd.DataFrame = pq.read_table(root / name, filters=wanted).to_pandas()
    return frame


def _state(root: Path, ids: set[str] | None) -> pd.DataFrame:
    rows = []
    for line in (root / layout.STATE).read_text("utf-8").splitlines():
        row = json.loads(line)
        if ids is None or row["incident_id"] in ids:
            rows.append(
                {"incident_id": row["incident_id"], "phase": row["phase"], "state": row["data"]}
            )
    return pd.DataFrame(rows, columns=["incident_id", "phase", "state"])


def load_records(root: Path | str) -> list[BenchmarkRecord]:
    """Only the typed records of a dataset (no observations): cheap, for scoring and replay."""
    path = Path(root) / layout.INCIDENTS
    try:
        lines = path.read_text("utf-8").splitlines()
        return [BenchmarkRecord.model_validate_json(line) for line in lines if line]
    except (OSError, ValueError) as exc:
        first = str(exc).splitlines()[0]
        raise DataError(
            f"{path}: unreadable records: {first} (run `r2act dataset validate`)"
        ) from exc


def load(root: Path | str, view: str = "full", incidents: list[str] | None = None) -> Dataset:
    """Records and the observations of ``view`` ('logs', 'logs+events' or 'full').

    Every view includes the logs, and without ``incidents`` all of them are read into
    memory at once: a paper-scale dataset (about 11 million log lines) needs about 6 GiB.
    ``incidents`` restricts everything to those ids (observations are filtered while
    reading, so a few incidents of a large dataset load quickly); an id the dataset does
    not have is a DataError. For a pass over every incident with one incident's
    observations in memory, use ``r2act.baselines.DatasetReader(root, view).cases()``.
    """
    root = Path(root)
    if view not in layout.VIEWS:
        raise DataError(f"view {view!r}: unknown (use one of {', '.join(layout.VIEWS)})")
    records = load_records(root)
    try:
        folds = Folds.model_validate_json((root / layout.FOLDS).read_bytes()).folds
    except (OSError, ValueError) as exc:
        raise DataError(
            f"{root}: not a readable r2act dataset ({exc}); run `r2act dataset validate`"
        ) from exc
    wanted = set(incidents) if incidents is not None else None
    if wanted is not None:
        unknown = sorted(wanted - {r.incident_id for r in records})
        if unknown:
            raise DataError(
                f"{root}: {len(unknown)} incident id(s) not in the dataset: "
                f"{', '.join(unknown[:3])}{', ...' if len(unknown) > 3 else ''}"
            )
        records = [r for r in records if r.incident_id in wanted]
    ids = sorted(wanted) if wanted is not None else None
    files = layout.VIEWS[view]
    return Dataset(
        root=root,
        view=view,
        records=records,
        logs=_table(root, layout.LOGS, ids),
        events=_table(root, layout.EVENTS, ids) if layout.EVENTS in files else None,
        metrics=_table(root, layout.METRICS, ids) if layout.METRICS in files else None,
        state=_state(root, wanted) if layout.STATE in files else None,
        folds=folds,
    )
