"""Which dataset a scoring or replay verb means: ``--dataset DIR``, the dataset of the run the
predictions file sits in (``RUN/predictions/x.jsonl`` -> ``RUN/dataset``), else the newest one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from r2act.cli.app import console_err
from r2act.errors import DataError

RUNS_DIR = Path("r2act-runs")


def dataset_dir(given: Path | None, predictions: Sequence[Path] = ()) -> Path:
    """``given`` if it is a directory; else the run's own dataset or the newest one (said).

    A predictions file written by ``r2act baseline`` lives in ``RUN/predictions/``; scoring
    it against another run's dataset would match only the ids the two campaigns share. So
    when every file sits in the same ``RUN/predictions/`` and ``RUN/dataset`` exists, that
    is the default; otherwise the newest ``./r2act-runs/*/dataset``. DataError, naming
    ``--dataset`` as the fix, when there is none.
    """
    if given is not None:
        if not given.is_dir():
            what = "is not a directory" if given.exists() else "not found"
            raise DataError(f"{given}: dataset directory {what} (pass --dataset DIR)")
        return given
    own = {p.parent.parent / "dataset" for p in predictions if p.parent.name == "predictions"}
    if len(own) == 1 and len(predictions) > 0:
        (candidate,) = own
        if candidate.is_dir() and all(p.parent.name == "predictions" for p in predictions):
            console_err.print(f"using dataset {candidate}", highlight=False)
            return candidate
    found = [p for p in RUNS_DIR.glob("*/dataset") if p.is_dir()]
    if not found:
        raise DataError(
            f"{RUNS_DIR}/*/dataset: no dataset found here (pass --dataset DIR, or build one: "
            "r2act audit, then r2act dataset build)"
        )
    latest = max(found, key=lambda p: p.stat().st_mtime)
    console_err.print(f"using dataset {latest}", highlight=False)
    return latest
