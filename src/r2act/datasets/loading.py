"""``r2act.datasets.load``: the method-visible tables of one view; ``load_records``: the answers.

(The module is ``loading``, not ``load``, so the package can hand out ``load`` on first use.)

A method gets exactly the modalities of its view (the paper's ablation), keyed by opaque
case ids, and never anything under ``answers/``: reading ground truth takes the deliberate
call ``load_records`` (scorers, replay, supervised training on labelled folds).

Memory: low-cardinality columns (keys, pod, service, query, ...) are read as pandas
categoricals and free text as Arrow-backed strings, converted one row group (case) at a
time, so the paper-scale ``full`` view peaks near the size of its text (``bench/load.py``
measures it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from r2act.datasets import layout
from r2act.datasets.folds import Folds
from r2act.datasets.tables import read_records
from r2act.errors import DataError
from r2act.schema import BenchmarkRecord

if TYPE_CHECKING:  # pandas costs ~0.2 CPU s to import: only a reader of tables pays it
    import pandas as pd


@dataclass
class Dataset:
    """One view of a published dataset: what a method may read, keyed by case id."""

    root: Path
    view: str
    cases: pd.DataFrame
    logs: pd.DataFrame
    events: pd.DataFrame | None = None
    metrics: pd.DataFrame | None = None
    state: pd.DataFrame | None = None
    requests: pd.DataFrame | None = None
    """Derived request series (``full`` view; see ``r2act.datasets.requests``)."""
    traces: pd.DataFrame | None = None
    """Spans, one row per span (``full+traces`` view)."""
    folds: list[list[str]] = field(default_factory=list)


def read_table(root: Path | str, name: str, cases: list[str] | None = None) -> pd.DataFrame:
    """One method-visible table as a DataFrame, optionally only the rows of ``cases``.

    Low-cardinality columns come back as categoricals; text is pandas' Arrow-backed ``str``.
    A whole table is converted row group by row group (one per case), so the peak is the
    result plus one case rather than the result plus a full Arrow copy of it."""
    import pandas as pd
    from pandas.api.types import union_categoricals

    path = Path(root) / name
    categorical = list(layout.CATEGORICAL.get(name, ()))
    if cases is not None:
        wanted = pc.field("case_id").isin(pa.array(cases, pa.string()))
        table = pq.read_table(path, filters=wanted, read_dictionary=categorical)
        frame: pd.DataFrame = table.to_pandas()
        return frame
    file = pq.ParquetFile(path, read_dictionary=categorical, pre_buffer=False)
    if file.num_row_groups <= 1:
        whole: pd.DataFrame = file.read().to_pandas()
        return whole
    parts = [
        file.read_row_group(i).to_pandas(self_destruct=True) for i in range(file.num_row_groups)
    ]
    for column in categorical:  # one set of categories, so concat keeps them categorical
        union = union_categoricals([part[column] for part in parts]).categories
        for part in parts:
            part[column] = part[column].cat.set_categories(union)
    joined: pd.DataFrame = pd.concat(parts, ignore_index=True)
    return joined


def load_records(root: Path | str) -> list[BenchmarkRecord]:
    """The answers: every typed record (labels, gold, plan sets, case id), in incident-id order.

    Cheap (no observations): for scoring, replay and training on labelled folds. Never
    hand these to a method under test.
    """
    path = Path(root) / layout.INCIDENTS
    try:
        return read_records(path)
    except (OSError, ValueError, pa.ArrowException) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise DataError(
            f"{path}: unreadable records: {first} (run `r2act dataset validate`)"
        ) from exc


def _case_ids(root: Path, wanted: list[str]) -> list[str]:
    """The case ids of ``wanted`` (case or incident ids); DataError naming unknown ones."""
    path = root / layout.INCIDENTS
    try:
        table = pq.read_table(path, columns=["case_id", "incident_id"])
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise DataError(f"{path}: unreadable ({exc}); run `r2act dataset validate`") from exc
    known: dict[str, str] = {}
    for case, incident in zip(
        table.column("case_id").to_pylist(), table.column("incident_id").to_pylist(), strict=True
    ):
        known[case] = known[incident] = case
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        raise DataError(
            f"{root}: {len(unknown)} id(s) not in the dataset: "
            f"{', '.join(unknown[:3])}{', ...' if len(unknown) > 3 else ''}"
        )
    return sorted({known[w] for w in wanted})


def load(root: Path | str, view: str = "full", incidents: list[str] | None = None) -> Dataset:
    """The method-visible tables of ``view`` ('logs', 'logs+events', 'full' or
    'full+traces', the last only on a dataset that holds traces).

    Without ``incidents`` every row of the view is read into memory at once (the
    paper-scale ``full`` view takes a few GiB). ``incidents`` restricts every table to those
    cases (case ids or incident ids; filtered while reading, so a few cases of a large
    dataset load quickly); an id the dataset does not have is a DataError. For a pass over
    every case with one case's observations in memory, use
    ``r2act.baselines.DatasetReader(root, view).cases()``.
    """
    root = Path(root)
    if view not in layout.VIEWS:
        raise DataError(f"view {view!r}: unknown (use one of {', '.join(layout.VIEWS)})")
    try:
        folds = Folds.model_validate_json((root / layout.FOLDS).read_bytes()).folds
    except (OSError, ValueError) as exc:
        raise DataError(
            f"{root}: not a readable r2act dataset ({exc}); run `r2act dataset validate`"
        ) from exc
    cases = None if incidents is None else _case_ids(root, incidents)
    files = layout.VIEWS[view]
    layout.require_view(root, view)
    try:
        return Dataset(
            root=root,
            view=view,
            cases=read_table(root, layout.CASES, cases),
            logs=read_table(root, layout.LOGS, cases),
            events=read_table(root, layout.EVENTS, cases) if layout.EVENTS in files else None,
            metrics=read_table(root, layout.METRICS, cases) if layout.METRICS in files else None,
            state=read_table(root, layout.STATE, cases) if layout.STATE in files else None,
            requests=(
                read_table(root, layout.REQUESTS, cases) if layout.REQUESTS in files else None
            ),
            traces=read_table(root, layout.TRACES, cases) if layout.TRACES in files else None,
            folds=folds,
        )
    except (OSError, pa.ArrowException) as exc:
        raise DataError(
            f"{root}: unreadable tables ({type(exc).__name__}: {exc}); "
            f"run `r2act dataset validate {root}`"
        ) from exc


def key(root: Path | str) -> dict[str, str]:
    """``answers/key.json``: the salt and how case ids are derived from it."""
    path = Path(root) / layout.KEY
    try:
        document = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: unreadable ({exc}); run `r2act dataset validate`") from exc
    if not isinstance(document, dict) or not isinstance(document.get("salt"), str):
        raise DataError(f"{path}: no salt (run `r2act dataset validate`)")
    return {str(k): str(v) for k, v in document.items()}
