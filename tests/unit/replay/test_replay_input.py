"""Replay on odd input: other predictions or settings in the same --out, nothing to replay,
unknown --only ids, dropped lines and a narrow terminal. Bad input is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner, Result

import r2act.cli.replay  # noqa: F401 - registers replay on the app
from r2act import datasets
from r2act.cli.app import app
from r2act.cli.replay import _table
from r2act.errors import DataError
from r2act.replay import ReplayOutcome, summarize
from r2act.schema import BenchmarkRecord


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def _gold(records: list[BenchmarkRecord]) -> list[object]:
    return [
        {"incident_id": r.incident_id, "plan": r.gold_plan.model_dump(mode="json")} for r in records
    ]


def _run(*args: str) -> Result:
    return CliRunner().invoke(app, ["replay", *args, "-q"])


@pytest.fixture
def records(
    smoke_records: list[BenchmarkRecord], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> list[BenchmarkRecord]:
    chosen = smoke_records[:2]
    monkeypatch.setattr(datasets, "load_records", lambda _d: list(chosen))
    monkeypatch.setattr(datasets, "validate", lambda _d: [])  # records only, no files
    (tmp_path / "dataset").mkdir()
    return chosen


def test_another_predictions_file_into_the_same_out_is_refused_not_reported_as_its_own(
    records: list[BenchmarkRecord], tmp_path: Path
) -> None:
    gold = _write(tmp_path / "gold.jsonl", _gold(records))
    nothing = _write(
        tmp_path / "nothing.jsonl",
        [{"incident_id": r.incident_id, "plan": {"operation": "no_action"}} for r in records],
    )
    out, dataset = tmp_path / "out", str(tmp_path / "dataset")
    assert _run(str(gold), "--dataset", dataset, "--out", str(out)).exit_code == 0
    written = (out / "replay.jsonl").read_text()
    other = _run(str(nothing), "--dataset", dataset, "--out", str(out))
    assert isinstance(other.exception, DataError), other.output
    assert "another plan" in str(other.exception) and "--out" in str(other.exception)
    assert (out / "replay.jsonl").read_text() == written  # nothing lost, nothing added
    again = _run(str(gold), "--dataset", dataset, "--out", str(out))  # a true resume still works
    assert again.exit_code == 0, again.output
    assert "resumed: 2 outcomes" in again.output


def test_other_settings_into_the_same_out_are_refused(
    records: list[BenchmarkRecord], tmp_path: Path
) -> None:
    gold = _write(tmp_path / "gold.jsonl", _gold(records))
    out, dataset = tmp_path / "out", str(tmp_path / "dataset")
    assert _run(str(gold), "--dataset", dataset, "--out", str(out)).exit_code == 0
    other = _run(str(gold), "--dataset", dataset, "--out", str(out), "--window", "5")
    assert isinstance(other.exception, DataError), other.output
    assert "window_s 75.0 -> 5.0" in str(other.exception)


def test_only_outcomes_asked_for_are_reported(
    records: list[BenchmarkRecord], tmp_path: Path
) -> None:
    gold = _write(tmp_path / "gold.jsonl", _gold(records))
    out, dataset = tmp_path / "out", str(tmp_path / "dataset")
    assert _run(str(gold), "--dataset", dataset, "--out", str(out)).exit_code == 0
    first = records[0].incident_id
    one = _run(str(gold), "--dataset", dataset, "--out", str(out), "--only", first)
    assert one.exit_code == 0, one.output
    report = json.loads((out / "report.json").read_text())
    assert sum(row["planned"] for row in report["rows"] if row["fault_type"] != "all") == 1


@pytest.mark.parametrize("lines", [[], ["not json", "{}"], [{"incident_id": "nope", "plan": None}]])
def test_a_file_with_nothing_to_replay_is_one_line_exit_2(
    records: list[BenchmarkRecord], tmp_path: Path, lines: list[object]
) -> None:
    path = _write(tmp_path / "p.jsonl", lines)
    out = tmp_path / "out"
    result = _run(str(path), "--dataset", str(tmp_path / "dataset"), "--out", str(out))
    assert isinstance(result.exception, DataError), result.output
    assert result.exception.exit_code == 2
    message = str(result.exception)  # no line to replay, or not a predictions file at all
    assert ("nothing to replay" in message or "predictions" in message) and str(path) in message
    assert not out.exists()


def test_only_with_no_known_id_is_exit_2_and_bad_lines_are_warned(
    records: list[BenchmarkRecord], tmp_path: Path
) -> None:
    path = _write(tmp_path / "p.jsonl", [*_gold(records), "{oops"])
    dataset = str(tmp_path / "dataset")
    result = _run(str(path), "--dataset", dataset, "--only", "nope", "--dry-run")
    assert isinstance(result.exception, DataError), result.output
    assert "--only nope" in str(result.exception)
    dry = _run(str(path), "--dataset", dataset, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "1 line(s) of" in dry.output and "not replayed" in dry.output


def test_without_a_dataset_the_fix_is_the_dataset_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = _write(tmp_path / "p.jsonl", [{"incident_id": "x", "plan": None}])
    result = _run(str(path))
    assert isinstance(result.exception, DataError), result.output
    assert "--dataset DIR" in str(result.exception)
    missing = _run(str(path), "--dataset", "nope")
    assert str(missing.exception) == "nope: dataset directory not found (pass --dataset DIR)"


@pytest.mark.parametrize("width", [60, 80])
def test_the_per_fault_table_keeps_every_digit_on_a_narrow_terminal(width: int) -> None:
    outcome = ReplayOutcome(
        incident_id="x",
        fault_type="memory_pressure",
        service="cartservice",
        status="executed",
        offline_valid=True,
        recovered=True,
        gated_recovered=True,
    )
    console = Console(width=width, record=True, color_system=None)
    console.print(_table(summarize([outcome] * 3), width=width))
    text = console.export_text()
    assert "…" not in text and "1.000" in text and "memory_pressure" in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width


def test_cluster_errors_leave_predictions_unjudged_and_exit_1(
    records: list[BenchmarkRecord], tmp_path: Path
) -> None:
    broken = tmp_path / "broken.yaml"  # a simulated target on which every injection fails
    broken.write_text(
        "name: broken\nsystem: onlineboutique\n"
        "target: {kind: sim, seed: 3, glitches: {injection_failure: 1.0}}\n"
        "services: [cartservice]\nfaults: [{type: pod_failure}]\n"
    )
    gold = _write(tmp_path / "gold.jsonl", _gold(records))
    result = _run(str(gold), "--dataset", str(tmp_path / "dataset"), "--target", str(broken))
    assert result.exit_code == 1, result.output
    assert f"errors {len(records)}" in result.output
    assert "could not be judged because of cluster errors" in result.output
    lines = (tmp_path / "replay" / "gold" / "replay.jsonl").read_text().splitlines()
    assert len(lines) == len(records)
    again = _run(str(gold), "--dataset", str(tmp_path / "dataset"), "--target", str(broken))
    assert again.exit_code == 1, again.output  # the errors are tried again, not kept
    assert "resumed" not in again.output
    lines = (tmp_path / "replay" / "gold" / "replay.jsonl").read_text().splitlines()
    assert len(lines) == 2 * len(records)  # appended; the last line per incident counts
    assert f"errors {len(records)}" in again.output
    fixed = _run(str(gold), "--dataset", str(tmp_path / "dataset"))  # a working cluster
    assert fixed.exit_code == 0, fixed.output
    report = json.loads((tmp_path / "replay" / "gold" / "report.json").read_text())
    assert report["errors"] == 0
    planned = next(row["planned"] for row in report["rows"] if row["fault_type"] == "all")
    assert planned + report["no_effect"] == len(records)  # each incident counted once
