"""``r2act dataset build`` ends with a command to check the dataset that pastes as it is."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from typer.testing import CliRunner

from r2act.cli import _register_commands, app


def test_the_validate_hint_quotes_a_path_with_spaces(audited_run: Path, tmp_path: Path) -> None:
    _register_commands()
    run = Path(shutil.copytree(audited_run, tmp_path / "my run"))
    out = tmp_path / "my dataset ü"
    result = CliRunner().invoke(app, ["dataset", "build", str(run), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    hint = result.output.split("(check it: ", 1)[1].rsplit(")", 1)[0]
    assert shlex.split(hint) == ["r2act", "dataset", "validate", str(out)]
