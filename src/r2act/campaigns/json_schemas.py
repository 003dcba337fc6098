"""JSON Schemas of the files r2act reads and writes, generated from the models.

Generated, never hand-written, so a schema cannot drift from the code that validates the
data; ``r2act schema export`` writes them and a test checks the committed copies in
``r2act/schema/json/``. Lives here because ``campaigns`` is the lowest layer that sees both
the record models and the manifest model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from r2act.campaigns.manifest import Manifest
from r2act.schema import (
    PLAN_ADAPTER,
    ActionSpace,
    BenchmarkRecord,
    PlannedIncident,
    Prediction,
)

COMMITTED_DIR = Path(__file__).resolve().parent.parent / "schema" / "json"
"""Where the package ships its generated schemas."""


def schema_documents() -> dict[str, dict[str, Any]]:
    """Each exported schema by file stem (``<stem>.schema.json``)."""
    return {
        "benchmark_record": BenchmarkRecord.model_json_schema(),
        "prediction": Prediction.model_json_schema(),
        "planned_incident": PlannedIncident.model_json_schema(),
        "recovery_plan": PLAN_ADAPTER.json_schema(),
        "manifest": Manifest.model_json_schema(),
        "action_space": ActionSpace.model_json_schema(),
    }


def render_schema(document: dict[str, Any]) -> str:
    """The exact text written for a schema: sorted keys, two-space indent, final newline."""
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def export_schemas(directory: Path) -> list[Path]:
    """Write every schema into ``directory``; returns the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, document in schema_documents().items():
        path = directory / f"{stem}.schema.json"
        path.write_text(render_schema(document), encoding="utf-8")
        written.append(path)
    return written
