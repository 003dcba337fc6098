"""``r2act dataset build [RUN_DIR] [--out DIR]`` and ``r2act dataset validate DIR``.

Thin: resolve the run, call ``r2act.datasets``, print. ``validate`` prints every problem
and exits 2 when there is any, so it can gate a publication step in CI.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import typer

from r2act.cli.app import app, console

dataset_app = typer.Typer(
    name="dataset",
    help=(
        "Publish an audited run as a dataset, and check a published one.\n\n"
        "Example: [bold]r2act dataset build && r2act dataset validate r2act-runs/smoke/dataset[/]"
    ),
    no_args_is_help=True,
)
app.add_typer(dataset_app, name="dataset")

_RUN = typer.Argument(
    None,
    help="Run directory, or several to pool into one dataset (e.g. one per system; default: "
    "the newest ./r2act-runs/<campaign>/).",
)
_OUT = typer.Option(
    None, "--out", help="Dataset directory (default: RUN/dataset; required for several runs)."
)
_SEED = typer.Option(0, "--folds-seed", help="Seed of the stratified folds.")
_DIR = typer.Argument(..., help="Dataset directory to check.")
_QUIET = typer.Option(False, "--quiet", "-q", help="No progress bar (for CI).")


@dataset_app.command()
def build(
    run_dir: list[Path] | None = _RUN,
    out: Path | None = _OUT,
    folds_seed: int = _SEED,
    quiet: bool = _QUIET,
) -> None:
    """Build the publishable dataset from [bold]RUN/audit[/] and the raw observations.

    Several runs (say, one campaign per system) are pooled into one dataset with one set of
    case ids, folds and checksums; [bold]r2act evaluate[/] then scores it per system too.

    Example: [bold]r2act audit && r2act dataset build --out dist/r2act-302[/]

    [bold]r2act dataset build runs/ob runs/astro --out dist/two-systems[/]
    """
    from r2act.cli._counting import counting
    from r2act.datasets import build_dataset
    from r2act.quality_gate import Group, read_verdicts, resolve_run_dir

    if run_dir:
        runs = [resolve_run_dir(r, needs="audit")[0] for r in run_dir]
    else:
        run, _ = resolve_run_dir(None, needs="audit")
        console.print(f"building from the most recent audited run: {run}", highlight=False)
        runs = [run]
    main = sum(v.group == Group.MAIN for r in runs for v in read_verdicts(r))
    with counting(console, "build", main, quiet=quiet) as advance:
        result = build_dataset(
            runs[0] if len(runs) == 1 else runs, out, folds_seed=folds_seed, progress=advance
        )
    comp = result.composition
    console.print(
        f"{comp.incidents} main incidents, {len(comp.cells)} cells, "
        f"{comp.log_records.total:,} log records; {result.trail} in the audit trail",
        highlight=False,
    )
    console.print(
        f"dataset: {result.out}  (check it: "
        f"{shlex.join(['r2act', 'dataset', 'validate', str(result.out)])})",
        highlight=False,
    )


@dataset_app.command(name="validate")
def validate_command(
    directory: Path = _DIR,
) -> None:
    """Check checksums, record schemas, ids, observations, folds, card and Croissant.

    Prints every problem; exits 2 if there is any.

    Example: [bold]r2act dataset validate r2act-runs/smoke/dataset[/]
    """
    from r2act.datasets import validate

    problems = validate(directory)
    for problem in problems:
        console.print(f"[red]{problem.line()}[/]", highlight=False, soft_wrap=True)
    if problems:
        console.print(f"{len(problems)} problem(s) in {directory}", highlight=False)
        raise typer.Exit(2)
    console.print(f"{directory}: valid", highlight=False)
