"""Names and table schemas of a published dataset (DESIGN section 7), in one place.

::

    README.md  croissant.json  incidents.jsonl  state.jsonl  folds.json  audit_trail.jsonl
    observations/{logs,events,metrics}.parquet      method-visible, keyed by incident_id+phase
    provenance/{annotations,chaos_objects,chaos_status,chaos_events}.jsonl   ground truth
    schema/*.schema.json   figures/*.png   SHA256SUMS

The Parquet schemas are explicit (never inferred) so a rebuild writes identical bytes and a
reader in any language knows the column types without opening a file.
"""

from __future__ import annotations

from typing import Final, Literal

import pyarrow as pa

from r2act.quality_gate.rawstore import KEY_FIELDS, STAGED_LOG_SCHEMA

README: Final = "README.md"
CROISSANT: Final = "croissant.json"
INCIDENTS: Final = "incidents.jsonl"
STATE: Final = "state.jsonl"
FOLDS: Final = "folds.json"
AUDIT_TRAIL: Final = "audit_trail.jsonl"
SHA256SUMS: Final = "SHA256SUMS"
OBSERVATIONS: Final = "observations"
LOGS: Final = "observations/logs.parquet"
EVENTS: Final = "observations/events.parquet"
METRICS: Final = "observations/metrics.parquet"
PROVENANCE: Final = "provenance"
ANNOTATIONS: Final = "provenance/annotations.jsonl"
CHAOS_OBJECTS: Final = "provenance/chaos_objects.jsonl"
CHAOS_STATUS: Final = "provenance/chaos_status.jsonl"
CHAOS_EVENTS: Final = "provenance/chaos_events.jsonl"
SCHEMA_DIR: Final = "schema"
FIGURES_DIR: Final = "figures"

View = Literal["logs", "logs+events", "full"]
VIEWS: Final[dict[str, tuple[str, ...]]] = {
    "logs": (LOGS,),
    "logs+events": (LOGS, EVENTS),
    "full": (LOGS, EVENTS, METRICS, STATE),
}
"""The paper's modality ablation: each view is a subset of one dataset's files."""

_KEY = list(KEY_FIELDS)
LOG_TABLE: Final = STAGED_LOG_SCHEMA
EVENT_TABLE: Final = pa.schema(
    [
        *_KEY,
        pa.field("ts", pa.float64(), nullable=False),
        pa.field("type", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("object_kind", pa.string(), nullable=False),
        pa.field("object_name", pa.string(), nullable=False),
        pa.field("message", pa.string(), nullable=False),
        pa.field("count", pa.int64(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
    ]
)
METRIC_TABLE: Final = pa.schema(
    [
        *_KEY,
        pa.field("ts", pa.float64(), nullable=False),
        pa.field("query", pa.string(), nullable=False),
        pa.field("labels", pa.string(), nullable=False),
        pa.field("value", pa.float64(), nullable=False),
    ]
)
TABLES: Final[dict[str, pa.Schema]] = {LOGS: LOG_TABLE, EVENTS: EVENT_TABLE, METRICS: METRIC_TABLE}

FIELD_DOCS: Final[dict[str, str]] = {
    "incident_id": "Incident id; joins with incidents.jsonl.",
    "phase": "Collection phase: pre, during or post.",
    "ts": "Seconds since the epoch (UTC).",
    "pod": "Pod name.",
    "container": "Container name.",
    "service": "The pod's app label.",
    "line": "The raw log line in the service's own format.",
    "type": "Event type: Normal or Warning.",
    "reason": "Machine-readable event reason.",
    "object_kind": "Kind of the involved object.",
    "object_name": "Name of the involved object.",
    "message": "Human-readable event message.",
    "count": "How many times the event happened.",
    "source": "Component that reported the event.",
    "query": "Name of the campaign metric query.",
    "labels": "Series labels as JSON with sorted keys.",
    "value": "Sample value.",
}
"""One sentence per observation column, for the card, the schemas and Croissant."""
