"""The raw store's span file: one JSON object per span, keyed by ``Span``'s fields, and the
same bytes for the same spans however the adapter shares its attribute dicts."""

from __future__ import annotations

import json
from pathlib import Path

import zstandard

from r2act.collector.store import write_traces
from r2act.schema.traces import Span


def _read(path: Path) -> list[dict[str, object]]:
    with path.open("rb") as handle:
        text = zstandard.ZstdDecompressor().stream_reader(handle).read().decode()
    return [json.loads(line) for line in text.splitlines()]


def _span(index: int, attributes: dict[str, str | int | float | bool]) -> Span:
    return Span(
        trace_id=f"{index:032x}",
        span_id=f"{index + 1:016x}",
        parent_id="" if index % 2 else f"{index:016x}",
        service='fr"ont\\end',
        operation="GET /é",
        kind="server",
        start=1767225600.123456 + index,
        duration_s=0.0015,
        status="error" if index % 3 == 0 else "unset",
        attributes=attributes,
    )


def test_every_span_reads_back_as_its_fields(tmp_path: Path) -> None:
    shared = {"rpc.system": "grpc", "rpc.grpc.status_code": 14, "ok": True, "ratio": 0.5}
    spans = [_span(i, shared if i % 2 else {"url.path": f"/p/{i}", "n": 1}) for i in range(50)]
    path = tmp_path / "traces.jsonl.zst"
    assert write_traces(path, [spans[:20], spans[20:]]) == 50
    rows = _read(path)
    assert rows == [s._asdict() for s in spans]
    assert all(list(row) == list(Span._fields) for row in rows)
    assert rows[1]["attributes"] == shared and rows[1]["attributes"]["ok"] is True


def test_shared_and_copied_attribute_dicts_give_the_same_bytes(tmp_path: Path) -> None:
    shared = {"a": 1, "b": True}
    one, two = tmp_path / "one.zst", tmp_path / "two.zst"
    write_traces(one, [[_span(i, shared) for i in range(30)]])
    write_traces(two, [[_span(i, dict(shared)) for i in range(30)]])
    assert one.read_bytes() == two.read_bytes()


def test_a_dict_changed_between_batches_is_encoded_anew(tmp_path: Path) -> None:
    """The encoder keeps each dict's encoding only while it holds that very dict: a new
    dict with a recycled id is never given another's encoding."""
    path = tmp_path / "traces.jsonl.zst"
    batches = ([_span(i, {"i": i}) for i in range(3)] for _ in range(4))
    write_traces(path, batches)
    assert [row["attributes"] for row in _read(path)] == [{"i": i} for i in range(3)] * 4
