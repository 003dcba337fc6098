"""``croissant.json``: Croissant 1.0 (JSON-LD) metadata describing the files and fields.

Built with mlcroissant's own classes (``Metadata``, ``FileObject``, ``RecordSet``,
``Field``, ``Source``, ``Transform``), which also validate it. Each table is a FileObject
(Parquet) with its SHA-256 and a RecordSet with one field per column (JSON columns are
text; the gold plan's operation, target and parameters are columns of their own, since
mlcroissant applies JSONPath to JSON files, not to a JSON string in a column).
Method-visible tables and answers are told apart in every description. Generated from
``layout`` so it cannot drift from the builder. mlcroissant is imported here only, so only
``dataset build`` pays its import time.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Final

import mlcroissant as mlc
import pyarrow as pa

from r2act.datasets import layout
from r2act.datasets.card import LICENSE

_TYPES: Final = {"string": "sc:Text", "double": "sc:Float", "int64": "sc:Integer"}
_PARQUET: Final = "application/x-parquet"
_DESCRIPTIONS: Final = {
    layout.CASES: "Method-visible: one row per case (fold, sizes, action space).",
    layout.LOGS: "Method-visible: log lines, keyed by case_id and phase.",
    layout.EVENTS: "Method-visible: Kubernetes events, keyed by case_id and phase.",
    layout.METRICS: "Method-visible: metric samples, keyed by case_id and phase.",
    layout.STATE: "Method-visible: cluster state at the end of each phase.",
    layout.REQUESTS: f"Method-visible: request series derived from the {layout.ENTRY} log "
    "and the load generator's stats.",
    layout.TRACES: "Method-visible: spans (one row per span: ids, parent, service, "
    "operation, kind, start, duration, status, attributes), keyed by case_id and phase.",
    layout.INCIDENTS: "Answers (never shown to a method): labels, gold plan, valid and "
    "invalid plans, fault, keyed by case_id and incident_id.",
    layout.AUDIT_TRAIL: "Answers: incidents kept out of the main set, with their reasons.",
    layout.ANNOTATIONS: "Answers: the collector's annotation of each incident.",
    layout.CHAOS_OBJECTS: "Answers: the chaos object each incident injected.",
    layout.CHAOS_STATUS: "Answers: the chaos object's status at the end of each phase.",
    layout.CHAOS_EVENTS: "Answers: Kubernetes events about the chaos objects.",
}
_GOLD: Final = (
    ("gold_operation", "$.operation", "Operation of the gold plan."),
    ("gold_target", "$.target", "Target deployment of the gold plan (absent for no_action)."),
)


def _type(name: str) -> mlc.DataType:
    return {"sc:Text": mlc.DataType.TEXT, "sc:Float": mlc.DataType.FLOAT}.get(
        name, mlc.DataType.INTEGER
    )


def record_set_name(path: str) -> str:
    """The record set of a table: its stem, ``answers_`` + stem under answers/."""
    stem = Path(path).stem
    return stem if layout.is_visible(path) else f"answers_{stem}"


def _field(
    record_set: str,
    name: str,
    dtype: str,
    description: str,
    *,
    file_id: str,
    column: str,
) -> mlc.Field:
    """A field read from ``column`` of a Parquet file."""
    return mlc.Field(
        id=f"{record_set}/{name}",
        name=name,
        description=description,
        data_types=[_type(dtype)],
        source=mlc.Source(file_object=file_id, extract=mlc.Extract(column=column)),
    )


def _record_set(path: str, schema: pa.Schema, entry: str) -> mlc.RecordSet:
    name = record_set_name(path)
    fields = [
        _field(
            name,
            f.name,
            _TYPES[str(f.type)],
            layout.described(layout.field_doc(path, f.name), entry),
            file_id=path,
            column=f.name,
        )
        for f in schema
    ]
    keyed = path in (layout.CASES, layout.INCIDENTS)
    return mlc.RecordSet(
        id=name,
        name=name,
        description=layout.described(_DESCRIPTIONS[path], entry),
        fields=fields,
        key=[f"{name}/case_id"] if keyed else None,
    )


def render_croissant(
    *,
    name: str,
    description: str,
    version: str,
    date: str,
    sha256: dict[str, str],
    entry: str,
) -> dict[str, Any]:
    """The metadata document, built with mlcroissant's own classes.

    ``sha256`` maps each table's relative path to its digest; ``entry`` is the name of the
    systems' entry point (``card.entry_point``). ValueError when mlcroissant
    finds the metadata invalid (a bug in the builder, never the user's data)."""
    tables = [p for p in layout.SCHEMAS if p in sha256]
    metadata = mlc.Metadata(
        name=name,
        description=description,
        conforms_to="http://mlcommons.org/croissant/1.0",
        license=[f"https://spdx.org/licenses/{LICENSE.upper()}.html"],
        version=version,
        date_published=datetime.fromisoformat(date),
        cite_as="R2Act: an action-level evaluation layer for microservice incident recovery.",
        keywords=["AIOps", "root cause analysis", "incident recovery", "Kubernetes"],
        distribution=[
            mlc.FileObject(
                id=p,
                name=p,
                description=layout.described(_DESCRIPTIONS[p], entry),
                content_url=p,
                encoding_formats=[_PARQUET],
                sha256=sha256[p],
            )
            for p in tables
        ],
        record_sets=[_record_set(p, layout.SCHEMAS[p], entry) for p in tables],
    )
    if metadata.ctx.issues.errors:
        raise ValueError(f"Croissant metadata invalid: {sorted(metadata.ctx.issues.errors)[0]}")
    document: dict[str, Any] = metadata.to_json()
    return document
