"""Every command's --help shows an example, whoever registered the command.

The walk covers the root, every group and every subcommand that is registered when the
test runs, so a verb added later is held to the same rule without editing this file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer
from typer.testing import CliRunner

from r2act.cli import _register_commands, app

WIDE = {"COLUMNS": "200", "TERMINAL_WIDTH": "200", "NO_COLOR": "1"}


def _commands() -> Iterator[list[str]]:
    """The argv path of every command; typer vendors click, so duck-type the groups."""
    _register_commands()
    stack: list[tuple[list[str], Any]] = [([], typer.main.get_command(app))]
    while stack:
        path, command = stack.pop()
        yield path
        subcommands: dict[str, Any] = getattr(command, "commands", None) or {}
        stack.extend(([*path, name], sub) for name, sub in subcommands.items())


def test_every_registered_command_help_has_an_example_line() -> None:
    paths = list(_commands())
    assert len(paths) >= 15  # root, groups and verbs: the walk did find them
    missing = []
    for path in paths:
        result = CliRunner().invoke(app, [*path, "--help"], env=WIDE)
        assert result.exit_code == 0, (path, result.output)
        _, found, after = result.output.partition("Example")  # "Example:" or "Examples:"
        if not found or "r2act " not in after:
            missing.append(" ".join(["r2act", *path]))
    assert missing == [], f"--help without an 'Example: r2act ...' line: {missing}"


def test_evaluate_help_documents_every_output_and_the_plot_format() -> None:
    _register_commands()
    for verb in ("evaluate", "compare"):
        output = CliRunner().invoke(app, [verb, "--help"], env=WIDE).output
        for option in ("--json", "--markdown", "--csv", "--latex"):
            assert option in output, (verb, option)
    output = " ".join(CliRunner().invoke(app, ["evaluate", "--help"], env=WIDE).output.split())
    assert "--plot" in output and ".pdf" in output
