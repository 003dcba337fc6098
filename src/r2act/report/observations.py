"""One incident's observations as the incident page loads them: log chunks and a timeline.

Paper scale is 12.6M log lines (about 3 GB of text), so how lines get onto the page decides
both the build time and the page weight:

- Lines are never re-encoded one by one. A chunk of up to :data:`CHUNK_LINES` lines ships as
  the UTF-8 bytes Arrow already holds plus their offsets, each base64-encoded (one C call per
  chunk) inside a small JavaScript file. The page decodes a chunk only when the viewer needs
  it, and puts each line on screen as text (``textContent``), never as markup: base64 has no
  character that can end a string or a tag, so a hostile line cannot escape its chunk.
- The timeline is aggregated here (log lines and error lines per service per time bucket,
  the metric series that moved most between the baseline and the fault, events, and spans
  when the dataset has a traces table), so the page draws it without reading the logs.

Each chunk file stays far below the 5 MB page budget (:data:`CHUNK_BYTES`).
"""

from __future__ import annotations

import base64
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
TRACES = f"{layout.OBSERVATIONS}/traces.parquet"
"""Where a dataset holds spans, when its system emits them (DESIGN 7, ``full+traces``)."""

_ERROR = ERROR_LINE.removeprefix("(?i)")


def cases_of(path: Path, columns: list[str] | None = None) -> Iterator[tuple[str, pa.Table]]:
    """(case id, rows) for each case of a dataset table, reading one row group at a time.

    The dataset writes one row group per case in case order; a case spread over several
    consecutive groups is joined, so this holds for any grouping that keeps cases together.
    """
    file = pq.ParquetFile(path)
    wanted = None if columns is None else ["case_id", *[c for c in columns if c != "case_id"]]
    current: str | None = None
    parts: list[pa.Table] = []
    for index in range(file.num_row_groups):
        table = file.read_row_group(index, columns=wanted)
        if table.num_rows == 0:
            continue
        ids = table.column("case_id")
        for case in pc.unique(ids).to_pylist():
            rows = table if len(ids.unique()) == 1 else table.filter(pc.equal(ids, case))
            if case != current:
                if current is not None:
                    yield current, pa.concat_tables(parts)
                current, parts = case, []
            parts.append(rows)
    if current is not None:
        yield current, pa.concat_tables(parts)


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
        for phase in PHASES:
            rows = table.filter(pc.equal(table.column("phase"), phase))
            if rows.num_rows:
                low, high = pc.min_max(rows.column("ts")).values()
                windows.widen(phase, float(low.as_py()), float(high.as_py()))
    return windows


def _b64(data: bytes | memoryview | npt.NDArray[Any]) -> str:
    raw = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
    return base64.b64encode(raw).decode("ascii")


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


def log_chunks(logs: pa.Table, t0: float) -> tuple[LogIndex, list[dict[str, Any]]]:
    """The incident's log lines in time order, as chunk payloads and their index.

    Each payload is ``{"n", "t", "p", "s", "d", "e", "o", "x"}``: the count, then base64 of
    milliseconds since ``t0`` (int32), phase (uint8, index into PHASES), service and pod
    (uint16, into the index's lists), error flag (uint8), line offsets (int32, n + 1) and the
    UTF-8 text.
    """
    if logs.num_rows == 0:
        return LogIndex(0, [], [], [], 0, 0), []
    order = pc.sort_indices(logs, sort_keys=[("ts", "ascending")])
    logs = logs.take(order)
    line = logs.column("line").combine_chunks()
    lengths = pc.binary_length(line)
    cut = int(pc.sum(pc.greater(lengths, MAX_LINE_BYTES)).as_py() or 0)
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
    if not pa.types.is_string(line.type):
        line = line.cast(pa.string())
    errors = pc.match_substring_regex(line, _ERROR, ignore_case=True).fill_null(False)
    error_flags = np.asarray(errors.to_numpy(zero_copy_only=False), dtype=np.uint8)
    services, service_codes = _codes(logs.column("service"))
    pods, pod_codes = _codes(logs.column("pod"))
    phase_codes = _phase_codes(logs.column("phase"))
    millis = np.round((logs.column("ts").to_numpy() - t0) * 1000).astype(np.int32)
    offsets = np.frombuffer(line.buffers()[1], dtype=np.int32)[
        line.offset : line.offset + len(line) + 1
    ]
    data = line.buffers()[2]
    payloads = []
    sizes = []
    start = 0
    n = len(line)
    while start < n:
        end = min(n, start + CHUNK_LINES)
        limit = offsets[start] + CHUNK_BYTES
        if offsets[end] > limit:  # long lines: cut the chunk at the byte budget
            end = max(start + 1, int(np.searchsorted(offsets, limit, side="right")) - 1)
        base = int(offsets[start])
        text = memoryview(data)[base : int(offsets[end])] if data is not None else b""
        payloads.append(
            {
                "n": end - start,
                "t": _b64(millis[start:end]),
                "p": _b64(phase_codes[start:end]),
                "s": _b64(service_codes[start:end]),
                "d": _b64(pod_codes[start:end]),
                "e": _b64(error_flags[start:end]),
                "o": _b64((offsets[start : end + 1] - base).astype(np.int32)),
                "x": _b64(text),
            }
        )
        sizes.append(end - start)
        start = end
    index = LogIndex(n, sizes, services, pods, int(error_flags.sum()), cut)
    return index, payloads


def _codes(column: pa.ChunkedArray) -> tuple[list[str], npt.NDArray[np.uint16]]:
    encoded = column.combine_chunks().dictionary_encode()
    names = [str(v) for v in encoded.dictionary.to_pylist()]
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.uint16)
    return names, codes


def _phase_codes(column: pa.ChunkedArray) -> npt.NDArray[np.uint8]:
    names, codes = _codes(column)
    mapping = np.array([PHASES.index(n) if n in PHASES else 255 for n in names], dtype=np.uint8)
    return mapping[codes] if len(names) else codes.astype(np.uint8)


def bucket_width(windows: Windows) -> float:
    """A round bucket width (s) giving about BUCKETS buckets over the incident."""
    span = max(windows.end - windows.start, 1.0)
    raw = span / BUCKETS
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600):
        if raw <= step:
            return float(step)
    return float(math.ceil(raw / 600) * 600)


def log_volume(logs: pa.Table, t0: float, width: float, buckets: int) -> dict[str, Any]:
    """Log lines and error lines per service per bucket: ``{service: [[lines], [errors]]}``."""
    if logs.num_rows == 0:
        return {}
    services, codes = _codes(logs.column("service"))
    slot = np.clip(((logs.column("ts").to_numpy() - t0) // width).astype(np.int64), 0, buckets - 1)
    errors = pc.match_substring_regex(logs.column("line"), _ERROR, ignore_case=True)
    flag = np.asarray(errors.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
    flat = codes.astype(np.int64) * buckets + slot
    total = np.bincount(flat, minlength=len(services) * buckets).reshape(len(services), buckets)
    bad = np.bincount(flat[flag], minlength=len(services) * buckets).reshape(len(services), buckets)
    return {
        name: [total[i].tolist(), bad[i].tolist()]
        for i, name in sorted(enumerate(services), key=lambda item: item[1])
    }


def moved_series(metrics: pa.Table | None, t0: float) -> list[dict[str, Any]]:
    """The metric series that changed most from ``pre`` to ``during``, with their samples.

    A series' score is |mean during − mean pre| over the baseline's spread (its standard
    deviation, floored at 5% of its mean so a flat baseline does not make every wiggle
    infinite); only series scoring at least MOVED_SCORE are kept, the MOVED_SERIES highest.
    """
    if metrics is None or metrics.num_rows == 0:
        return []
    frame = metrics.select(["phase", "ts", "query", "labels", "value"]).to_pandas()
    frame["series"] = frame["query"].astype(str) + "\x00" + frame["labels"].astype(str)
    grouped = frame.groupby(["series", "phase"], observed=True)["value"].agg(["mean", "std"])
    scored = []
    for series in frame["series"].unique():
        try:
            pre = grouped.loc[(series, "pre")]
            during = grouped.loc[(series, "during")]
        except KeyError:
            continue
        spread = max(
            float(0.0 if np.isnan(pre["std"]) else pre["std"]), 0.05 * abs(pre["mean"]), 1e-9
        )
        change = abs(float(during["mean"]) - float(pre["mean"])) / spread
        if change >= MOVED_SCORE:
            scored.append((change, series))
    scored.sort(key=lambda item: (-item[0], item[1]))
    out = []
    for change, series in scored[:MOVED_SERIES]:
        rows = frame[frame["series"] == series].sort_values("ts")
        query, labels = series.split("\x00", 1)
        out.append(
            {
                "query": query,
                "labels": _labels_text(labels),
                "score": round(change, 1),
                "t": [round(float(v) - t0, 3) for v in rows["ts"]],
                "v": [float(v) for v in rows["value"]],
            }
        )
    return out


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
