"""``evaluate`` refuses a dataset whose labels were altered, even with checksums recomputed.

Quick validation (what evaluate runs) keeps the card's label composition, so an author who
changes a label and rewrites SHA256SUMS is still caught; only figures are not re-rendered.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import r2act.cli.evaluate  # noqa: F401 - registers evaluate
from r2act.cli.app import app
from r2act.datasets import validate
from r2act.datasets.checksums import write_sums
from r2act.errors import DataError


def test_altered_labels_with_recomputed_checksums_are_refused_by_evaluate(
    dataset_copy: Path, tmp_path: Path
) -> None:
    path = dataset_copy / "incidents.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    first = records[0]
    other = next(r for r in records if r["labels"]["fault_type"] != first["labels"]["fault_type"])
    first["labels"]["fault_type"] = other["labels"]["fault_type"]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    write_sums(dataset_copy)  # the tamperer recomputes the checksums
    codes = {p.code for p in validate(dataset_copy, quick=True)}
    assert "CARD_MISMATCH" in codes and "CHECKSUM_MISMATCH" not in codes
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(json.dumps({"incident_id": first["incident_id"], "plan": None}) + "\n")
    result = CliRunner().invoke(app, ["evaluate", str(predictions), "--dataset", str(dataset_copy)])
    assert isinstance(result.exception, DataError) and result.exception.exit_code == 2
    assert "CARD_MISMATCH" in str(result.exception) or "card" in str(result.exception)
