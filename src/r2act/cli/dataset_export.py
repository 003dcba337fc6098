"""``r2act dataset export DIR --format rcaeval --out OUT``: a dataset in another tool's layout.

Registered on the ``dataset`` group from its own module so the dataset verbs stay as they
are; the work is in :mod:`r2act.datasets.rcaeval`.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from r2act.cli.app import console
from r2act.cli.dataset import dataset_app


class Format(StrEnum):
    """Export formats."""

    RCAEVAL = "rcaeval"


@dataset_app.command()
def export(
    directory: Annotated[Path, typer.Argument(help="Dataset directory to export.")],
    out: Annotated[Path, typer.Option("--out", help="New directory to write.")],
    format_: Annotated[Format, typer.Option("--format", help="Target layout.")] = Format.RCAEVAL,
) -> None:
    """Write a dataset in RCAEval's layout (SERVICE_FAULT/INTENSITY-REP/data.csv) for its methods.

    Example: [bold]r2act dataset export r2act-runs/smoke/dataset --out re-r2act[/]
    """
    from r2act.agents.cases import CaseSource
    from r2act.datasets.rcaeval import export_rcaeval

    summary = export_rcaeval(directory, out, CaseSource(directory, "full"))
    console.print(
        f"{summary.cases} case(s) in {format_.value} layout, up to {summary.columns} metric "
        f"columns each: {summary.out} (index: {summary.out / 'cases.csv'})",
        highlight=False,
    )
