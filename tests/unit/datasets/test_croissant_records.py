"""Croissant covers every table and the fields a method or scorer needs (issue 15 item 2).

Every record set is read with mlcroissant itself, row for row against the Parquet table,
and the fields a Croissant-only consumer needs to score recovery are there: the action
space, the gold plan's operation, target and parameters, the valid and invalid plans, the
cluster state.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from r2act.datasets import layout, load_records
from r2act.datasets.croissant import record_set_name

mlc = pytest.importorskip("mlcroissant")


@pytest.fixture(scope="module")
def croissant(built: Path) -> object:
    return mlc.Dataset(jsonld=built / layout.CROISSANT)


def _text(value: object) -> object:
    return value.decode() if isinstance(value, bytes) else value


def test_every_table_is_a_record_set_that_mlcroissant_reads_in_full(
    built: Path, croissant: object
) -> None:
    document = json.loads((built / layout.CROISSANT).read_text())
    sets = {r["name"] for r in document["recordSet"]}
    assert sets == {record_set_name(p) for p in layout.TABLES}
    for path in layout.TABLES:
        table = pq.read_table(built / path)
        rows = list(croissant.records(record_set_name(path)))  # type: ignore[attr-defined]
        assert len(rows) == table.num_rows, path
        name = record_set_name(path)
        for column in table.schema.names:
            read = [_text(r[f"{name}/{column}"]) for r in rows]
            expected = table.column(column).to_pylist()
            assert sorted(map(str, read)) == sorted(map(str, expected)), (path, column)


def test_a_scorer_finds_the_gold_plan_and_its_parameters_and_the_plan_sets(
    built: Path, croissant: object
) -> None:
    records = {r.case_id: r for r in load_records(built)}
    rows = list(croissant.records("answers_incidents"))  # type: ignore[attr-defined]
    for row in rows:
        record = records[_text(row["answers_incidents/case_id"])]
        gold = record.gold_plan.model_dump(mode="json")
        assert _text(row["answers_incidents/gold_operation"]) == gold["operation"]
        assert _text(row["answers_incidents/gold_target"]) == gold.get("target")
        for key in ("replicas", "memory_limit", "scope", "dependency"):
            if key in gold:
                value = _text(row[f"answers_incidents/gold_{key}"])
                assert str(value) == str(gold[key]), key
        valid = json.loads(_text(row["answers_incidents/valid_plans"]))
        invalid = json.loads(_text(row["answers_incidents/invalid_plans"]))
        assert valid == [p.model_dump(mode="json") for p in record.valid_plans]
        assert len(invalid) == len(record.invalid_plans) >= 2


def test_a_method_finds_the_action_space_and_the_state(built: Path, croissant: object) -> None:
    records = {r.case_id: r for r in load_records(built)}
    for row in croissant.records("cases"):  # type: ignore[attr-defined]
        space = records[_text(row["cases/case_id"])].action_space
        assert json.loads(_text(row["cases/action_space"])) == space.model_dump(mode="json")
    states = list(croissant.records("state"))  # type: ignore[attr-defined]
    assert states and all(json.loads(_text(s["state/state"]))["pods"] for s in states)
