"""``r2act systems list``: the installed systems, their pinned versions and fault families.

A campaign manifest names one of these (``system: <name>``); ``docs/systems.md`` says how to
add another.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from r2act.cli.app import app, console, table_console

systems_app = typer.Typer(
    name="systems",
    help=(
        "The systems under test r2act can benchmark (one package each in r2act.systems).\n\n"
        "Example: r2act systems list"
    ),
    no_args_is_help=True,
)
app.add_typer(systems_app, name="systems")


@systems_app.command("list")
def list_systems(
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per system instead of a table.")
    ] = False,
) -> None:
    """Show every installed system: its manifest name, version, services and fault families
    (fault types grouped by the object that injects them) with the services each is
    realizable on.

    Example: [bold]r2act systems list[/]
    """
    from r2act.systems import INSTALLED

    if as_json:
        for system in INSTALLED.values():
            row = {
                "name": system.name,
                "title": system.title,
                "version": system.version,
                "deploy": system.deploy_dir,
                "services": list(system.services),
                "fault_families": {k: list(v) for k, v in system.fault_families.items()},
                "cells": [[c.service, c.fault_type.value] for c in system.cells],
            }
            typer.echo(json.dumps(row))
        return
    table = Table(title="Installed systems", box=box.SIMPLE_HEAD)
    for column in ("system", "name", "version", "fault families (realizable on)"):
        table.add_column(column)
    for system in INSTALLED.values():
        families = "\n".join(
            f"{kind}: " + ", ".join(f"{f.value} ({len(system.services_for(f))})" for f in faults)
            for kind, faults in system.fault_families.items()
        )
        table.add_row(system.title, system.name, system.version, families)
    table_console().print(table)
    console.print(
        f"{len(INSTALLED)} system(s); a campaign names one with `system: <name>` "
        "(numbers: services each fault type is realizable on, docs/faults.md)",
        highlight=False,
    )
