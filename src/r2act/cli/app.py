"""The typer application and the options every command shares."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import typer
from rich.console import Console

from r2act import __version__


@dataclass
class CliState:
    """Global switches set by the top-level callback."""

    debug: bool = False


state = CliState()
# soft_wrap: status and error lines stay one line whatever the terminal width, so they
# can be grepped and the one-line error contract holds for long paths.
console = Console(soft_wrap=True)
console_err = Console(stderr=True, soft_wrap=True)

PIPE_WIDTH = 160
"""Width of wide tables written to a file or pipe. Those have no width of their own, and at
rich's assumed 80 columns the evaluation table would drop its confidence intervals from
exactly the logs that get archived."""


def table_console() -> Console:
    """``console`` on a terminal or with ``COLUMNS`` set; else one ``PIPE_WIDTH`` wide."""
    if console.is_terminal or os.environ.get("COLUMNS"):
        return console
    return Console(file=sys.stdout, width=PIPE_WIDTH, soft_wrap=True)


app = typer.Typer(
    name="r2act",
    help=(
        "Build, publish, score and replay recovery benchmarks for Kubernetes microservices.\n\n"
        "Example, the typical flow: [bold]r2act collect campaigns/smoke.yaml[/] -> "
        "[bold]r2act audit[/] -> [bold]r2act dataset build[/] -> [bold]r2act baseline rule[/] -> "
        "[bold]r2act evaluate predictions.jsonl[/]."
    ),
    rich_markup_mode="rich",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        console.print(f"r2act {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    state.debug = debug
