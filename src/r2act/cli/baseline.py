"""``r2act baseline NAME``: run a baseline over a dataset and write its predictions file.

Thin: resolve the dataset and output path, call :func:`r2act.baselines.run_baseline`,
print where the file went and how to score it. ``--list`` prints the registered names.
``r2act baseline rcaeval --method M --python PATH`` runs one of RCAEval's methods in that
interpreter instead (:mod:`r2act.cli._rcaeval`).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import typer

from r2act.cli._choices import BASELINE_NAMES, VIEW_NAMES
from r2act.cli._datasets import dataset_dir
from r2act.cli.app import app, console
from r2act.errors import DataError

_NAME = typer.Argument(
    None, help=f"Baseline to run: {', '.join(BASELINE_NAMES)}, or rcaeval (with --method)."
)
_DATASET = typer.Option(
    None, "--dataset", help="Dataset directory (default: the newest ./r2act-runs/*/dataset)."
)
_OUT = typer.Option(
    None, "--out", help="Predictions file (default: DATASET/../predictions/NAME.jsonl)."
)
_VIEW = typer.Option("full", "--view", help=f"Observation view: {' | '.join(VIEW_NAMES)}.")
_SEED = typer.Option(0, "--seed", help="Seed of randomised baselines.")
_LIST = typer.Option(False, "--list", help="List the baselines and exit.")
_QUIET = typer.Option(False, "--quiet", "-q", help="No progress bar (for CI).")
_METHOD = typer.Option(
    None, "--method", help="rcaeval only: RCAEval's method (baro, nsigma, pc_randomwalk, ...)."
)
_PYTHON = typer.Option(
    None, "--python", help="rcaeval only: the interpreter of an RCAEval environment."
)
_EXPORT = typer.Option(
    None,
    "--export",
    help="rcaeval only: where the RCAEval export goes (default: DATASET/../rcaeval/export; "
    "reused while it matches the dataset).",
)


@app.command()
def baseline(  # noqa: PLR0917 - typer maps parameters to options
    name: str | None = _NAME,
    dataset: Path | None = _DATASET,
    out: Path | None = _OUT,
    view: str = _VIEW,
    seed: int = _SEED,
    list_: bool = _LIST,
    quiet: bool = _QUIET,
    method: str | None = _METHOD,
    python: Path | None = _PYTHON,
    export: Path | None = _EXPORT,
) -> None:
    """Run a baseline and write one prediction per incident (JSON Lines).

    RCA-only baselines go through the fixed RCA-to-action mapper, as in the paper.
    [bold]rcaeval[/] runs one of RCAEval's methods, unchanged, in its own environment
    (docs/rcaeval.md) and maps the series it ranks to fault types.

    Example: [bold]r2act baseline rule --dataset r2act-runs/smoke/dataset[/]

    Example: [bold]r2act baseline rcaeval --method baro --python ~/rcaeval-env/bin/python[/]
    """
    from r2act.baselines import BASELINES, run_baseline
    from r2act.baselines.registry import get_baseline
    from r2act.cli._counting import counting
    from r2act.datasets import VIEWS, load_records

    if list_ or name is None:
        for item in BASELINES.values():
            console.print(
                f"[bold]{item.name:<12}[/] {item.summary}", highlight=False, soft_wrap=True
            )
        console.print(
            f"[bold]{'rcaeval':<12}[/] An RCAEval method (--method) run in its own "
            "environment (--python); docs/rcaeval.md.",
            highlight=False,
            soft_wrap=True,
        )
        if name is None and not list_:
            raise DataError("baseline: give a NAME (one of the above)")
        return
    if name == "rcaeval":
        from r2act.cli._rcaeval import run_rcaeval

        run_rcaeval(dataset, out, method, python, export, seed=seed, quiet=quiet)
        return
    if method is not None or python is not None or export is not None:
        raise DataError(f"baseline {name}: --method, --python and --export are for rcaeval only")
    get_baseline(name)  # an unknown name or view fails before any dataset is looked for
    if view not in VIEWS:
        raise DataError(f"view {view!r}: unknown (use one of {', '.join(VIEWS)})")
    directory = dataset_dir(dataset)
    target = out if out is not None else directory.parent / "predictions" / f"{name}.jsonl"
    total = len(load_records(directory))
    with counting(console, name, total, quiet=quiet) as advance:
        summary = run_baseline(name, directory, target, view=view, seed=seed, progress=advance)
    console.print(
        f"{summary.predictions} predictions by {summary.name} ({view} view) in "
        f"{summary.seconds:.1f} s: {summary.out}  (score it: "
        f"{shlex.join(['r2act', 'evaluate', str(summary.out), '--dataset', str(directory)])})",
        highlight=False,
    )
