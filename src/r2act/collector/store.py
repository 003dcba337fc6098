"""Writing the raw store: every file goes to a temporary name and is renamed into place.

A reader therefore sees a file whole or not at all, and an interrupted incident leaves only
``.*.tmp`` debris that resume sweeps away with the rest of the partial directory. Logs are
streamed batch by batch into one zstd frame (never the whole phase in memory; zstd level 1
compresses about three times faster than zlib level 1 and a quarter smaller, measured by
``bench/collect.py --codecs``); each line is assembled from pre-encoded pieces because
``json.dumps`` per record dominated the cost of a paper-scale campaign. Disk failures
become one-line ``DataError``\\ s naming the path.
"""

from __future__ import annotations

import errno
import json
import os
import queue
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from json.encoder import encode_basestring_ascii as _quote
from operator import itemgetter
from pathlib import Path
from typing import IO, Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard
from pydantic import BaseModel

from r2act.errors import DataError
from r2act.quality_gate.evidence import WrittenLogs
from r2act.schema import KubeEvent, LogLine, MetricSeries
from r2act.schema.traces import Span

_DISK_ERRNOS = {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT}
_FIX = {
    errno.ENOSPC: "free some space or choose another --out",
    errno.EDQUOT: "free some space or choose another --out",
}

METRICS_SCHEMA = pa.schema(
    [
        pa.field("ts", pa.float64(), nullable=False),
        pa.field("query", pa.string(), nullable=False),
        pa.field("labels", pa.string(), nullable=False),
        pa.field("value", pa.float64(), nullable=False),
    ]
)
"""Long format: one row per (series, point); ``labels`` is JSON with sorted keys."""


def disk_error(error: OSError, path: Path) -> DataError:
    """Translate an OS error while writing ``path`` into the one-line error the CLI prints."""
    where = error.filename or path
    what = error.strerror or type(error).__name__
    fix = _FIX.get(error.errno or 0, "make it writable or choose another --out")
    return DataError(f"{where}: cannot write the run directory: {what} ({fix})")


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn disk-full, read-only and permission errors under ``path`` into ``DataError``."""
    try:
        yield
    except OSError as error:
        if error.errno in _DISK_ERRNOS:
            raise disk_error(error, path) from error
        raise


@contextmanager
def atomic_file(path: Path) -> Iterator[IO[bytes]]:
    """Write a temporary sibling of ``path``; rename it over ``path`` only on success."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with writing(path):
        try:
            with open(tmp, "wb") as handle:
                yield handle
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` atomically."""
    with atomic_file(path) as handle:
        handle.write(data)


def write_json(path: Path, value: BaseModel | dict[str, Any]) -> None:
    """Write a model or a plain JSON object atomically, pretty enough for a human to read."""
    if isinstance(value, BaseModel):
        text = value.model_dump_json(indent=2)
    else:
        text = json.dumps(value, indent=2, sort_keys=False, default=str)
    write_bytes(path, text.encode() + b"\n")


class _LineEncoder:
    """Encodes LogLines as ``{"ts", "pod", "container", "service", "line"}`` JSON lines.

    The pod/container/service part repeats for thousands of lines, so it is encoded once per
    distinct triple; only the timestamp and the raw line are encoded per record. A batch
    holds each pod's piece as one run of lines sharing the very same three string objects,
    so the triple is looked up again only when one of them is another object than the
    previous line's (identity is cheaper than building and hashing the key per line; an
    equal copy still finds its entry). Likewise a timestamp is formatted again only when it
    is another object than the previous line's: the rows of one Locust stats table share
    one, and a float's ``repr`` costs as much as quoting a line. With ``lines``, every raw
    line is also appended there (what ``WrittenLogs`` keeps).
    """

    def __init__(self, lines: list[str] | None = None) -> None:
        self._middle: dict[tuple[str, str, str], str] = {}
        self._lines = lines

    def written(self) -> WrittenLogs:
        """The lines kept and the distinct pods and services, in order of first appearance."""
        keys = list(self._middle)
        return WrittenLogs(
            lines=pa.array(self._lines or [], pa.string()),
            services=tuple(dict.fromkeys(k[2] for k in keys)),
            pods=tuple(dict.fromkeys(k[0] for k in keys)),
        )

    def encode(self, batch: Sequence[LogLine]) -> bytes:
        middle = self._middle
        parts: list[str] = []
        append = parts.append
        if self._lines is not None:
            self._lines.extend(map(_TEXT, batch))
        last_pod = last_container = last_service = last_ts = None
        mid = stamp = ""
        for ts, pod, container, service, line in batch:
            if (
                pod is not last_pod
                or container is not last_container
                or service is not last_service
            ):
                last_pod, last_container, last_service = pod, container, service
                key = (pod, container, service)
                found = middle.get(key)
                if found is None:
                    found = f', "pod": {_quote(pod)}, "container": {_quote(container)}, '
                    found += f'"service": {_quote(service)}, "line": '
                    middle[key] = found
                mid = found
            if ts is not last_ts:  # a stats table's rows share one float: one repr for all
                last_ts = ts
                stamp = f'{{"ts": {ts!r}'
            append(f"{stamp}{mid}{_quote(line)}}}\n")
        return "".join(parts).encode("ascii")


_TEXT = itemgetter(4)
"""A ``LogLine``'s raw text."""
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


_CHUNK_BYTES = 1 << 20
"""Encoded bytes collected before they go to the compressor thread."""


class _Stream(Protocol):
    def compress(self, data: bytes, /) -> bytes: ...
    def flush(self) -> bytes: ...


def _stream(path: Path, level: int) -> _Stream:
    """The compressor the file name asks for: ``.gz`` gzip (the format before zstd; kept so
    tests can write an old run), anything else one zstd frame with its content checksum."""
    if path.suffix == ".gz":
        return zlib.compressobj(level, zlib.DEFLATED, 31)
    return zstandard.ZstdCompressor(level=level, write_checksum=True).compressobj()


class _Compressor:
    """Compresses and writes log bytes on a helper thread.

    zstd, zlib and file writes release the GIL, so on a second core they overlap with
    telemetry generation and line encoding, which hold it. The queue is bounded: memory
    stays at a few batches however long the phase. An error on the thread is re-raised in
    the caller.
    """

    def __init__(self, handle: IO[bytes], compressor: _Stream) -> None:
        self._handle = handle
        self._compressor = compressor
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="r2act-compress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        # Always drain up to the final None, even after an error, so the caller never blocks.
        while (chunk := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self._handle.write(self._compressor.compress(chunk))
                except BaseException as error:  # handed to the caller by write()/close()
                    self._error = error
        if self._error is None:
            try:
                self._handle.write(self._compressor.flush())
            except BaseException as error:
                self._error = error

    def write(self, chunk: bytes) -> None:
        """Queue encoded bytes (blocks while the queue is full)."""
        if self._error is not None:
            raise self._error
        self._queue.put(chunk)

    def close(self) -> None:
        """Flush the stream and wait for the thread; re-raise its error, if any."""
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error


def write_logs(
    path: Path,
    batches: Iterable[Sequence[LogLine]],
    level: int = 1,
    keep: Callable[[WrittenLogs], None] | None = None,
) -> int:
    """Stream log batches into a compressed JSON-lines file; returns the number of records.

    One zstd frame (or, for a ``.gz`` name, one zlib stream with a gzip wrapper) fed the
    same chunks in the same order is byte-identical for identical input (no name, no mtime,
    no threads), so a seeded campaign's raw store is reproducible byte for byte. ``keep``
    is handed the lines written (``quality_gate.evidence.WrittenLogs``) once the file is
    in place, for judging the incident without parsing the file back.
    """
    encoder = _LineEncoder([] if keep is not None else None)
    count = 0

    def chunks() -> Iterator[bytes]:
        nonlocal count
        for batch in batches:
            count += len(batch)
            yield encoder.encode(batch)
            # a LogLine is a tuple, which the garbage collector tracks: not kept alive
            # while the next batch is generated, it does not bring the next full pass closer
            del batch

    _compress_chunks(path, level, chunks())
    if keep is not None:
        keep(encoder.written())
    return count


def _compress_chunks(path: Path, level: int, chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` through one compressed stream into ``path``, atomically.

    Chunks are handed over in runs of at least ``_CHUNK_BYTES`` (fewer thread switches);
    the same chunks in the same order give the same bytes."""
    pending: list[bytes] = []
    size = 0
    with atomic_file(path) as handle:
        compressor = _Compressor(handle, _stream(path, level))
        try:
            for chunk in chunks:
                pending.append(chunk)
                size += len(chunk)
                if size >= _CHUNK_BYTES:
                    compressor.write(b"".join(pending))
                    pending, size = [], 0
            compressor.write(b"".join(pending))
        finally:
            compressor.close()


def write_traces(path: Path, batches: Iterable[Sequence[Span]], level: int = 1) -> int:
    """Stream span batches into one zstd frame of JSON lines (``schema.rawstore.TRACES``);
    returns the number of spans.

    One object per span, keyed by ``Span``'s field names in their order, attributes in the
    order the adapter set them: identical spans give identical bytes.
    """
    encoder = _SpanEncoder()
    count = 0

    def chunks() -> Iterator[bytes]:
        nonlocal count
        for batch in batches:
            count += len(batch)
            yield encoder.encode(batch)

    _compress_chunks(path, level, chunks())
    return count


class _SpanEncoder:
    """Encodes Spans as JSON lines, each attributes dict once.

    An adapter may hand many spans the same attributes dict (the simulator does, per span
    shape and outcome); its encoding is kept with the dict itself, so an id is never
    reused while its entry lives."""

    def __init__(self) -> None:
        self._attributes: dict[int, tuple[object, str]] = {}
        self._dumps = json.JSONEncoder(separators=(", ", ": "), ensure_ascii=True).encode

    def encode(self, batch: Sequence[Span]) -> bytes:
        known = self._attributes
        if len(known) > 4096:
            known.clear()
        parts: list[str] = []
        append = parts.append
        for trace, span, parent, service, operation, kind, start, took, status, attrs in batch:
            found = known.get(id(attrs))
            if found is None or found[0] is not attrs:
                found = known[id(attrs)] = (attrs, self._dumps(attrs))
            append(
                f'{{"trace_id": {_quote(trace)}, "span_id": {_quote(span)}, '
                f'"parent_id": {_quote(parent)}, "service": {_quote(service)}, '
                f'"operation": {_quote(operation)}, "kind": {_quote(kind)}, '
                f'"start": {start!r}, "duration_s": {took!r}, "status": {_quote(status)}, '
                f'"attributes": {found[1]}}}\n'
            )
        return "".join(parts).encode("ascii")


def write_events(path: Path, events: Iterable[KubeEvent]) -> int:
    """Write Kubernetes events as JSON lines; returns how many."""
    lines = [event.model_dump_json() for event in events]
    write_bytes(path, "".join(line + "\n" for line in lines).encode())
    return len(lines)


def write_metrics(path: Path, series: Iterable[MetricSeries]) -> int:
    """Write metric series to Parquet in long format; returns the number of points.

    A series' query and labels repeat on each of its rows: they are converted to Arrow once
    per series and repeated by ``take`` (the columns stay plain strings, so the file is the
    one a column built row by row gives), not converted once per row. The labels' JSON is
    ``json.dumps(labels, sort_keys=True)``'s, from one encoder: ``dumps`` builds a new one
    for every call that passes an option, which cost about as much as the encoding."""
    encode = json.JSONEncoder(sort_keys=True).encode
    ts: list[float] = []
    value: list[float] = []
    query: list[str] = []
    labels: list[str] = []
    sizes: list[int] = []
    for one in series:
        query.append(one.query)
        labels.append(encode(one.labels))
        sizes.append(len(one.points))
        ts.extend(map(_FIRST, one.points))
        value.extend(map(_SECOND, one.points))
    rows = pa.array(np.repeat(np.arange(len(sizes), dtype=np.int64), sizes))
    columns = {
        "ts": ts,
        "query": pa.array(query, pa.string()).take(rows),
        "labels": pa.array(labels, pa.string()).take(rows),
        "value": value,
    }
    table = pa.table(columns, METRICS_SCHEMA)
    with atomic_file(path) as handle:
        pq.write_table(table, handle, compression="zstd")
    return len(ts)
