"""Predictions: what a method hands in, one JSON object per line. Untrusted input."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from r2act.schema.plans import RecoveryPlan


class RcaPrediction(BaseModel):
    """A method's root-cause answer; unknown names are kept and simply score as wrong."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    service: str | None = Field(default=None, max_length=253, description="Predicted service.")
    fault_type: str | None = Field(default=None, max_length=64, description="Predicted fault type.")


class Prediction(BaseModel):
    """One line of a predictions file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    incident_id: str = Field(min_length=1, max_length=200, description="Incident the line is for.")
    rca: RcaPrediction = Field(default_factory=RcaPrediction, description="Root-cause answer.")
    plan: RecoveryPlan | None = Field(
        default=None, description="Proposed recovery plan; null means the method did not act."
    )
    method: str | None = Field(default=None, max_length=200, description="Method name.")
    evidence: JsonValue = Field(default=None, description="Free-form rationale; never scored.")
