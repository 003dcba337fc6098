"""``schema/*.schema.json``: JSON Schemas generated from the models and the table schemas.

Records, verdicts, folds, state and chaos status come from their pydantic models; every
table's row from its Arrow schema. None is written by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
from pydantic import BaseModel

from r2act.datasets import layout
from r2act.datasets.folds import Folds
from r2act.quality_gate import Verdict
from r2act.schema import BenchmarkRecord, ChaosStatus, ClusterState, KubeEvent

MODELS: dict[str, type[BaseModel]] = {
    "benchmark_record": BenchmarkRecord,
    "audit_verdict": Verdict,
    "folds": Folds,
    "cluster_state": ClusterState,
    "chaos_status": ChaosStatus,
    "kube_event": KubeEvent,
}
_JSON_TYPES = {"string": "string", "double": "number", "int64": "integer"}


def _type(f: pa.Field) -> str | list[str]:
    kind = _JSON_TYPES[str(f.type)]
    return [kind, "null"] if f.nullable else kind


def table_schema(name: str, schema: pa.Schema, entry: str, table: str = "") -> dict[str, Any]:
    """A JSON Schema for one row of a table (``entry``: the entry point's name; ``table``:
    its path, for the columns a table describes in its own words)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"{name} row",
        "type": "object",
        "additionalProperties": False,
        "required": schema.names,
        "properties": {
            f.name: {
                "type": _type(f),
                "description": layout.described(layout.field_doc(table, f.name), entry),
            }
            for f in schema
        },
    }


def write_schemas(
    directory: Path, entry: str, tables: dict[str, pa.Schema] | None = None
) -> list[str]:
    """Write every schema into ``directory`` (``entry``: the name of the systems' entry
    point, ``card.entry_point``; ``tables``: the dataset's tables, ``layout.TABLES`` when
    not given); returns the file names."""
    directory.mkdir(parents=True, exist_ok=True)
    documents: dict[str, dict[str, Any]] = {
        name: model.model_json_schema() for name, model in MODELS.items()
    }
    for path, schema in (layout.TABLES if tables is None else tables).items():
        name = Path(path).stem
        if name not in {"annotations", "chaos_objects", "chaos_status", "chaos_events"}:
            documents[f"{name}_row"] = table_schema(name, schema, entry, path)
    documents["provenance_row"] = table_schema("provenance", layout.PROVENANCE_TABLE, entry)
    for name, document in sorted(documents.items()):
        text = json.dumps(document, indent=2, sort_keys=True) + "\n"
        (directory / f"{name}.schema.json").write_text(text, encoding="utf-8")
    return sorted(f"{n}.schema.json" for n in documents)
