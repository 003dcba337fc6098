"""``r2act audit`` picks the newest run when none is given, and says which."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gate_rawfactory import write_raw_incident
from typer.testing import CliRunner

from r2act.cli import _register_commands, app
from r2act.errors import DataError
from r2act.quality_gate import resolve_run_dir
from r2act.schema import PlannedIncident


def test_newest_run_with_the_needed_directory_is_picked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for n, name in enumerate(["old", "new"]):
        (tmp_path / "r2act-runs" / name / "raw").mkdir(parents=True)
        os.utime(tmp_path / "r2act-runs" / name / "raw", (1000 + n, 1000 + n))
    (tmp_path / "r2act-runs" / "old" / "audit").mkdir()
    assert resolve_run_dir(None) == (Path("r2act-runs/new"), True)
    assert resolve_run_dir(None, needs="audit") == (Path("r2act-runs/old"), True)
    assert resolve_run_dir(tmp_path) == (tmp_path, False)


def test_no_run_at_all_is_a_data_error_that_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataError, match="pass RUN_DIR"):
        resolve_run_dir(None)


def test_audit_command_names_the_run_it_picked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, incidents: dict[str, PlannedIncident]
) -> None:
    monkeypatch.chdir(tmp_path)
    write_raw_incident(tmp_path / "r2act-runs" / "gatetest", next(iter(incidents.values())))
    _register_commands()
    result = CliRunner().invoke(app, ["audit"])
    assert result.exit_code == 0, result.output
    assert "r2act-runs/gatetest" in result.output
    assert "1 main" in result.output
    assert "policy r2act-mechanics/3" in result.output
    assert "0 verdicts reused" in result.output and "1 judged from the raw files" in result.output
    again = CliRunner().invoke(app, ["audit", "-q"])
    assert "1 verdicts reused as stored" in again.output, again.output


def test_audit_labels_under_the_policy_it_is_given_and_refuses_an_unknown_one(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    incidents: dict[str, PlannedIncident],
) -> None:
    import sys

    from r2act.cli import main

    run = tmp_path / "run"
    write_raw_incident(run, next(iter(incidents.values())))
    _register_commands()
    result = CliRunner().invoke(app, ["audit", str(run), "--policy", "paper-table-ii/1", "-q"])
    assert result.exit_code == 0, result.output
    assert "policy paper-table-ii/1" in result.output
    (record,) = (run / "audit" / "records").glob("*.json")
    assert '"policy": "paper-table-ii/1"' in record.read_text()
    monkeypatch.setattr(sys, "argv", ["r2act", "audit", str(run), "--policy", "bogus"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "unknown policy 'bogus'" in err[0], err
