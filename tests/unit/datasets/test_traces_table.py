"""The traces table (issue 24 point 3): one row per span, keyed by the opaque case id, in a
``full+traces`` view that leaves the paper's three views as they were, described by the card
and Croissant, checked by ``validate``, and carrying no answer.

The spans come from ``tests/traces_fixture.py`` (written through the raw store's contract).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from r2act.datasets import build_dataset, ids, layout, load, load_records, validate
from r2act.datasets.cases import CaseReader
from r2act.errors import DataError
from r2act.schema import FaultType
from r2act.schema.rawstore import TRACES
from traces_fixture import traced_dataset


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return traced_dataset(tmp_path_factory.mktemp("traced"))


def _chaos_names(root: Path) -> list[str]:
    table = pq.read_table(root / layout.CHAOS_OBJECTS, columns=["data"])
    return [json.loads(d)["metadata"]["name"] for d in table.column("data").to_pylist()]


def test_the_traces_table_has_one_row_per_span_keyed_by_case_id(traced: Path) -> None:
    table = pq.read_table(traced / layout.TRACES)
    assert [(f.name, f.type) for f in table.schema] == [
        (f.name, f.type) for f in layout.TRACE_TABLE
    ]
    records = load_records(traced)
    assert {str(c) for c in table.column("case_id").to_pylist()} == {
        str(r.case_id) for r in records
    }
    assert all(ids.CASE_ID.match(c) for c in set(table.column("case_id").to_pylist()))
    spans = table.to_pylist()
    assert len({s["span_id"] for s in spans}) == len(spans)
    by_span = {s["span_id"]: s for s in spans}
    roots = [s for s in spans if not s["parent_id"]]
    assert roots and all(
        by_span[s["parent_id"]]["trace_id"] == s["trace_id"] for s in spans if s["parent_id"]
    )
    assert {s["phase"] for s in spans} == {"pre", "during", "post"}
    assert all(isinstance(json.loads(s["attributes"]), dict) for s in spans[:200])


def test_no_span_carries_an_answer(traced: Path) -> None:
    records = load_records(traced)
    forbidden = [r.incident_id for r in records] + _chaos_names(traced)
    forbidden += [f.value for f in FaultType]
    table = pq.read_table(traced / layout.TRACES, columns=["operation", "attributes"])
    texts = [*table.column("operation").to_pylist(), *table.column("attributes").to_pylist()]
    blob = "\n".join(texts).lower()
    assert texts and all(len(w) > 3 for w in forbidden)
    assert [w for w in forbidden if w.lower() in blob] == []


def test_validate_finds_an_answer_written_into_a_span(traced: Path, tmp_path: Path) -> None:
    copy = Path(shutil.copytree(traced, tmp_path / "dataset"))
    table = pq.read_table(copy / layout.TRACES)
    leaked = load_records(copy)[0].incident_id
    attributes = table.column("attributes").to_pylist()
    attributes[0] = json.dumps({"note": leaked})
    index = table.schema.get_field_index("attributes")
    table = table.set_column(index, "attributes", pa.array(attributes, pa.string()))
    pq.write_table(table, copy / layout.TRACES)
    codes = {p.code for p in validate(copy)}
    assert "ANSWER_IN_TRACES" in codes
    assert "CHECKSUM_MISMATCH" in codes


def test_the_paper_views_are_unchanged_and_full_traces_adds_the_spans(traced: Path) -> None:
    assert layout.PAPER_VIEWS == {
        "logs": (layout.CASES, layout.LOGS),
        "logs+events": (layout.CASES, layout.LOGS, layout.EVENTS),
        "full": (
            layout.CASES,
            layout.LOGS,
            layout.EVENTS,
            layout.METRICS,
            layout.STATE,
            layout.REQUESTS,
        ),
    }
    assert layout.VIEWS["full+traces"] == (*layout.VIEWS["full"], layout.TRACES)
    for view in layout.PAPER_VIEWS:
        assert load(traced, view).__dict__.get("traces") is None
    case_id = CaseReader(traced).ids()[0]
    assert CaseReader(traced, "full").case(case_id).traces is None
    case = CaseReader(traced, "full+traces").case(case_id)
    assert case.traces is not None and len(case.traces) > 0
    assert set(case.traces["phase"]) == {"pre", "during", "post"}
    whole = load(traced, "full+traces", incidents=[case_id]).traces
    assert whole is not None and len(whole) == len(case.traces)


def test_full_traces_on_a_dataset_without_traces_says_why(built: Path) -> None:
    assert not (built / layout.TRACES).exists()
    with pytest.raises(DataError, match=r"full\+traces.*no traces"):
        CaseReader(built, "full+traces")
    with pytest.raises(DataError, match="use view 'full'"):
        load(built, "full+traces")


def test_a_dataset_without_traces_keeps_its_files_card_and_croissant(built: Path) -> None:
    card = (built / layout.README).read_text()
    assert "traces" not in card
    croissant = (built / layout.CROISSANT).read_text()
    assert "traces" not in croissant
    assert not (built / layout.SCHEMA_DIR / "traces_row.schema.json").exists()


def test_the_card_croissant_and_schemas_describe_the_traces_table(traced: Path) -> None:
    assert validate(traced) == []
    card = (traced / layout.README).read_text()
    assert f"| {layout.TRACES} | yes |" in card
    assert "`full+traces` = " in card and "config_name: traces" in card
    croissant = json.loads((traced / layout.CROISSANT).read_text())
    files = {d["contentUrl"] for d in croissant["distribution"]}
    assert layout.TRACES in files
    traces_set = next(r for r in croissant["recordSet"] if r["@id"] == "traces")
    names = [f["name"] for f in traces_set["field"]]
    assert names == layout.TRACE_TABLE.names
    service = next(f for f in traces_set["field"] if f["name"] == "service")
    assert "service.name" in service["description"]
    schema = json.loads((traced / layout.SCHEMA_DIR / "traces_row.schema.json").read_text())
    assert schema["required"] == layout.TRACE_TABLE.names


def test_the_build_refuses_spans_that_name_the_incident(traced: Path, tmp_path: Path) -> None:
    run = Path(shutil.copytree(traced.parent / "run", tmp_path / "run"))
    incident = sorted(p for p in (run / "raw").iterdir() if p.is_dir())[0]
    path = incident / "during" / TRACES
    lines = zstandard.ZstdDecompressor().decompress(path.read_bytes()).decode().splitlines()
    span = json.loads(lines[0])
    span["attributes"]["note"] = incident.name.upper()  # found whatever the case
    lines[0] = json.dumps(span)
    path.write_bytes(zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode()))
    with pytest.raises(DataError, match="spans carry the answer"):
        build_dataset(run, tmp_path / "dataset", workers=1)
    assert not (tmp_path / "dataset").exists()
