"""Run one baseline over a dataset and write its predictions file.

The file is JSON Lines, one :class:`~r2act.schema.Prediction` per incident in record
order, written to a temporary sibling and renamed at the end, so an interrupted run never
leaves a half file that ``r2act evaluate`` would score as misses. A baseline that skips or
repeats an incident is a bug, not a prediction, so the run checks one line per incident.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from r2act.baselines.base import RunContext
from r2act.baselines.reader import DatasetReader
from r2act.baselines.registry import get_baseline
from r2act.datasets import ids
from r2act.errors import DataError, R2actError


@dataclass(frozen=True)
class RunSummary:
    """What a run wrote."""

    name: str
    out: Path
    predictions: int
    seconds: float


def run_baseline(
    name: str,
    dataset: Path,
    out: Path,
    *,
    view: str = "full",
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> RunSummary:
    """Predict every incident of ``dataset`` with baseline ``name`` into ``out``.

    ``progress`` is called with each incident id as its prediction is written.
    """
    baseline = get_baseline(name)
    started = time.perf_counter()
    reader = DatasetReader(dataset, view)
    method = name if view == "full" else f"{name}[{view}]"
    expected = [r.incident_id for r in reader.records]
    known = ids.aliases(reader.records)  # a baseline may key by case id or incident id
    if out.is_dir():
        raise DataError(f"{out}: is a directory (pass a .jsonl file as --out)")
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    written: list[str] = []
    try:
        with _writing(out):
            out.parent.mkdir(parents=True, exist_ok=True)
            handle = tmp.open("w", encoding="utf-8", newline="\n")
        with handle:
            for prediction in baseline.predict(RunContext(reader, seed, method)):
                handle.write(prediction.model_dump_json() + "\n")
                written.append(ids.resolve(prediction.incident_id, known))
                if progress is not None:
                    progress(prediction.incident_id)
        if written != expected:
            raise R2actError(
                f"baseline {name} wrote {len(written)} predictions for {len(expected)} "
                "incidents (or out of order); this is a bug in the baseline"
            )
        with _writing(out):
            os.replace(tmp, out)
    finally:
        with suppress(OSError):  # also when its directory could not be made
            tmp.unlink(missing_ok=True)
    return RunSummary(name, out, len(written), time.perf_counter() - started)


@contextmanager
def _writing(out: Path) -> Iterator[None]:
    """Turn an OSError while creating ``out`` into one DataError line naming it."""
    try:
        yield
    except OSError as error:
        raise DataError(
            f"{out}: cannot write the predictions ({error.strerror or error}); choose another --out"
        ) from None
