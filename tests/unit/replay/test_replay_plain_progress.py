"""Without a terminal, ``replay`` (hours on a real cluster) prints plain progress lines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import r2act.cli.replay  # noqa: F401 - registers replay on the app
from r2act import datasets
from r2act.cli.app import app
from r2act.schema import BenchmarkRecord


@pytest.fixture
def records(
    smoke_records: list[BenchmarkRecord], monkeypatch: pytest.MonkeyPatch
) -> list[BenchmarkRecord]:
    chosen = list(smoke_records[:3])
    monkeypatch.setattr(datasets, "load_records", lambda _d: list(chosen))
    monkeypatch.setattr(datasets, "validate", lambda _d: [])  # records only, no files
    return chosen


def test_replay_to_a_pipe_prints_done_total_and_time_left(
    records: list[BenchmarkRecord], tmp_path: Path
) -> None:
    path = tmp_path / "gold.jsonl"
    lines = [
        {"incident_id": r.incident_id, "plan": r.gold_plan.model_dump(mode="json")} for r in records
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    (tmp_path / "dataset").mkdir()
    args = [
        "replay",
        str(path),
        "--dataset",
        str(tmp_path / "dataset"),
        "--out",
        str(tmp_path / "o"),
    ]
    result = CliRunner().invoke(app, args)  # CliRunner's output is not a terminal
    assert result.exit_code == 0, result.output
    assert "\x1b[" not in result.output
    out = result.output.splitlines()
    assert "replay: 3 predictions to replay" in out
    progress = [line for line in out if re.match(r"^replay: \d+/3 predictions", line)]
    assert progress[0].startswith("replay: 1/3 predictions, ") and "left" in progress[0]
    assert progress[-1].startswith("replay: 3/3 predictions, ")
    quiet = CliRunner().invoke(app, [*args[:-1], str(tmp_path / "q"), "-q"])
    assert quiet.exit_code == 0 and "predictions to replay" not in quiet.output
