"""``r2act merge``: combine the raw stores of shard runs into one run.

Thin: the checks and the copying live in ``r2act.collector.merge``. The merged run is an
ordinary run directory: ``r2act audit`` and ``r2act dataset build`` read it like any other.
"""

from __future__ import annotations

from pathlib import Path

import typer

from r2act.cli.app import app, console

_RUNS = typer.Argument(..., help="Run directories to merge (shards of one campaign).")
_OUT = typer.Option(..., "--out", help="New run directory to create (must not exist or be empty).")


@app.command()
def merge(runs: list[Path] = _RUNS, out: Path = _OUT) -> None:
    """Merge the complete incidents of several runs (e.g. [bold]collect --shard[/]) into one run.

    Refuses, before writing anything, runs of different campaigns, a shard given twice, an
    incident complete in two runs, and any file whose bytes differ from the SHA-256 written at
    collection or that is a symbolic link (exit 2, naming the first such file). Incomplete
    incidents are left out and listed. Exit code 0 when every shard's quota incidents are all
    there (spares are collected only for cells short of clean incidents), 1 when some are
    missing, 2 on bad input.

    Example: [bold]r2act merge runs/shard-1 runs/shard-2 runs/shard-3 --out runs/all[/]
    """
    from r2act.collector.merge import merge_runs

    summary = merge_runs(runs, out)
    linked = f", {summary.linked} files hard-linked" if summary.linked else ""
    console.print(
        f"merged {summary.incidents} complete incidents from {len(runs)} runs into {out}{linked}",
        highlight=False,
    )
    for run, partial in summary.skipped_partial.items():
        console.print(
            f"[yellow]left out[/] {len(partial)} incomplete incidents of {run} "
            f"(resume that run, then merge again): {', '.join(partial[:5])}"
            f"{' ...' if len(partial) > 5 else ''}",
            highlight=False,
        )
    if summary.missing_shards:
        console.print(
            f"[yellow]missing shards[/]: {', '.join(summary.missing_shards)}", highlight=False
        )
    if summary.spares_absent:
        console.print(
            f"{summary.spares_absent} spares are in no run: their cells were full, or their "
            "shard is unfinished (`r2act audit` lists any cell below its quota)",
            highlight=False,
        )
    if summary.missing:
        console.print(
            f"[yellow]{len(summary.missing)} planned incidents are in no run[/] "
            f"(first: {summary.missing[0]})",
            highlight=False,
        )
        raise typer.Exit(1)


__all__ = ["merge"]
