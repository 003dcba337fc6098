"""``croissant.json``: Croissant 1.0 (JSON-LD) metadata describing the files and fields.

Each table is a ``cr:FileObject`` (Parquet) with its SHA-256 and a ``cr:RecordSet`` with
one field per column (JSON columns are text; the gold plan's operation and target are also
fields of their own, read by JSONPath). Method-visible tables and answers are told apart
in every description. Generated from ``layout`` so it cannot drift from the builder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import pyarrow as pa

from r2act.datasets import layout
from r2act.datasets.card import LICENSE

CONTEXT: Final[dict[str, Any]] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
"""The Croissant 1.0 JSON-LD context."""

_TYPES: Final = {"string": "sc:Text", "double": "sc:Float", "int64": "sc:Integer"}
_PARQUET: Final = "application/x-parquet"
_DESCRIPTIONS: Final = {
    layout.CASES: "Method-visible: one row per case (fold, sizes, action space).",
    layout.LOGS: "Method-visible: log lines, keyed by case_id and phase.",
    layout.EVENTS: "Method-visible: Kubernetes events, keyed by case_id and phase.",
    layout.METRICS: "Method-visible: metric samples, keyed by case_id and phase.",
    layout.STATE: "Method-visible: cluster state at the end of each phase.",
    layout.REQUESTS: "Method-visible: request series derived from the frontend log and "
    "the load generator's stats.",
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


def _file(path: str, sha256: str) -> dict[str, Any]:
    return {
        "@type": "cr:FileObject",
        "@id": path,
        "name": path,
        "description": _DESCRIPTIONS[path],
        "contentUrl": path,
        "encodingFormat": _PARQUET,
        "sha256": sha256,
    }


def _field(
    record_set: str,
    name: str,
    dtype: str,
    description: str,
    *,
    file_id: str,
    column: str,
    json_path: str | None = None,
) -> dict[str, Any]:
    """A field read from ``column`` of a file, optionally a JSONPath inside that column."""
    source: dict[str, Any] = {"fileObject": {"@id": file_id}, "extract": {"column": column}}
    if json_path is not None:
        source["transform"] = {"jsonPath": json_path}
    return {
        "@type": "cr:Field",
        "@id": f"{record_set}/{name}",
        "name": name,
        "description": description,
        "dataType": dtype,
        "source": source,
    }


def record_set_name(path: str) -> str:
    """The record set of a table: its stem, ``answers_`` + stem under answers/."""
    stem = Path(path).stem
    return stem if path in layout.VISIBLE_TABLES else f"answers_{stem}"


def _table_set(path: str, schema: pa.Schema) -> dict[str, Any]:
    name = record_set_name(path)
    fields = [
        _field(
            name,
            f.name,
            _TYPES[str(f.type)],
            layout.FIELD_DOCS[f.name],
            file_id=path,
            column=f.name,
        )
        for f in schema
    ]
    if path == layout.INCIDENTS:
        fields += [
            _field(name, n, "sc:Text", d, file_id=path, column="gold_plan", json_path=p)
            for n, p, d in _GOLD
        ]
    out: dict[str, Any] = {
        "@type": "cr:RecordSet",
        "@id": name,
        "name": name,
        "description": _DESCRIPTIONS[path],
        "field": fields,
    }
    if path in (layout.CASES, layout.INCIDENTS):
        out["key"] = {"@id": f"{name}/case_id"}
    return out


def render_croissant(
    *, name: str, description: str, version: str, date: str, sha256: dict[str, str]
) -> dict[str, Any]:
    """The metadata document; ``sha256`` maps each table's relative path to its digest."""
    tables = [p for p in layout.TABLES if p in sha256]
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "name": name,
        "description": description,
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "license": f"https://spdx.org/licenses/{LICENSE.upper()}.html",
        "version": version,
        "datePublished": date,
        "citeAs": "R2Act: an action-level evaluation layer for microservice incident recovery.",
        "keywords": ["AIOps", "root cause analysis", "incident recovery", "Kubernetes"],
        "distribution": [_file(p, sha256[p]) for p in tables],
        "recordSet": [_table_set(p, layout.TABLES[p]) for p in tables],
    }
