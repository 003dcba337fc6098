"""``croissant.json``: Croissant 1.0 (JSON-LD) metadata describing the files and fields.

Each data file is a ``cr:FileObject`` with its SHA-256; each table is a ``cr:RecordSet``
whose fields say where their values come from (a Parquet column or a JSONPath into a JSON
line). Generated from ``layout`` so it cannot drift from what the builder writes.
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
_JSONL: Final = "application/jsonlines"
_PARQUET: Final = "application/x-parquet"

_RECORD_FIELDS: Final = (
    ("incident_id", "incident_id", None, "sc:Text", "Stable incident id."),
    ("service", "labels", "service", "sc:Text", "Root-cause service (label)."),
    ("fault_type", "labels", "fault_type", "sc:Text", "Root-cause fault type (label)."),
    ("intensity", "labels", "intensity", "sc:Text", "Fault intensity."),
    ("mechanism", "labels", "mechanism", "sc:Text", "Injection mechanism."),
    ("gold_operation", "gold_plan", "operation", "sc:Text", "Operation of the gold plan."),
    ("policy", "policy", None, "sc:Text", "Recovery-semantics policy of the labels."),
    ("log_records", "observations", "log_records", "sc:Integer", "Log records of the incident."),
)


def _file(path: str, fmt: str, sha256: str, description: str) -> dict[str, Any]:
    return {
        "@type": "cr:FileObject",
        "@id": path,
        "name": path,
        "description": description,
        "contentUrl": path,
        "encodingFormat": fmt,
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


def _table_set(path: str, schema: pa.Schema) -> dict[str, Any]:
    name = Path(path).stem
    return {
        "@type": "cr:RecordSet",
        "@id": name,
        "name": name,
        "description": f"Method-visible {name}, one row per item, keyed by incident_id and phase.",
        "field": [
            _field(
                name,
                f.name,
                _TYPES[str(f.type)],
                layout.FIELD_DOCS[f.name],
                file_id=path,
                column=f.name,
            )
            for f in schema
        ],
    }


def render_croissant(
    *, name: str, description: str, version: str, date: str, sha256: dict[str, str]
) -> dict[str, Any]:
    """The metadata document; ``sha256`` maps each data file's relative path to its digest."""
    files = [
        _file(layout.INCIDENTS, _JSONL, sha256[layout.INCIDENTS], "Benchmark records."),
        _file(layout.LOGS, _PARQUET, sha256[layout.LOGS], "Log lines."),
        _file(layout.EVENTS, _PARQUET, sha256[layout.EVENTS], "Kubernetes events."),
        _file(layout.METRICS, _PARQUET, sha256[layout.METRICS], "Metric samples."),
        _file(layout.STATE, _JSONL, sha256[layout.STATE], "Cluster state per phase."),
    ]
    incidents = {
        "@type": "cr:RecordSet",
        "@id": "incidents",
        "name": "incidents",
        "description": "One quality-audited incident per record, with labels and plan sets.",
        "key": {"@id": "incidents/incident_id"},
        "field": [
            _field("incidents", n, t, d, file_id=layout.INCIDENTS, column=c, json_path=p)
            for n, c, p, t, d in _RECORD_FIELDS
        ],
    }
    state = {
        "@type": "cr:RecordSet",
        "@id": "state",
        "name": "state",
        "description": "Deployments and pods at the end of each phase.",
        "field": [
            _field(
                "state",
                "incident_id",
                "sc:Text",
                layout.FIELD_DOCS["incident_id"],
                file_id=layout.STATE,
                column="incident_id",
            ),
            _field(
                "state",
                "phase",
                "sc:Text",
                layout.FIELD_DOCS["phase"],
                file_id=layout.STATE,
                column="phase",
            ),
        ],
    }
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
        "distribution": files,
        "recordSet": [
            incidents,
            *(_table_set(p, s) for p, s in layout.TABLES.items()),
            state,
        ],
    }
