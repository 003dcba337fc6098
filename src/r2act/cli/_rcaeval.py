"""``r2act baseline rcaeval``: export, run RCAEval's method in its interpreter, map, report.

The export is written once per dataset (``RUN/rcaeval/export``, without ``logs.csv``, which
no metric method reads; stamped with the digest of the dataset's ``SHA256SUMS``) and reused
by every method while the stamp matches; the driver's raw ranks stay in
``RUN/rcaeval/<method>/`` beside it. The predictions file is an
ordinary one (``RUN/predictions/rcaeval-<method>.jsonl``), scored by ``r2act evaluate``;
the AC@k table printed at the end is what ``evaluate --mapper`` reports from the same file.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
from pathlib import Path

from rich.table import Table

from r2act.cli._datasets import dataset_dir
from r2act.cli.app import console
from r2act.errors import DataError

_STAMP = "r2act-export.json"


def _digest(dataset: Path) -> str:
    sums = dataset / "SHA256SUMS"
    if not sums.is_file():
        raise DataError(
            f"{dataset}: no SHA256SUMS (is it a dataset? build one: r2act dataset build)"
        )
    return hashlib.sha256(sums.read_bytes()).hexdigest()


def ensure_export(dataset: Path, export: Path) -> Path:
    """An RCAEval export of ``dataset`` at ``export``: reused when its stamp matches."""
    from r2act.datasets.rcaeval import export_rcaeval

    digest = _digest(dataset)
    stamp = export / _STAMP
    if stamp.is_file():
        with_stamp = json.loads(stamp.read_text(encoding="utf-8"))
        if with_stamp.get("dataset_sha256sums") == digest:
            console.print(f"RCAEval export: {export} (reused)", highlight=False)
            return export
        shutil.rmtree(export)  # ours (stamped), of another build of the dataset
    elif export.exists() and any(export.iterdir()):
        raise DataError(f"--export {export}: exists, is not empty and is no r2act export")
    summary = export_rcaeval(dataset, export, logs=False)  # metric methods read no logs
    stamp.write_text(json.dumps({"dataset_sha256sums": digest}) + "\n", encoding="utf-8")
    console.print(
        f"RCAEval export: {summary.cases} case(s), up to {summary.columns} series: {export}",
        highlight=False,
    )
    return export


def run_rcaeval(
    dataset: Path | None,
    out: Path | None,
    method: str | None,
    python: Path | None,
    export: Path | None,
    *,
    seed: int = 0,
    quiet: bool = False,
) -> None:
    """The whole ``baseline rcaeval`` verb."""
    from r2act.baselines import DatasetReader
    from r2act.baselines.rcaeval import (
        MAPPING,
        accuracy_at,
        check_python,
        predictions,
        run_driver,
        write_predictions,
    )
    from r2act.cli._counting import counting

    if not method:
        raise DataError("baseline rcaeval: give --method (one of RCAEval's, e.g. baro)")
    if python is None:
        raise DataError(
            "baseline rcaeval: give --python PATH (an RCAEval environment's interpreter; "
            "docs/rcaeval.md builds one)"
        )
    if not method.replace("_", "").isalnum():
        raise DataError(f"--method {method!r}: not a method name (letters, digits and _)")
    directory = dataset_dir(dataset)
    python = python.expanduser()
    check_python(python)
    workspace = directory.parent / "rcaeval"
    where = ensure_export(directory, export or workspace / "export")
    reader = DatasetReader(directory, "full")
    name = f"rcaeval-{method}"
    with counting(console, name, len(reader.records), quiet=quiet) as advance:
        run = run_driver(python, where, method, workspace / method, seed=seed, progress=advance)
    lines = predictions(reader, run, name)
    target = out if out is not None else directory.parent / "predictions" / f"{name}.jsonl"
    write_predictions(lines, target)
    table = Table(title=f"{name}: AC@k of the ranked series ({MAPPING} mapping)")
    for column in ("fault type", "n", "AC@1 svc", "AC@3 svc", "AC@1 svc+type", "AC@3 svc+type"):
        table.add_column(column, justify="left" if column == "fault type" else "right")
    for stratum, acc in accuracy_at(lines, reader.records).items():
        table.add_row(
            stratum,
            str(acc.n),
            f"{acc.service[1]:.3f}",
            f"{acc.service[3]:.3f}",
            f"{acc.pair[1]:.3f}",
            f"{acc.pair[3]:.3f}",
        )
    console.print(table)
    if run.failed:
        first = next(iter(run.failed.items()))
        console.print(
            f"[yellow]RCAEval {method} failed on {len(run.failed)} of {len(lines)} case(s)[/] "
            f"(they abstain); first: {first[0]}: {first[1]}",
            highlight=False,
        )
    console.print(
        f"{len(lines)} predictions by {name} in {run.seconds:.1f} s: {target}  (score it: "
        f"{shlex.join(['r2act', 'evaluate', str(target), '--dataset', str(directory)])})",
        highlight=False,
    )
