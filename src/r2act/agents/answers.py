"""What a method hands back for one case, and how to read it out of free text.

A model or a command answers with ``{"rca": {...}, "plan": {...}}``; :func:`parse_answer`
finds the JSON object in a reply (code fences and prose around it are tolerated) and
validates it with the prediction models, so a well-formed answer is exactly what
``r2act evaluate`` will read. The JSON Schema handed to structured output is generated
from the same model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from r2act.schema import FaultType, Prediction, RcaPrediction, RecoveryPlan, Topology


class FinalAnswer(BaseModel):
    """A method's answer for one case."""

    model_config = ConfigDict(extra="forbid")

    rca: RcaPrediction = Field(default_factory=RcaPrediction, description="Root cause.")
    plan: RecoveryPlan | None = Field(description="Recovery plan; null means do nothing.")
    evidence: JsonValue = Field(default=None, description="Optional rationale; never scored.")

    def prediction(self, case_id: str, method: str) -> Prediction:
        """The predictions-file line for ``case_id``."""
        return Prediction(
            incident_id=case_id, rca=self.rca, plan=self.plan, method=method, evidence=self.evidence
        )


def case_fault_types(topology: Topology) -> tuple[FaultType, ...]:
    """The fault types a case's answer may name: its system's (``System.fault_types``), so an
    Online Boutique case is never offered ``feature_flag``, which only a flag system has."""
    from r2act.systems import system_of  # the systems' renderers: not at an MCP server's start

    return system_of(topology).fault_types


def answer_schema(fault_types: Sequence[FaultType] | None = None) -> dict[str, Any]:
    """JSON Schema of :class:`FinalAnswer` (for structured output and the command runner).

    ``fault_types`` is the case's system's label space (:func:`case_fault_types`); every
    fault type the schema knows when None (a schema not about one case).
    """
    faults = list(FaultType) if fault_types is None else list(fault_types)
    schema = FinalAnswer.model_json_schema()
    schema["properties"]["rca"] = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "service": {"type": "string", "description": "Root-cause service."},
            "fault_type": {"type": "string", "enum": [f.value for f in faults]},
        },
    }
    return schema


def _json_object(text: str) -> Any:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    return json.loads(text[start : end + 1])


def parse_answer(text: str | None) -> tuple[FinalAnswer | None, str]:
    """(answer, '') or (None, why it is not one) for a reply's text."""
    if not text or not text.strip():
        return None, "the reply is empty"
    try:
        value = _json_object(text)
    except ValueError as error:
        return None, f"not JSON: {str(error).splitlines()[0][:160]}"
    return validate_answer(value)


def validate_answer(value: Any) -> tuple[FinalAnswer | None, str]:
    """(answer, '') or (None, the first problem) for a parsed JSON value."""
    if isinstance(value, dict) and "plan" not in value:
        value = {**value, "plan": None}
    try:
        return FinalAnswer.model_validate(value), ""
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        return None, f"{where}: {first['msg']}"[:300]
