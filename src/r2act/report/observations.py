"""One incident's observations as the incident page loads them: log chunks and a timeline.

Paper scale is 12.6M log lines (about 3 GB of text), so how lines get onto the page decides
both the build time and the page weight:

- Lines are never re-encoded one by one. A chunk of up to :data:`CHUNK_LINES` lines ships as
  the UTF-8 bytes Arrow already holds plus their offsets, LZ4-compressed and base64-encoded
  (a few C calls per chunk) inside a small JavaScript file. The page decodes a chunk only when the
  viewer needs it, and puts each line on screen as text (``textContent``), never as markup:
  base64 has no character that can end a string or a tag, so a hostile line cannot escape
  its chunk.
- The timeline is aggregated here (log lines and error lines per service per time bucket,
  the metric series that moved most between the baseline and the fault, events, and spans
  when the dataset has a traces table), so the page draws it without reading the logs.

Each chunk file stays far below the 5 MB page budget (:data:`CHUNK_BYTES` of text before
compression), and the whole site is about a tenth of the dataset's log text.
"""

from __future__ import annotations

import base64
import itertools
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from r2act.datasets import layout
from r2act.quality_gate.evidence import ERROR_LINE

PHASES = ("pre", "during", "post")
CHUNK_LINES = 5000
"""Lines per log chunk file: one screenful of pages, and a fraction of the page budget."""
CHUNK_BYTES = 2_500_000
"""A chunk is also cut before its text passes this many bytes (long lines)."""
MAX_LINE_BYTES = 16_384
"""Longer lines are cut to this many bytes in the report (the dataset keeps them whole);
the viewer says how long the line was."""
BUCKETS = 120
"""Time buckets of the timeline."""
MOVED_SERIES = 8
"""Metric series shown: those that moved most between the baseline and the fault."""
MOVED_SCORE = 3.0
"""Least change (in baseline standard deviations) for a series to count as moved."""
MAX_EVENTS = 2000
MAX_SPANS = 2000
CODEC = "lz4_raw"
"""Arrow's name for the LZ4 block format (no frame), which the page decodes."""
TRACES = f"{layout.OBSERVATIONS}/traces.parquet"
"""Where a dataset holds spans, when its system emits them (DESIGN 7, ``full+traces``)."""

_ERROR = ERROR_LINE.removeprefix("(?i)")


DICTIONARY = ("case_id", "phase", "pod", "service", "container")
"""Columns read as Arrow dictionaries: their codes come with the read, no string is built."""


def cases_of(path: Path, columns: list[str] | None = None) -> Iterator[tuple[str, pa.Table]]:
    """(case id, rows) for each case of a dataset table, reading one row group at a time.

    The dataset writes one row group per case in case order; a case spread over several
    consecutive groups is joined, so this holds for any grouping that keeps cases together.
    Low-cardinality columns come back dictionary-encoded.
    """
    names = pq.read_schema(path).names
    file = pq.ParquetFile(path, read_dictionary=[c for c in DICTIONARY if c in names])
    wanted = None if columns is None else ["case_id", *[c for c in columns if c != "case_id"]]
    current: str | None = None
    parts: list[pa.Table] = []
    for index in range(file.num_row_groups):
        # one thread: Arrow's reader threads cost several times the CPU of the decoding
        # itself on tables this size (bench/report.py measures CPU, not wall time)
        table = file.read_row_group(index, columns=wanted, use_threads=False)
        if table.num_rows == 0 or "case_id" not in names:
            continue
        ids = table.column("case_id").combine_chunks()
        dictionary = ids.dictionary if pa.types.is_dictionary(ids.type) else pc.unique(ids)
        present = [str(c) for c in dictionary.to_pylist()]
        for case in present if len(present) == 1 else pc.unique(ids.cast(pa.string())).to_pylist():
            rows = (
                table if len(present) == 1 else table.filter(pc.equal(ids.cast(pa.string()), case))
            )
            if case != current:
                if current is not None:
                    yield current, _joined(parts)
                current, parts = case, []
            parts.append(rows)
    if current is not None:
        yield current, _joined(parts)


def _joined(parts: list[pa.Table]) -> pa.Table:
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="permissive")


@dataclass
class Windows:
    """Start and end (epoch seconds) of each phase an incident has."""

    phases: dict[str, tuple[float, float]] = field(default_factory=dict)

    def widen(self, phase: str, low: float, high: float) -> None:
        """Extend ``phase`` to include [low, high]."""
        if phase in self.phases:
            old = self.phases[phase]
            low, high = min(low, old[0]), max(high, old[1])
        self.phases[phase] = (low, high)

    @property
    def start(self) -> float:
        """Earliest time of any phase (0 when none)."""
        return min((w[0] for w in self.phases.values()), default=0.0)

    @property
    def end(self) -> float:
        """Latest time of any phase."""
        return max((w[1] for w in self.phases.values()), default=0.0)


def phase_windows(tables: list[pa.Table | None]) -> Windows:
    """Each phase's time span over the given tables (each with ``phase`` and ``ts``)."""
    windows = Windows()
    for table in tables:
        if table is None or table.num_rows == 0 or "ts" not in table.column_names:
            continue
        table = table.select(["phase", "ts"])
        if pa.types.is_dictionary(table.schema.field("phase").type):
            table = table.set_column(0, "phase", table.column("phase").cast(pa.string()))
        for phase in PHASES:
            rows = table.filter(pc.equal(table.column("phase"), phase))
            if rows.num_rows:
                low, high = pc.min_max(rows.column("ts")).values()
                windows.widen(phase, float(low.as_py()), float(high.as_py()))
    return windows


def _b64(data: bytes | memoryview | npt.NDArray[Any]) -> bytes:
    raw = data.tobytes() if isinstance(data, np.ndarray) else data
    return base64.b64encode(raw)


@dataclass(frozen=True)
class LogIndex:
    """What the page needs to decode and label the log chunks of one incident."""

    lines: int
    chunks: list[int]
    """Lines per chunk, in order."""
    services: list[str]
    pods: list[str]
    errors: int
    cut: int
    """Lines longer than MAX_LINE_BYTES, shown cut."""


@dataclass(frozen=True)
class Logs:
    """One incident's log lines in time order, decoded once for the chunks and the timeline."""

    seconds: npt.NDArray[np.float64]
    """Seconds since t0."""
    phase: npt.NDArray[np.uint8]
    service: npt.NDArray[np.uint16]
    pod: npt.NDArray[np.uint16]
    error: npt.NDArray[np.uint8]
    services: list[str]
    pods: list[str]
    line: pa.StringArray
    cut: int

    def __len__(self) -> int:
        return len(self.seconds)


def prepare(logs: pa.Table, t0: float) -> Logs:
    """Sort (when needed), cut very long lines, flag error lines: one pass over the text."""
    seconds = logs.column("ts").to_numpy() - t0
    services, service_codes = _codes(logs.column("service"))
    pods, pod_codes = _codes(logs.column("pod"))
    phases = _phase_codes(logs.column("phase"))
    line = logs.column("line").combine_chunks()
    if len(seconds) > 1 and not bool(np.all(seconds[1:] >= seconds[:-1])):
        order = np.argsort(seconds, kind="stable")
        seconds, service_codes, pod_codes, phases = (
            seconds[order],
            service_codes[order],
            pod_codes[order],
            phases[order],
        )
        line = pc.take(line, pa.array(order))
    if not pa.types.is_string(line.type):
        line = line.cast(pa.string())
    lengths = pc.binary_length(line)
    cut = int(pc.sum(pc.greater(lengths, MAX_LINE_BYTES)).as_py() or 0) if len(line) else 0
    if cut:  # keep the head of each long line and say how long it was
        long = pc.greater(lengths, MAX_LINE_BYTES)
        head = pc.binary_join_element_wise(
            pc.utf8_slice_codeunits(line, 0, MAX_LINE_BYTES),
            " … [cut for the report: ",
            pc.cast(lengths, pa.string()),
            " bytes in the dataset]",
            "",
        )
        line = pc.if_else(long, head, line)
    flags = pc.match_substring_regex(line, _ERROR, ignore_case=True).fill_null(False)
    return Logs(
        seconds=seconds,
        phase=phases,
        service=service_codes,
        pod=pod_codes,
        error=np.asarray(flags.to_numpy(zero_copy_only=False), dtype=np.uint8),
        services=services,
        pods=pods,
        line=line,
        cut=cut,
    )


def log_chunks(logs: Logs, key: str = "logs") -> tuple[LogIndex, list[bytes]]:
    """The lines as chunk files (JavaScript, bytes) and their index.

    Each file is ``r2actData("logs/K", {"n": N, "u": SIZE, "z": BASE64})``: ``z`` is one LZ4
    block (SIZE bytes once decompressed) of, in order, milliseconds since t0 (int32, N), line
    offsets (int32, N + 1), service and pod (uint16, N each, into the index's lists), phase
    (uint8, into PHASES), error flag (uint8) and the UTF-8 text. LZ4 because it costs a few
    milliseconds per chunk (zlib took four times as long) and log text still shrinks about
    eightfold; the page's 25-line decoder (``report.js``) reads the block format. Base64
    holds no quote, backslash or '<', so the file needs no escaping and no line is
    re-encoded.
    """
    n = len(logs)
    if n == 0:
        return LogIndex(0, [], logs.services, logs.pods, 0, 0), []
    line = logs.line
    millis = np.round(logs.seconds * 1000).astype("<i4")
    offsets = np.frombuffer(line.buffers()[1], dtype=np.int32)[
        line.offset : line.offset + len(line) + 1
    ]
    data = line.buffers()[2]
    text = memoryview(data) if data is not None else memoryview(b"")
    files: list[bytes] = []
    sizes = []
    start = 0
    while start < n:
        end = min(n, start + CHUNK_LINES)
        limit = offsets[start] + CHUNK_BYTES
        if offsets[end] > limit:  # long lines: cut the chunk at the byte budget
            end = max(start + 1, int(np.searchsorted(offsets, limit, side="right")) - 1)
        base = int(offsets[start])
        raw = b"".join(
            [
                millis[start:end].tobytes(),
                (offsets[start : end + 1] - base).astype("<i4").tobytes(),
                logs.service[start:end].astype("<u2").tobytes(),
                logs.pod[start:end].astype("<u2").tobytes(),
                logs.phase[start:end].tobytes(),
                logs.error[start:end].tobytes(),
                text[base : int(offsets[end])],
            ]
        )
        packed = pa.compress(raw, codec=CODEC, asbytes=True)
        number = len(files) + 1
        head = f'r2actData("{key}/{number}",{{"n":{end - start},"u":{len(raw)},"z":"'.encode()
        files.append(b"".join([head, base64.b64encode(packed), b'"});\n']))
        sizes.append(end - start)
        start = end
    index = LogIndex(n, sizes, logs.services, logs.pods, int(logs.error.sum()), logs.cut)
    return index, files


def decode_chunk(payload: dict[str, Any]) -> dict[str, Any]:
    """A chunk payload back as arrays and lines (what the page does; for tests and tools)."""
    n = int(payload["n"])
    raw = pa.decompress(
        base64.b64decode(str(payload["z"])),
        decompressed_size=int(payload["u"]),
        codec=CODEC,
        asbytes=True,
    )
    at = 0

    def take(dtype: str, count: int) -> npt.NDArray[Any]:
        nonlocal at
        array = np.frombuffer(raw, dtype=dtype, count=count, offset=at)
        at += array.nbytes
        return array

    millis, offsets = take("<i4", n), take("<i4", n + 1)
    service, pod, phase, error = take("<u2", n), take("<u2", n), take("u1", n), take("u1", n)
    text = raw[at:]
    lines = [text[a:b].decode("utf-8") for a, b in itertools.pairwise(offsets.tolist())]
    return {"t": millis, "s": service, "d": pod, "p": phase, "e": error, "lines": lines}


def _codes(column: pa.ChunkedArray) -> tuple[list[str], npt.NDArray[np.uint16]]:
    array = column.combine_chunks()
    if not pa.types.is_dictionary(array.type):
        array = array.dictionary_encode()
    names = [str(v) for v in array.dictionary.to_pylist()]
    codes = np.asarray(array.indices.to_numpy(zero_copy_only=False), dtype=np.uint16)
    return names, codes


def _phase_codes(column: pa.ChunkedArray) -> npt.NDArray[np.uint8]:
    names, codes = _codes(column)
    mapping = np.array([PHASES.index(n) if n in PHASES else 255 for n in names], dtype=np.uint8)
    return mapping[codes] if len(names) else codes.astype(np.uint8)


def log_windows(logs: Logs, t0: float, windows: Windows) -> None:
    """Widen ``windows`` by each phase's span in ``logs`` (times relative to ``t0``)."""
    for code, phase in enumerate(PHASES):
        times = logs.seconds[logs.phase == code]
        if len(times):
            windows.widen(phase, float(times.min()) + t0, float(times.max()) + t0)


def bucket_width(windows: Windows) -> float:
    """A round bucket width (s) giving about BUCKETS buckets over the incident."""
    span = max(windows.end - windows.start, 1.0)
    raw = span / BUCKETS
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600):
        if raw <= step:
            return float(step)
    return float(math.ceil(raw / 600) * 600)


def log_volume(logs: Logs, offset: float, width: float, buckets: int) -> dict[str, Any]:
    """Log lines and error lines per service per bucket: ``{service: [[lines], [errors]]}``.

    ``offset`` is how far the timeline's zero lies after the logs' t0 (seconds)."""
    if len(logs) == 0:
        return {}
    slot = np.clip(((logs.seconds - offset) // width).astype(np.int64), 0, buckets - 1)
    count = len(logs.services)
    flat = logs.service.astype(np.int64) * buckets + slot
    total = np.bincount(flat, minlength=count * buckets).reshape(count, buckets)
    bad = np.bincount(flat[logs.error.astype(bool)], minlength=count * buckets).reshape(
        count, buckets
    )
    return {
        name: [total[i].tolist(), bad[i].tolist()]
        for i, name in sorted(enumerate(logs.services), key=lambda item: item[1])
        if total[i].any()
    }


def moved_series(metrics: pa.Table | None, t0: float) -> list[dict[str, Any]]:
    """The metric series that changed most from ``pre`` to ``during``, with their samples.

    A series' score is |mean during − mean pre| over the baseline's spread (its standard
    deviation, floored at 5% of its mean so a flat baseline does not make every wiggle
    infinite); only series scoring at least MOVED_SCORE are kept, the MOVED_SERIES highest.
    """
    if metrics is None or metrics.num_rows == 0:
        return []
    table = metrics.select(["phase", "ts", "query", "labels", "value"])
    table = pa.table({name: _plain(table.column(name)) for name in table.column_names})
    stats = (
        table.filter(pc.is_in(table.column("phase"), pa.array(["pre", "during"])))
        .group_by(["query", "labels", "phase"], use_threads=False)
        .aggregate([("value", "mean"), ("value", "stddev", pc.VarianceOptions(ddof=1))])
        .to_pylist()
    )
    by_series: dict[tuple[str, str], dict[str, tuple[float, float | None]]] = {}
    for row in stats:
        key = (str(row["query"]), str(row["labels"]))
        by_series.setdefault(key, {})[str(row["phase"])] = (
            float(row["value_mean"]),
            row["value_stddev"],
        )
    scored = []
    for key, phases in by_series.items():
        if "pre" not in phases or "during" not in phases:
            continue
        (pre, std), (during, _) = phases["pre"], phases["during"]
        spread = max(0.0 if std is None or math.isnan(std) else float(std), 0.05 * abs(pre), 1e-9)
        change = abs(during - pre) / spread
        if change >= MOVED_SCORE:
            scored.append((change, key))
    scored.sort(key=lambda item: (-item[0], item[1]))
    out = []
    for change, (query, labels) in scored[:MOVED_SERIES]:
        mask = pc.and_(
            pc.equal(table.column("query"), query), pc.equal(table.column("labels"), labels)
        )
        rows = table.filter(mask)
        rows = rows.take(pc.sort_indices(rows, sort_keys=[("ts", "ascending")]))
        out.append(
            {
                "query": query,
                "labels": _labels_text(labels),
                "score": round(change, 1),
                "t": [round(float(v) - t0, 3) for v in rows.column("ts").to_pylist()],
                "v": [float(v) for v in rows.column("value").to_pylist()],
            }
        )
    return out


def _plain(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A dictionary column as plain strings (other columns as they are)."""
    if pa.types.is_dictionary(column.type):
        return column.cast(pa.string())
    return column


def _labels_text(labels: str) -> str:
    try:
        parsed = json.loads(labels)
    except ValueError:
        return labels
    if not isinstance(parsed, dict):
        return labels
    return ", ".join(f"{k}={v}" for k, v in sorted(parsed.items()))


def event_rows(events: pa.Table | None, t0: float) -> list[dict[str, Any]]:
    """The incident's Kubernetes events in time order (at most MAX_EVENTS)."""
    if events is None or events.num_rows == 0:
        return []
    order = pc.sort_indices(events, sort_keys=[("ts", "ascending")])
    rows = events.take(order).slice(0, MAX_EVENTS).to_pylist()
    keep = ("phase", "type", "reason", "object_kind", "object_name", "message", "count", "source")
    return [{"t": round(float(r["ts"]) - t0, 3), **{k: r.get(k) for k in keep}} for r in rows]


def span_rows(spans: pa.Table | None, t0: float) -> dict[str, Any] | None:
    """Spans of the incident when the dataset has a traces table: columns and rows (capped).

    The table's columns are shown as they are (the format is the system's); a ``ts`` column,
    when present, places each span on the timeline.
    """
    if spans is None:
        return None
    columns = [c for c in spans.column_names if c != "case_id"]
    if "ts" in columns:
        spans = spans.take(pc.sort_indices(spans, sort_keys=[("ts", "ascending")]))
    rows = spans.slice(0, MAX_SPANS).select(columns).to_pylist()
    table = [[_cell(r[c]) for c in columns] for r in rows]
    times = (
        [round(float(r["ts"]) - t0, 3) for r in rows if isinstance(r.get("ts"), (int, float))]
        if "ts" in columns
        else []
    )
    return {"columns": columns, "rows": table, "total": spans.num_rows, "t": times}


def _cell(value: object) -> str | float | int | bool | None:
    if value is None or isinstance(value, (str, float, int, bool)):
        return value
    return json.dumps(value, default=str)
