"""``evaluate`` refuses a dataset whose labels were altered, even with checksums recomputed.

Quick validation (what evaluate runs) keeps the card's label composition, so an author who
changes a label and rewrites SHA256SUMS is still caught; only figures are not re-rendered.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

import r2act.cli.evaluate  # noqa: F401 - registers evaluate
from r2act.cli.app import app
from r2act.datasets import layout, validate
from r2act.datasets.checksums import write_sums
from r2act.errors import DataError


def _records(root: Path) -> list[dict[str, Any]]:
    table = pq.read_table(root / layout.INCIDENTS)
    return [json.loads(row["record"]) for row in table.to_pylist()]


def _rewrite(root: Path, records: list[dict[str, Any]]) -> None:
    table = pq.read_table(root / layout.INCIDENTS)
    rows = table.to_pylist()
    for row, record in zip(rows, records, strict=True):
        row["record"] = json.dumps(record)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), root / layout.INCIDENTS)


def test_altered_labels_with_recomputed_checksums_are_refused_by_evaluate(
    dataset_copy: Path, tmp_path: Path
) -> None:
    records = _records(dataset_copy)
    first = records[0]
    other = next(r for r in records if r["labels"]["fault_type"] != first["labels"]["fault_type"])
    first["labels"]["fault_type"] = other["labels"]["fault_type"]
    _rewrite(dataset_copy, records)
    write_sums(dataset_copy)  # the tamperer recomputes the checksums
    codes = {p.code for p in validate(dataset_copy, quick=True)}
    assert "CARD_MISMATCH" in codes and "CHECKSUM_MISMATCH" not in codes
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(json.dumps({"incident_id": first["incident_id"], "plan": None}) + "\n")
    result = CliRunner().invoke(app, ["evaluate", str(predictions), "--dataset", str(dataset_copy)])
    assert isinstance(result.exception, DataError) and result.exception.exit_code == 2
    assert "fails validation" in str(result.exception)


def test_replay_refuses_a_dataset_that_fails_validation_before_touching_anything(
    dataset_copy: Path, tmp_path: Path
) -> None:
    import r2act.cli.replay  # noqa: F401 - registers replay

    records = _records(dataset_copy)
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        json.dumps({"incident_id": records[0]["incident_id"], "plan": None}) + "\n"
    )
    (dataset_copy / layout.FOLDS).unlink()  # a deleted table
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["replay", str(predictions), "--dataset", str(dataset_copy), "--out", str(out)]
    )
    assert isinstance(result.exception, DataError) and result.exception.exit_code == 2
    assert "fails validation" in str(result.exception) and "\n" not in str(result.exception)
    assert not out.exists()
