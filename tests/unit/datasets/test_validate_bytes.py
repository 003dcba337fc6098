"""A dataset file that is not UTF-8 is a problem naming the file, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from r2act.datasets import validate


def _set_record(root: Path, text: str) -> None:
    path = root / "answers" / "incidents.parquet"
    table = pq.read_table(path)
    records = table.column("record").to_pylist()
    records[0] = text
    pq.write_table(table.set_column(11, "record", pa.array(records, pa.string())), path)


def test_a_record_problem_is_one_line_without_pydantic_urls(dataset_copy: Path) -> None:
    _set_record(dataset_copy, '{"schema_version": "1.0"}')
    (bad,) = [p for p in validate(dataset_copy, quick=True) if p.code == "RECORD_INVALID"]
    assert bad.where == "answers/incidents.parquet:row 1"
    assert "\n" not in bad.line() and "errors.pydantic.dev" not in bad.line()
    assert "first: " in bad.message and "Field required" in bad.message


@pytest.mark.parametrize("name", ["observations/state.parquet", "README.md"])
def test_an_unreadable_file_is_named_in_its_problem(dataset_copy: Path, name: str) -> None:
    with (dataset_copy / name).open("ab") as stream:
        stream.write(b"\xff\xfe\n")
    unreadable = [p for p in validate(dataset_copy) if p.code == "UNREADABLE"]
    assert [p.where for p in unreadable] == [name]


def test_a_run_without_main_incidents_says_where_the_reasons_are(tmp_path: Path) -> None:
    from gate_rawfactory import RawSpec, planned, write_raw_incident

    from r2act.datasets import build_dataset
    from r2act.errors import DataError
    from r2act.quality_gate import run_audit

    run = tmp_path / "run"
    for incident in sorted(planned(tmp_path), key=lambda i: i.id)[:2]:
        write_raw_incident(run, incident, RawSpec(injection="failed"))
    run_audit(run, workers=1)
    with pytest.raises(DataError, match="nothing to publish") as raised:
        build_dataset(run, workers=1)
    assert str(run / "audit" / "report.md") in str(raised.value)
