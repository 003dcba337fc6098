"""The published prediction JSON Schema accepts exactly the plans evaluate accepts."""

from __future__ import annotations

import json

import jsonschema
import pytest
from pydantic import ValidationError

from r2act.campaigns.json_schemas import COMMITTED_DIR
from r2act.schema import Prediction

_SCHEMA = json.loads((COMMITTED_DIR / "prediction.schema.json").read_text("utf-8"))


@pytest.mark.parametrize(
    "memory_limit", ["512Mi", "1Gi", "300M", "268435456", "lots", "512MB", "0", "0Mi", "-1Gi"]
)
def test_memory_limit_verdicts_agree(memory_limit: str) -> None:
    line = {
        "incident_id": "onlineboutique_cartservice_memory_pressure_severe_r01",
        "plan": {
            "operation": "increase_memory_limit",
            "target": "cartservice",
            "memory_limit": memory_limit,
        },
    }
    try:
        Prediction.model_validate_json(json.dumps(line))
        python_ok = True
    except ValidationError:
        python_ok = False
    schema_ok = jsonschema.Draft202012Validator(_SCHEMA).is_valid(line)
    assert schema_ok == python_ok, memory_limit
