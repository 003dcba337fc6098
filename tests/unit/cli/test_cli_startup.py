"""Startup cost and help texts of the ``r2act`` command line.

Every invocation imports every verb module, so a verb module that imports a stage package at
module level makes ``r2act --help`` pay for pandas, pyarrow, matplotlib and numpy. Help texts
go through rich markup, where ``[default: ...]`` is a style tag that silently disappears.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from rich.text import Text
from typer.testing import CliRunner

from r2act.cli import _register_commands, app

HEAVY = (
    "pandas",
    "pyarrow",
    "matplotlib",
    "numpy",
    "sklearn",
    "kubernetes",
    "prometheus_api_client",
)
VERBS = (
    "agent",
    "audit",
    "baseline",
    "campaign",
    "cleanup",
    "collect",
    "compare",
    "dataset",
    "evaluate",
    "mcp",
    "replay",
    "schema",
)
WIDE = {"COLUMNS": "200", "TERMINAL_WIDTH": "200", "NO_COLOR": "1"}

_CHILD = """
import json, sys
import r2act.cli
r2act.cli._register_commands()
registered = sorted(m for m in {heavy} if m in sys.modules)
sys.argv = ["r2act", "--help"]
try:
    r2act.cli.main()
except SystemExit:
    pass
helped = sorted(m for m in {heavy} if m in sys.modules)
print(json.dumps([registered, helped]))
"""


def _commands() -> Iterator[tuple[list[str], Any]]:
    """Every (sub)command with its argv path; typer vendors click, so duck-type groups."""
    _register_commands()
    stack: list[tuple[list[str], Any]] = [([], typer.main.get_command(app))]
    while stack:
        path, command = stack.pop()
        yield path, command
        subcommands: dict[str, Any] = getattr(command, "commands", None) or {}
        stack.extend(([*path, name], sub) for name, sub in subcommands.items())


def _help(path: list[str]) -> str:
    _register_commands()  # whatever ran before in this worker, every verb is there
    result = CliRunner().invoke(app, [*path, "--help"], env=WIDE)
    assert result.exit_code == 0, (path, result.output)
    return result.output


def _flat(text: str) -> str:
    """Rendered help without box drawing, one space between words (undoes wrapping)."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def test_registering_and_printing_help_import_no_heavy_package() -> None:
    child = subprocess.run(
        [sys.executable, "-c", _CHILD.format(heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    registered, helped = json.loads(child.stdout.strip().splitlines()[-1])
    assert registered == [], f"importing the verb modules loads {registered}"
    assert helped == [], f"r2act --help loads {helped}"


def test_top_level_help_lists_every_verb() -> None:
    _register_commands()
    output = _help([])
    listed = {m.group(1) for m in re.finditer(r"│ (\w+) ", output)}
    assert set(VERBS) <= listed, sorted(set(VERBS) - listed)


def test_every_command_and_subcommand_help_exits_zero() -> None:
    paths = [path for path, _ in _commands()]
    assert ["dataset", "validate"] in paths and ["campaign", "render"] in paths
    for path in paths:
        assert _help(path).strip(), path


def test_no_parameter_help_loses_text_to_rich_markup() -> None:
    damaged = [
        (path, param.name, param.help)
        for path, command in _commands()
        for param in command.params
        if (param_help := getattr(param, "help", None))
        and Text.from_markup(param_help).plain != param_help
    ]
    assert damaged == []


def test_defaults_named_in_help_texts_are_rendered() -> None:
    checked = 0
    for path, command in _commands():
        wanted = [
            help_text
            for param in command.params
            if "default:" in (help_text := getattr(param, "help", None) or "")
        ]
        if not wanted:
            continue
        rendered = _flat(_help(path))
        assert not re.search(r"\w \.(\s|$)", rendered), (path, rendered)
        for help_text in wanted:
            assert " ".join(help_text.split()) in rendered, (path, help_text)
            checked += 1
    assert checked >= 8  # audit, baseline, collect, dataset, evaluate, replay ... name defaults


def test_cheap_help_constants_equal_their_sources() -> None:
    from r2act.baselines import BASELINES
    from r2act.cli import _choices
    from r2act.datasets import VIEWS
    from r2act.evaluation import DEFAULT_REPLICATES, DEFAULT_SEED

    assert tuple(BASELINES) == _choices.BASELINE_NAMES
    assert tuple(VIEWS) == _choices.VIEW_NAMES
    assert (_choices.DEFAULT_SEED, _choices.DEFAULT_REPLICATES) == (
        DEFAULT_SEED,
        DEFAULT_REPLICATES,
    )


def test_campaign_table_has_a_short_name_for_every_fault_type() -> None:
    from r2act.cli.campaign import _SHORT
    from r2act.schema import FaultType

    assert set(_SHORT) == {f.value for f in FaultType}


@pytest.mark.parametrize("verb", ["baseline", "evaluate"])
def test_help_lists_names_from_the_cheap_constants(verb: str) -> None:
    from r2act.cli import _choices

    rendered = _flat(_help([verb]))
    names = _choices.BASELINE_NAMES if verb == "baseline" else ("--replicates",)
    for name in names:
        assert name in rendered


def test_help_paragraphs_are_not_hard_wrapped_so_rich_can_wrap_them() -> None:
    ragged = [
        (path, paragraph)
        for path, command in _commands()
        for paragraph in (command.help or "").split("\n\n")
        if "\n" in paragraph and not paragraph.startswith("\b")
    ]
    assert ragged == []


def test_a_help_example_is_not_split_across_lines_at_80_columns() -> None:
    narrow = {**WIDE, "COLUMNS": "80", "TERMINAL_WIDTH": "80"}
    for path, _command in _commands():
        output = CliRunner().invoke(app, [*path, "--help"], env=narrow).output
        for line in output.splitlines():
            assert not line.rstrip().endswith(("Example:", "Example: r2act")), (path, line)
