"""The traces table: one row per span, read from the raw store's per-phase traces files.

The raw file is the contract of ``schema.rawstore.TRACES``: one zstd frame of JSON lines,
one object per span with the fields of ``schema.traces.Span`` as keys. A phase without
the file has no spans (the campaign collected none); a dataset whose incidents have none
has no traces table at all (``layout.TRACES`` is optional), so the paper's views and the
bytes of a dataset built without traces are unchanged.

Attributes become JSON text with sorted keys, like every nested column of the dataset.
Spans are written in the order the file holds them; a trace store returns them grouped by
trace, which is what a reader of one trace wants.

``answer_leaks`` is the check that no span names the answer: the incident id, the chaos
object's name or a fault type's name in an operation or an attribute. The build refuses
such an incident and ``validate`` reports one, so a collector that ever copied an
injector's label into a span is caught before publication. Keys of the OpenTelemetry
conventions' ``feature_flag.`` namespace (``feature_flag.key``, ``.result.variant``,
``.provider.name``) are read as blank: a flag service sets them on every evaluation, whatever is
injected, so their name says nothing about the fault, while the fault type
``feature_flag`` would otherwise match each of them. Their values are still read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from r2act.datasets.layout import TRACE_TABLE
from r2act.schema import FaultType
from r2act.schema.rawstore import TRACES
from r2act.schema.traces import Span

SPAN_COLUMNS = pa.schema([f for f in TRACE_TABLE if f.name not in {"case_id", "phase"}])
"""The traces table's columns without its keys, in order."""
_FIELDS = Span._fields


def _row(line: bytes, where: str) -> dict[str, Any]:
    try:
        span = json.loads(line)
        row = {name: span[name] for name in _FIELDS}
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{where}: not a span with the fields of schema.traces.Span") from exc
    row["attributes"] = json.dumps(row["attributes"], sort_keys=True, separators=(",", ":"))
    return row


def read_spans(phase_dir: Path) -> pa.Table:
    """The spans of one phase as a ``SPAN_COLUMNS`` table (empty without a traces file).

    Raises ValueError naming the file and line on a line that is not a span.
    """
    path = phase_dir / TRACES
    if not path.is_file():
        return SPAN_COLUMNS.empty_table()
    rows = []
    with pa.CompressedInputStream(pa.OSFile(str(path), "rb"), "zstd") as handle:
        data = handle.read()
    for number, line in enumerate(data.splitlines(), 1):
        if line.strip():
            rows.append(_row(line, f"{path}:{number}"))
    columns = {name: [r[name] for r in rows] for name in SPAN_COLUMNS.names}
    columns["duration_s"] = [float(v) for v in columns["duration_s"]]
    columns["start"] = [float(v) for v in columns["start"]]
    return pa.Table.from_pydict(columns, schema=SPAN_COLUMNS)


def has_traces(incident_dir: Path, phases: Iterable[str]) -> bool:
    """Whether any phase of a raw incident holds a traces file."""
    return any((incident_dir / phase / TRACES).is_file() for phase in phases)


def forbidden_words(incident_id: str, chaos_name: str) -> list[str]:
    """What no span of an incident may carry: its id, its chaos object's name, and the
    name of every fault type (which would name the injected fault)."""
    words = [incident_id, chaos_name, *(f.value for f in FaultType)]
    return [w for w in words if w]


CONVENTION_KEYS = r'"feature_flag\.[a-z_.]+":'
"""An attribute key of the conventions' feature-flag namespace (blanked before matching)."""


def answer_leaks(table: pa.Table, words: Iterable[str]) -> list[str]:
    """The forbidden ``words`` found in the operation or attributes of any span of
    ``table`` (case-insensitive), sorted; conventions' feature-flag keys excepted."""
    if table.num_rows == 0:
        return []
    attributes = pc.replace_substring_regex(table["attributes"], CONVENTION_KEYS, '"":')
    text = pc.utf8_lower(pc.binary_join_element_wise(table["operation"], attributes, "\x00"))
    return sorted({w for w in words if pc.any(pc.match_substring(text, w.lower())).as_py()})
