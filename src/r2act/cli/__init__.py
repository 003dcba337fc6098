"""Command-line interface: one thin module per verb, all registered on one typer app.

Every verb module in this package registers itself on ``app`` when imported; ``main``
imports them all, runs the app and turns any ``R2actError`` into one red line and its exit
code (2 for bad input or refused targets). Tracebacks appear only with ``--debug``.
"""

from __future__ import annotations

import importlib
import pkgutil
import signal
import sys

from r2act.cli.app import app, console_err, state
from r2act.errors import R2actError


def _register_commands() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name not in {"app", "output"} and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def main() -> None:
    """Entry point of the ``r2act`` console script."""
    _register_commands()
    try:
        app()
    except R2actError as error:
        if state.debug:
            raise
        console_err.print(f"[bold red]error:[/] {error}", highlight=False, soft_wrap=True)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the exit
        console_err.print("[yellow]interrupted[/]")
        sys.exit(130)


__all__ = ["app", "main"]
