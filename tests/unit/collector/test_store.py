"""The raw store's files read back exactly as the quality gate expects them."""

from __future__ import annotations

import errno
import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from r2act.collector import layout, store
from r2act.errors import DataError
from r2act.quality_gate.rawstore import read_logs
from r2act.schema import KubeEvent, LogLine, MetricSeries


def test_log_lines_round_trip_through_gzip_json_lines_with_awkward_text(tmp_path: Path) -> None:
    lines = [
        LogLine(1.5, "cart-1", "server", "cartservice", 'plain "quoted" \\ text\ttab'),
        LogLine(2.0, "front-1", "server", "frontend", '{"severity":"info","msg":"ünïcode ✓"}'),
        LogLine(3.25, "cart-1", "server", "cartservice", ""),
    ]
    path = tmp_path / "logs.jsonl.gz"
    count = store.write_logs(path, [lines[:2], [], lines[2:]])
    assert count == 3
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        decoded = [json.loads(line) for line in handle]
    assert decoded == [
        {
            "ts": ln.ts,
            "pod": ln.pod,
            "container": ln.container,
            "service": ln.service,
            "line": ln.line,
        }
        for ln in lines
    ]


def test_each_line_names_its_own_pod_when_runs_change_or_repeat_as_equal_copies() -> None:
    # runs of one pod, a container change inside a run, equal strings that are other
    # objects (the encoder looks the triple up again only when an object changes)
    pod = "cart-1"
    copy = "".join(["cart", "-1"])
    assert copy == pod and copy is not pod
    lines = [
        LogLine(1.0, pod, "server", "cartservice", "a"),
        LogLine(1.1, pod, "server", "cartservice", "b"),
        LogLine(1.2, pod, "redis", "cartservice", "c"),
        LogLine(1.3, "front-1", "server", "frontend", "d"),
        LogLine(1.4, copy, "server", "cartservice", "e"),
        LogLine(1.5, pod, "server", "checkout", "f"),
    ]
    encoder = store._LineEncoder([])
    first = encoder.encode(lines[:3]) + encoder.encode(lines[3:])
    decoded = [json.loads(row) for row in first.splitlines()]
    assert decoded == [
        {"ts": x.ts, "pod": x.pod, "container": x.container, "service": x.service, "line": x.line}
        for x in lines
    ]
    written = encoder.written()
    assert written.pods == ("cart-1", "front-1")
    assert written.services == ("cartservice", "frontend", "checkout")
    assert written.lines.to_pylist() == ["a", "b", "c", "d", "e", "f"]


def test_lines_sharing_one_timestamp_object_each_print_their_own_line() -> None:
    # a stats table's rows share one float; the encoder formats it once per run of them
    shared, equal = 1767225907.25, float("1767225907.25")
    lines = [
        LogLine(shared, "lg-1", "main", "loadgen", "Type  Name"),
        LogLine(shared, "lg-1", "main", "loadgen", "GET  /cart"),
        LogLine(equal, "lg-1", "main", "loadgen", "GET  /"),
        LogLine(shared + 1.0, "cart-1", "server", "cartservice", "x"),
        LogLine(shared, "cart-1", "server", "cartservice", "y"),
    ]
    encoded = store._LineEncoder().encode(lines)
    assert [json.loads(row) for row in encoded.splitlines()] == [
        {"ts": x.ts, "pod": x.pod, "container": x.container, "service": x.service, "line": x.line}
        for x in lines
    ]
    assert encoded.splitlines()[0] == (
        b'{"ts": 1767225907.25, "pod": "lg-1", "container": "main", "service": "loadgen", '
        b'"line": "Type  Name"}'
    )


@pytest.mark.parametrize("suffix", [".zst", ".gz"])
def test_identical_logs_give_identical_bytes(tmp_path: Path, suffix: str) -> None:
    batch = [LogLine(float(i), "p", "c", "s", f"line {i}") for i in range(100)]
    store.write_logs(tmp_path / f"a{suffix}", [batch])
    store.write_logs(tmp_path / f"b{suffix}", [batch])
    assert (tmp_path / f"a{suffix}").read_bytes() == (tmp_path / f"b{suffix}").read_bytes()


def test_logs_are_one_checksummed_zstd_frame_the_gate_reads_back(tmp_path: Path) -> None:
    lines = [LogLine(i / 3, "cart-1", "server", "cartservice", f"ü line {i}") for i in range(5000)]
    path = tmp_path / layout.LOGS
    assert path.name == "logs.jsonl.zst"
    assert store.write_logs(path, [lines[:1000], lines[1000:]]) == 5000
    frame = zstandard.get_frame_parameters(path.read_bytes())
    assert frame.has_checksum
    text = zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes())
    assert [json.loads(line)["ts"] for line in text.splitlines()] == [ln.ts for ln in lines]
    table = read_logs(path)
    assert table.column("line").to_pylist() == [ln.line for ln in lines]
    assert table.column("ts").to_pylist() == [ln.ts for ln in lines]


def test_a_phase_without_log_lines_reads_as_an_empty_table_in_either_format(
    tmp_path: Path,
) -> None:
    for name in (layout.LOGS, "logs.jsonl.gz"):
        assert store.write_logs(tmp_path / name, [[]]) == 0
        assert read_logs(tmp_path / name).num_rows == 0


def test_metrics_are_long_format_with_sorted_label_json(tmp_path: Path) -> None:
    series = [
        MetricSeries("cpu", {"pod": "a", "container": "server"}, [(1.0, 0.5), (2.0, 0.75)]),
        MetricSeries("mem", {"pod": "b"}, [(1.0, 1e6)]),
    ]
    path = tmp_path / "metrics.parquet"
    assert store.write_metrics(path, series) == 3
    table = pq.read_table(path)
    assert table.schema.names == ["ts", "query", "labels", "value"]
    assert str(table.schema.field("ts").type) == "double"
    rows = table.to_pylist()
    assert rows[0] == {
        "ts": 1.0,
        "query": "cpu",
        "labels": '{"container": "server", "pod": "a"}',
        "value": 0.5,
    }
    assert [r["query"] for r in rows] == ["cpu", "cpu", "mem"]


def test_metric_rows_keep_their_series_labels_around_a_series_without_points(
    tmp_path: Path,
) -> None:
    series = [
        MetricSeries("cpu", {"pod": "a"}, [(1.0, 0.5), (2.0, 0.6)]),
        MetricSeries("cpu", {"pod": "gone"}, []),
        MetricSeries("mem", {"pod": "b"}, [(1.0, 1e6)]),
    ]
    path = tmp_path / "metrics.parquet"
    assert store.write_metrics(path, series) == 3
    table = pq.read_table(path)
    assert [(r["query"], r["labels"], r["ts"]) for r in table.to_pylist()] == [
        ("cpu", '{"pod": "a"}', 1.0),
        ("cpu", '{"pod": "a"}', 2.0),
        ("mem", '{"pod": "b"}', 1.0),
    ]


def test_metrics_file_is_the_one_plain_row_by_row_columns_give(tmp_path: Path) -> None:
    """However the columns are built (query and labels are repeated per series), the file
    is byte for byte the one Python lists of one value per row give: the raw store of a
    seeded campaign must not change with how it is written."""
    series = [
        MetricSeries("cpu", {"pod": "a", "container": "server"}, [(1.0, 0.5), (2.0, 0.25)]),
        MetricSeries("mem", {"pod": "b"}, [(1.0, 1e6), (3.0, 2e6), (5.0, 3e6)]),
    ]
    rows = [(s, p) for s in series for p in s.points]
    reference = pa.table(
        {
            "ts": [p[0] for _, p in rows],
            "query": [s.query for s, _ in rows],
            "labels": [json.dumps(s.labels, sort_keys=True) for s, _ in rows],
            "value": [p[1] for _, p in rows],
        },
        store.METRICS_SCHEMA,
    )
    expected = tmp_path / "expected.parquet"
    pq.write_table(reference, expected, compression="zstd")
    path = tmp_path / "metrics.parquet"
    store.write_metrics(path, series)
    assert path.read_bytes() == expected.read_bytes()


def test_empty_metrics_still_write_a_typed_file(tmp_path: Path) -> None:
    path = tmp_path / "metrics.parquet"
    assert store.write_metrics(path, []) == 0
    assert pq.read_table(path).schema.names == ["ts", "query", "labels", "value"]


def test_events_are_one_model_per_line(tmp_path: Path) -> None:
    event = KubeEvent(
        ts=1.0, type="Warning", reason="BackOff", object_kind="Pod", object_name="a", message="m"
    )
    path = tmp_path / "events.jsonl"
    assert store.write_events(path, [event, event]) == 2
    lines = path.read_text().splitlines()
    assert [KubeEvent.model_validate_json(line) for line in lines] == [event, event]


def test_a_failed_write_leaves_neither_the_file_nor_its_temporary(tmp_path: Path) -> None:
    path = tmp_path / "logs.jsonl.gz"

    def batches() -> object:
        yield [LogLine(1.0, "p", "c", "s", "x")]
        raise RuntimeError("stream broke")

    with pytest.raises(RuntimeError):
        store.write_logs(path, batches())  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_an_existing_file_survives_a_failed_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    store.write_json(path, {"v": 1})
    with pytest.raises(RuntimeError), store.atomic_file(path) as handle:
        handle.write(b"partial")
        raise RuntimeError
    assert json.loads(path.read_text()) == {"v": 1}


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_disk_errors_become_one_line_data_errors_naming_the_path(code: int, tmp_path: Path) -> None:
    with pytest.raises(DataError) as caught, store.writing(tmp_path / "x"):
        raise OSError(code, "boom", str(tmp_path / "x"))
    message = str(caught.value)
    assert "\n" not in message
    assert str(tmp_path / "x") in message


def test_other_os_errors_are_not_disguised(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError), store.writing(tmp_path):
        raise FileNotFoundError(errno.ENOENT, "gone")


def test_a_write_error_on_the_compressor_thread_reaches_the_caller(tmp_path: Path) -> None:
    class Full:
        def write(self, _data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    compressor = store._Compressor(Full(), store._stream(tmp_path / "logs.jsonl.zst", 1))  # type: ignore[arg-type]
    compressor.write(b"x" * 100)
    with pytest.raises(OSError, match="No space"):
        compressor.close()
