"""What a report is built from: a run (or a dataset) and the files found beside it.

``r2act report RUN`` finds everything a run holds by the layout the other verbs write::

    RUN/dataset/                          the published dataset (records, observations)
    RUN/predictions/NAME.jsonl            one predictions file per method
    RUN/predictions/NAME.trajectories/    an agent's trajectories (ATIF), one per case
    RUN/replay/NAME/replay.jsonl          a replay's verdicts
    RUN/audit/audit.jsonl                 the quality gate's verdicts (excluded incidents)

``r2act report DATASET`` starts from the dataset alone (its audit trail included); more
files come with ``--predictions``, ``--replay`` and ``--trajectories``. Explicit files are
added to what the run holds, never silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from r2act.datasets import layout
from r2act.errors import DataError

REPLAY_FILE = "replay.jsonl"
AUDIT_FILE = Path("audit") / "audit.jsonl"
TRAJECTORIES_SUFFIX = ".trajectories"


@dataclass(frozen=True)
class ReportInputs:
    """Every file a report reads (all paths exist)."""

    dataset: Path
    run: Path | None = None
    predictions: list[Path] = field(default_factory=list)
    replays: list[Path] = field(default_factory=list)
    """Replay directories (each holding ``replay.jsonl``)."""
    trajectories: list[Path] = field(default_factory=list)
    """Trajectory directories (``*.json`` in ATIF)."""
    audit: Path | None = None
    """``RUN/audit/audit.jsonl`` when a run was given; else the dataset's audit trail is used."""


def is_dataset(path: Path) -> bool:
    """A directory that holds a published dataset's records."""
    return (path / layout.INCIDENTS).is_file()


def find_inputs(
    source: Path,
    predictions: list[Path] | None = None,
    replays: list[Path] | None = None,
    trajectories: list[Path] | None = None,
) -> ReportInputs:
    """The inputs of a report on ``source`` (a run or a dataset directory) plus the given files.

    DataError, naming the path and the fix, for a source that is neither, or a given file
    that does not exist.
    """
    if not source.is_dir():
        what = "is not a directory" if source.exists() else "not found"
        raise DataError(f"{source}: {what} (pass a run directory or a dataset directory)")
    run: Path | None = None
    if is_dataset(source):
        dataset = source
    elif is_dataset(source / "dataset"):
        run, dataset = source, source / "dataset"
    else:
        raise DataError(
            f"{source}: neither a run with a dataset nor a dataset (no {layout.INCIDENTS}; "
            f"build one with `r2act dataset build {source}`)"
        )
    found_predictions = sorted((run / "predictions").glob("*.jsonl")) if run else []
    found_replays = (
        sorted(p.parent for p in (run / "replay").glob(f"*/{REPLAY_FILE}")) if run else []
    )
    found_trajectories = (
        sorted(p for p in (run / "predictions").glob(f"*{TRAJECTORIES_SUFFIX}") if p.is_dir())
        if run
        else []
    )
    for path in predictions or []:
        if not path.is_file():
            raise DataError(f"{path}: predictions file not found (--predictions)")
    for path in replays or []:
        if not (path / REPLAY_FILE).is_file() and not (path.is_file() and path.name == REPLAY_FILE):
            raise DataError(f"{path}: no {REPLAY_FILE} here (--replay takes a replay directory)")
    for path in trajectories or []:
        if not path.is_dir():
            raise DataError(f"{path}: trajectory directory not found (--trajectories)")
    audit = run / AUDIT_FILE if run and (run / AUDIT_FILE).is_file() else None
    return ReportInputs(
        dataset=dataset,
        run=run,
        predictions=_unique([*found_predictions, *(predictions or [])]),
        replays=_unique([*found_replays, *(p.parent if p.is_file() else p for p in replays or [])]),
        trajectories=_unique([*found_trajectories, *(trajectories or [])]),
        audit=audit,
    )


def _unique(paths: list[Path]) -> list[Path]:
    seen: set[Path] = set()
    out = []
    for path in paths:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out
