"""``evaluate --mapper`` reads a line's id as ``evaluate`` does: ``incident_id`` or ``case_id``.

The README says a line may name either id; the mapper once read only ``incident_id``, so a
file keyed by ``case_id`` was refused as answering no case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalfixtures import make_record
from typer.testing import CliRunner

import r2act.cli.evaluate  # noqa: F401 - registers evaluate on the app
from r2act import datasets
from r2act.agents.rca import mapped_file
from r2act.cli.app import app
from r2act.datasets import ids
from r2act.errors import DataError

_, RECORDS = ids.assign(
    [make_record(s, f) for s in ("cartservice", "frontend") for f in ("pod_failure", "dns_fault")]
)


def _answers(path: Path, key: str, *, ranked: bool) -> Path:
    rows = []
    for record in RECORDS:
        truth = {"service": record.labels.service, "fault_type": record.labels.fault_type.value}
        decoy = {"service": "adservice", "fault_type": "cpu_saturation"}
        answer = {"ranks": [decoy, truth]} if ranked else {"rca": truth}
        rows.append(json.dumps({key: record.case_id, **answer, "method": "ranker"}))
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("ranked", [False, True], ids=["rca", "ranks"])
def test_case_id_lines_map_exactly_like_incident_id_lines(tmp_path: Path, ranked: bool) -> None:
    by_incident_key, ranked_a = mapped_file(
        _answers(tmp_path / "a.jsonl", "incident_id", ranked=ranked), RECORDS
    )
    by_case_key, ranked_b = mapped_file(
        _answers(tmp_path / "b.jsonl", "case_id", ranked=ranked), RECORDS
    )
    assert len(by_case_key.predictions) == len(RECORDS) and not by_case_key.issues
    assert {k: (p.rca, p.plan) for k, p in by_case_key.predictions.items()} == {
        k: (p.rca, p.plan) for k, p in by_incident_key.predictions.items()
    }
    assert all(p.plan is not None for p in by_case_key.predictions.values())
    assert (ranked_b.service, ranked_b.pair, ranked_b.ranked_cases) == (
        ranked_a.service,
        ranked_a.pair,
        ranked_a.ranked_cases,
    )
    assert ranked_b.ranked_cases == len(RECORDS)


def test_evaluate_mapper_scores_a_case_id_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "dataset"
    directory.mkdir()
    monkeypatch.setattr(datasets, "validate", lambda d, quick=False: [])
    monkeypatch.setattr(datasets, "load_records", lambda d: list(RECORDS))
    answers = _answers(tmp_path / "ranker.jsonl", "case_id", ranked=True)
    report = tmp_path / "r.json"
    argv = ["evaluate", str(answers), "--dataset", str(directory), "--mapper"]
    result = CliRunner().invoke(app, [*argv, "--json", str(report), "--replicates", "200"])
    assert result.exit_code == 0, result.output
    metrics = json.loads(report.read_text())["methods"][0]["metrics"]
    assert metrics["covered"]["value"] == 1.0
    assert metrics["rca_s"]["value"] == 0.0  # the top-ranked answer is the decoy
    assert "AC@3" in result.output


def test_the_mapper_refuses_binary_input_at_once() -> None:
    with pytest.raises(DataError, match="binary"):
        mapped_file(Path("/dev/zero"), RECORDS)
