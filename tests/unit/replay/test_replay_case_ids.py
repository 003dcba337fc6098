"""Replay accepts predictions keyed by the opaque case id a method sees (issue 12 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import r2act.cli.replay  # noqa: F401 - registers replay on the app
from r2act import datasets
from r2act.cli.app import app
from r2act.datasets import ids
from r2act.schema import BenchmarkRecord


@pytest.fixture
def records(
    smoke_records: list[BenchmarkRecord], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> list[BenchmarkRecord]:
    _, chosen = ids.assign(list(smoke_records[:2]))  # as a published dataset has them
    monkeypatch.setattr(datasets, "load_records", lambda _d: list(chosen))
    monkeypatch.setattr(datasets, "validate", lambda _d: [])  # records only, no files
    (tmp_path / "dataset").mkdir()
    return chosen


def test_a_file_keyed_by_case_ids_replays_the_same_incidents(
    records: list[BenchmarkRecord], tmp_path: Path
) -> None:
    path = tmp_path / "by-case.jsonl"
    path.write_text(
        "".join(
            json.dumps({"incident_id": r.case_id, "plan": r.gold_plan.model_dump(mode="json")})
            + "\n"
            for r in records
        )
    )
    out = tmp_path / "out"
    args = ["replay", str(path), "--dataset", str(tmp_path / "dataset"), "--out", str(out), "-q"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    outcomes = [json.loads(x) for x in (out / "replay.jsonl").read_text().splitlines()]
    assert sorted(o["incident_id"] for o in outcomes) == sorted(r.incident_id for r in records)
