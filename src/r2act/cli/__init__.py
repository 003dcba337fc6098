"""Command-line interface: one thin module per verb, all registered on one typer app.

Every verb module in this package registers itself on ``app`` when imported; ``main``
imports them all, runs the app and turns any ``R2actError`` into one red line and its exit
code (2 for bad input or refused targets). Tracebacks appear only with ``--debug``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import signal
import sys

import typer

from r2act._signals import exit_code, install_signal_handlers
from r2act.cli.app import app, console_err, state
from r2act.errors import R2actError


def _register_commands() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name not in {"app", "output"} and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    _unwrap_help(app)


def _unwrap_help(typer_app: typer.Typer) -> None:
    """Join the hard-wrapped lines of every help paragraph.

    Rich help keeps a docstring's single newlines, so a paragraph wrapped at the source's
    100 columns came out ragged ("... Exit\n code 0 when\n every ..."); rich re-wraps the
    joined text to the terminal instead.
    """
    for command in typer_app.registered_commands:
        command.help = _unwrap(command.help or inspect.getdoc(command.callback) or "")
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            info = group.typer_instance.info
            if isinstance(info.help, str):
                info.help = _unwrap(info.help)
            _unwrap_help(group.typer_instance)


def _unwrap(text: str) -> str:
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(
        p if p.startswith("\b") else " ".join(line.strip() for line in p.splitlines())
        for p in paragraphs
    )


def main() -> None:
    """Run the command line: register the verbs, run the app, map errors to exit codes.

    The console script enters through ``r2act._startup``, which installed the signal
    handlers before this module's imports; they are installed here too for callers that
    enter here directly. Registering the verbs is part of the guarded start-up: a signal
    while their modules load exits 128+N like any other."""
    install_signal_handlers()
    try:
        _register_commands()
        app()
    except R2actError as error:
        if state.debug:
            raise
        console_err.print(f"[bold red]error:[/] {error}", highlight=False, soft_wrap=True)
        sys.exit(error.exit_code)
    except KeyboardInterrupt as stop:
        _interrupted(exit_code(stop) - 128)
    except SystemExit as exit_:
        # typer turns a Ctrl-C inside a command into a silent exit 130: say what happened
        if (cause := _caused_by_ctrl_c(exit_)) is not None:
            _interrupted(exit_code(cause) - 128)
        raise


def _interrupted(signum: int = signal.SIGINT) -> None:
    """Exit 128+N for signal N (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP)."""
    for ignored in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(ignored, signal.SIG_IGN)  # a second signal must not cut the exit
    name = signal.Signals(signum).name
    console_err.print(
        f"[yellow]interrupted[/] by {name} (rerun the same command to start over or resume)"
    )
    sys.exit(128 + signum)


def _caused_by_ctrl_c(error: BaseException) -> KeyboardInterrupt | None:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


__all__ = ["app", "main"]
