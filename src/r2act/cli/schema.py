"""``r2act schema export``: write the JSON Schemas of r2act's file formats.

Useful to validate a predictions file or a dataset record with any JSON Schema tool, or to
generate a client in another language.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from r2act.cli.app import app, console
from r2act.errors import DataError

schema_app = typer.Typer(
    name="schema",
    help=(
        "JSON Schemas of r2act's formats (records, predictions, plans, manifests).\n\n"
        "Example: r2act schema export schemas/"
    ),
    no_args_is_help=True,
)
app.add_typer(schema_app, name="schema")


@schema_app.command()
def export(
    directory: Annotated[Path, typer.Argument(help="Directory to write <name>.schema.json into.")],
) -> None:
    """Write benchmark_record, prediction, planned_incident, recovery_plan, manifest and
    action_space schemas, generated from the models, as [bold]DIR/<name>.schema.json[/].

    Example: [bold]r2act schema export schemas/ && ls schemas/[/]
    """
    from r2act.campaigns.json_schemas import export_schemas

    try:
        written = export_schemas(directory)
    except OSError as error:
        raise DataError(
            f"{directory}: cannot write schemas: {error} (pick a writable DIR)"
        ) from None
    for path in written:
        console.print(f"wrote {path}", highlight=False)
