"""``r2act dataset export DIR --format rcaeval|hf-public --out OUT``: another copy of a dataset.

Registered on the ``dataset`` group from its own module so the dataset verbs stay as they
are; the work is in :mod:`r2act.datasets.rcaeval` (RCAEval's layout, labels in the paths)
and :mod:`r2act.datasets.public` (the copy to publish, answers held back).
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
    HF_PUBLIC = "hf-public"


@dataset_app.command()
def export(
    directory: Annotated[Path, typer.Argument(help="Dataset directory to export.")],
    out: Annotated[Path, typer.Option("--out", help="New directory to write.")],
    format_: Annotated[Format, typer.Option("--format", help="Target layout.")] = Format.RCAEVAL,
) -> None:
    """Write a copy of a dataset for another tool or for publishing.

    [bold]rcaeval[/]: RCAEval's layout (SERVICE_FAULT/INTENSITY-REP/data.csv), labels in the
    paths, for RCAEval's methods. [bold]hf-public[/]: every method-visible file, none of
    answers/, card, Croissant and SHA256SUMS rewritten: what to upload to the Hugging Face
    Hub with the answers held back.

    Example: [bold]r2act dataset export r2act-runs/smoke/dataset --out re-r2act[/]

    Example: [bold]r2act dataset export r2act-runs/smoke/dataset --format hf-public --out pub[/]
    """
    if format_ is Format.HF_PUBLIC:
        from r2act.datasets.public import export_public

        public = export_public(directory, out)
        console.print(
            f"public copy: {public.files} file(s), {public.held_back} answer file(s) held "
            f"back: {public.out} (upload it: README, 'Publishing a dataset')",
            highlight=False,
        )
        return
    from r2act.datasets.rcaeval import export_rcaeval

    summary = export_rcaeval(directory, out)
    console.print(
        f"{summary.cases} case(s) in {format_.value} layout, up to {summary.columns} metric "
        f"columns each: {summary.out} (index: {summary.out / 'cases.csv'})",
        highlight=False,
    )
