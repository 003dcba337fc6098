"""RCA-only methods: ``evaluate --mapper`` (plans from the policy's mapper, AC@k for ranked
answers) and ``dataset export --format rcaeval`` (RCAEval's layout, read the way RCAEval
reads it)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
from agent_support import r2act

from r2act.actions import map_rca
from r2act.agents.rca import mapped_file
from r2act.datasets import load_records
from r2act.systems import SYSTEMS


def _answers(dataset: Path, path: Path) -> None:
    """Ranked answers keyed by case id: the truth first for even cases, second for odd ones."""
    rows = []
    for n, record in enumerate(sorted(load_records(dataset), key=lambda r: str(r.case_id))):
        truth = {"service": record.labels.service, "fault_type": record.labels.fault_type.value}
        decoy = {"service": "adservice", "fault_type": "cpu_saturation"}
        ranks = [truth, decoy] if n % 2 == 0 else [decoy, truth]
        rows.append(json.dumps({"incident_id": record.case_id, "ranks": ranks, "method": "ranker"}))
    path.write_text("\n".join(rows) + "\nnot json\n")


def test_mapper_turns_ranked_answers_into_policy_plans(smoke_dataset: Path, tmp_path: Path) -> None:
    answers = tmp_path / "ranker.jsonl"
    _answers(smoke_dataset, answers)
    records = load_records(smoke_dataset)
    parsed, ranked = mapped_file(answers, records)
    assert parsed.counts["malformed_json"] == 1 and len(parsed.predictions) == len(records)
    half = sum(1 for n in range(len(records)) if n % 2 == 0) / len(records)
    assert ranked.ranked_cases == len(records)
    assert ranked.service[1] == round(half, 6) and ranked.service[3] == 1.0
    assert ranked.pair[1] == round(half, 6) and ranked.pair[3] == 1.0
    by_case = {r.case_id: r for r in records}
    for case_id, prediction in parsed.predictions.items():
        record = by_case[case_id]
        assert prediction.rca is not None and prediction.rca.service is not None
        top = prediction.rca
        expected = map_rca(top.service, top.fault_type, record.action_space,  # type: ignore[arg-type]
                           SYSTEMS[record.metadata.system])  # fmt: skip
        assert prediction.plan == expected

    done = r2act("evaluate", str(answers), "--dataset", str(smoke_dataset), "--mapper",
                 "--json", str(tmp_path / "r.json"), "--replicates", "200")  # fmt: skip
    assert "Ranked RCA answers" in done.stdout and "AC@3" in done.stdout
    metrics = json.loads((tmp_path / "r.json").read_text())["methods"][0]["metrics"]
    assert (
        metrics["rca_s"]["value"] == round(half, 6) or abs(metrics["rca_s"]["value"] - half) < 1e-9
    )


def test_rcaeval_export_layout_reads_like_rcaeval(sample_dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "re-r2act"
    r2act("dataset", "export", str(sample_dataset), "--format", "rcaeval", "--out", str(out))
    records = load_records(sample_dataset)
    index = list(csv.DictReader((out / "cases.csv").open()))
    assert len(index) == len(records)
    assert {r["case_id"] for r in index} == {r.case_id for r in records}
    data_paths = sorted(out.glob("**/data.csv"))  # RCAEval: glob("**/data.csv")
    assert len(data_paths) == len(records)
    folders = set()
    for path in data_paths:
        service, fault = path.parent.parent.name.split("_")  # RCAEval splits at the underscore
        intensity, repetition = path.parent.name.split("-")
        folders.add((service, fault, intensity, repetition))
        data = pd.read_csv(path)
        inject = int((path.parent / "inject_time.txt").read_text())
        assert data["time"].is_monotonic_increasing
        assert (data["time"] < inject).any() and (data["time"] >= inject).any()
        assert f"{service}_cpu" in data.columns and f"{service}_mem" in data.columns
        assert all(c == "time" or c.count("_") == 1 for c in data.columns)
        logs = pd.read_csv(path.parent / "logs.csv", nrows=5)
        assert list(logs.columns) == ["time", "timestamp", "container_name", "message"]
    assert len(folders) == len(records)  # no two incidents share a folder
    by_cell: dict[tuple[str, str], set[str]] = {}
    for service, fault, intensity, _ in folders:
        by_cell.setdefault((service, fault), set()).add(intensity)
    assert any(levels == {"moderate", "severe"} for levels in by_cell.values())
    for row in index:
        assert row["folder"] == (
            f"{row['service']}_{row['fault_type'].replace('_', '-')}/"
            f"{row['intensity']}-{row['repetition']}"
        )
    again = r2act("dataset", "export", str(sample_dataset), "--out", str(out), check=False)
    assert again.returncode == 2 and "not empty" in again.stderr
