"""What replaying one prediction produced: the line written to ``replay.jsonl``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

ReplayStatus = Literal["executed", "refused", "no_effect", "error"]


class ClusterCall(BaseModel):
    """One operation replay performed on the cluster, with its result."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ts: float = Field(description="Cluster time when the call returned.")
    call: str = Field(description="What was done: inject, remove, apply_plan, undo, ...")
    ok: bool = Field(description="Whether it succeeded.")
    detail: JsonValue = Field(default=None, description="Result or error message.")


class HealthProbe(BaseModel):
    """One health probe replay took while it judged a plan: the points of its health series."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ts: float = Field(description="Cluster time of the probe, seconds since the epoch.")
    phase: Literal["confirm", "window"] = Field(
        description=(
            "confirm: waiting for the re-injected fault to hurt, before the plan; window: the "
            "health window after the plan was applied."
        )
    )
    healthy: bool = Field(description="All health checks passed.")
    error_rate: float = Field(ge=0, le=1, description="Share of failed user requests just now.")
    unavailable: list[str] = Field(
        default_factory=list, description="Deployments with fewer available than desired."
    )


class ReplayOutcome(BaseModel):
    """The verdict for one prediction."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    incident_id: str = Field(description="Incident replayed.")
    fault_type: str = Field(description="Its root-cause fault type (for per-type reporting).")
    service: str = Field(description="Its root-cause service.")
    method: str | None = Field(default=None, description="Method named by the prediction.")
    status: ReplayStatus = Field(
        description=(
            "executed (plan applied), refused (never touched the cluster), no_effect (the "
            "re-injected fault left the system healthy, so recovery cannot be judged and the "
            "plan was not applied) or error."
        )
    )
    reason: str = Field(default="", description="Why refused or why it errored.")
    plan: JsonValue = Field(default=None, description="The plan as parsed, if it parsed.")
    offline_valid: bool = Field(description="valid(plan) against the incident's labels.")
    effect_confirmed: bool = Field(
        default=False, description="The re-injected fault made the system unhealthy."
    )
    recovered: bool = Field(
        default=False, description="Healthy for the required consecutive probes within the window."
    )
    time_to_recover_s: float | None = Field(
        default=None, description="From applying the plan to the first probe of the healthy run."
    )
    gated_recovered: bool = Field(
        default=False, description="Offline-valid AND recovered: the validity-gated outcome."
    )
    calls: list[ClusterCall] = Field(default_factory=list, description="Cluster operations.")
    health: list[HealthProbe] = Field(
        default_factory=list,
        description=(
            "The health series: every probe from the fault's confirmation to the end of the "
            "health window, in time order (empty for lines written before it was recorded)."
        ),
    )
