"""Benchmark records: one admitted incident with its labels, action space and plan sets."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from r2act.schema.faults import FaultSpec, FaultType, Intensity, NoiseLevel
from r2act.schema.plans import (
    IncreaseMemoryLimit,
    InvalidPlan,
    Operation,
    PlanPattern,
    RecoveryPlan,
    RepairDependency,
    RollbackConfig,
    ScaleOut,
    plan_target,
)
from r2act.schema.quantities import memory_bytes

SCHEMA_VERSION = "1.0"
"""Version of the record format; bumped on any incompatible change."""


class ActionSpace(BaseModel):
    """What may be executed for this incident. A plan outside it is never run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    operations: list[Operation] = Field(description="Admissible operations.")
    targets: list[str] = Field(description="Deployments a plan may act on.")
    min_replicas: int = Field(ge=1, description="Smallest replica count a scale_out may ask for.")
    max_replicas: int = Field(ge=1, description="Largest replica count a scale_out may ask for.")
    max_memory_limit: str = Field(description="Largest memory limit a plan may set.")
    current_memory_limits: dict[str, str] = Field(
        description=(
            "Memory limit per target as the system ships it (an incident's own current "
            "limit is in its observations); a new limit may be any positive quantity up "
            "to max_memory_limit."
        )
    )
    scopes: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            "Rollback scopes per target: its route rules ('METHOD /path'), then the keys "
            "of the feature flags its code reads."
        ),
    )
    dependencies: dict[str, list[str]] = Field(
        default_factory=dict, description="Dependency endpoints ('name:port') per target."
    )

    def contains(self, plan: RecoveryPlan) -> bool:
        """True when every part of ``plan`` lies inside this action space."""
        if Operation(plan.operation) not in self.operations:
            return False
        target = plan_target(plan)
        if target is not None and target not in self.targets:
            return False
        if isinstance(plan, ScaleOut):
            return self.min_replicas <= plan.replicas <= self.max_replicas
        if isinstance(plan, IncreaseMemoryLimit):
            if plan.target not in self.current_memory_limits:
                return False
            limit = memory_bytes(plan.memory_limit)
            return 0 < limit <= memory_bytes(self.max_memory_limit)
        if isinstance(plan, RollbackConfig):
            return plan.scope in self.scopes.get(plan.target, [])
        if isinstance(plan, RepairDependency):
            return plan.dependency in self.dependencies.get(plan.target, [])
        return True


class RcaLabel(BaseModel):
    """Ground-truth root cause."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    service: str = Field(description="Root-cause service.")
    fault_type: FaultType = Field(description="Root-cause fault type.")
    intensity: Intensity = Field(description="Fault intensity.")
    mechanism: str = Field(description="Injection mechanism, e.g. 'chaos-mesh-dns-error'.")


class RecordMetadata(BaseModel):
    """Where the incident came from, enough to trace it back to manifest and tool."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    campaign: str = Field(description="Campaign name.")
    system: str = Field(description="System under test.")
    repetition: int = Field(description="Repetition within its service x fault cell.")
    target_kind: Literal["sim", "kubernetes"] = Field(description="Cluster kind it ran on.")
    target_seed: int | None = Field(
        default=None,
        description="Seed of the simulated cluster it ran on (None on Kubernetes); replay "
        "rebuilds a simulated cluster with it.",
    )
    noise: NoiseLevel | None = Field(
        default=None,
        description="Background the cluster showed besides the fault (the campaign's noise "
        "key; a real cluster is always realistic). None: collected before noise levels "
        "existed, when the simulator had no background (what none reproduces).",
    )
    seed: int = Field(description="Per-incident seed.")
    tool_version: str = Field(description="r2act version that collected it.")
    manifest_sha256: str = Field(description="SHA-256 of the campaign manifest file.")
    collected_at: str = Field(description="Injection time, RFC 3339 UTC.")
    load_profile: dict[str, int | float | str] = Field(
        default_factory=dict, description="Load generator settings during collection."
    )


class ObservationRefs(BaseModel):
    """Pointers to the method-visible observations and their size."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    phases: list[Literal["pre", "during", "post"]] = Field(description="Phases collected.")
    log_records: int = Field(ge=0, description="Log records over all phases.")
    event_records: int = Field(ge=0, description="Kubernetes events over all phases.")
    metric_samples: int = Field(ge=0, description="Metric samples over all phases.")
    services_logging: list[str] = Field(description="Services with at least one log record.")


class BenchmarkRecord(BaseModel):
    """One quality-audited incident, ready to evaluate methods on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal["1.0"] = Field(default="1.0", description="Record format version.")
    incident_id: str = Field(
        description="Stable incident id (names the answer: never shown to a method)."
    )
    case_id: str | None = Field(
        default=None,
        pattern=r"^case-[0-9a-f]{12}$",
        description="Opaque id a method sees for this incident; set by the dataset build "
        "(HMAC of the incident id with the dataset's salt), None before it.",
    )
    metadata: RecordMetadata = Field(description="Provenance of the incident.")
    fault: FaultSpec = Field(description="The injected fault (ground truth; not method-visible).")
    observations: ObservationRefs = Field(description="What a method may look at.")
    labels: RcaLabel = Field(description="Root-cause label.")
    action_space: ActionSpace = Field(description="Admissible plans for this incident.")
    gold_plan: RecoveryPlan = Field(description="The canonical valid plan (for Exact Match).")
    valid_plans: list[PlanPattern] = Field(min_length=1, description="P+: valid plan patterns.")
    invalid_plans: list[InvalidPlan] = Field(
        min_length=2, description="P-: tagged invalid plans, at least two."
    )
    policy: str = Field(description="Name and version of the recovery-semantics policy.")
