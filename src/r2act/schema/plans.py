"""Recovery plans: the seven typed operations, valid-plan patterns and tagged invalid plans.

A plan is a discriminated union on ``operation`` with exactly the fields that operation needs;
anything else (missing or extra fields, malformed values) fails parsing. Whether a well-formed
plan fits an incident is decided against that incident's ``ActionSpace`` and plan sets.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from r2act.schema.quantities import QUANTITY_PATTERN, memory_bytes

ServiceName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=63,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        description="A Kubernetes deployment name (DNS-1123 label).",
    ),
]
Endpoint = Annotated[
    str,
    Field(
        max_length=80,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?:[0-9]{1,5}$",
        description="A service endpoint as 'name:port', the form the *_ADDR variables use.",
    ),
]
Scope = Annotated[
    str,
    Field(
        max_length=80,
        pattern=r"^((GET|POST|ANY) /[A-Za-z0-9_./*-]*|[A-Za-z][A-Za-z0-9_-]*)$",
        description=(
            "The configuration a rollback undoes: an HTTP route rule as 'METHOD /path' "
            "(METHOD is GET, POST or ANY), or a feature flag's key (e.g. 'adFailure')."
        ),
    ),
]
MemoryQuantity = Annotated[
    str,
    Field(
        max_length=32,
        description="A Kubernetes memory quantity such as '256Mi' or '1.5Gi'.",
        # For the JSON Schema only: Python checks with memory_bytes (the Kubernetes client's
        # parser), whose message says how to write a quantity.
        json_schema_extra={"pattern": QUANTITY_PATTERN},
    ),
]


class Operation(StrEnum):
    """The recovery operations a plan can take."""

    RESTART_SERVICE = "restart_service"
    SCALE_OUT = "scale_out"
    ROLLBACK_DEPLOYMENT = "rollback_deployment"
    INCREASE_MEMORY_LIMIT = "increase_memory_limit"
    ROLLBACK_CONFIG = "rollback_config"
    REPAIR_DEPENDENCY = "repair_dependency"
    NO_ACTION = "no_action"


class _Plan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class RestartService(_Plan):
    """Rolling restart of a deployment (new pods, same template)."""

    operation: Literal["restart_service"] = Field(description="Operation discriminator.")
    target: ServiceName = Field(description="Deployment to restart.")


class ScaleOut(_Plan):
    """Raise a deployment's replica count."""

    operation: Literal["scale_out"] = Field(description="Operation discriminator.")
    target: ServiceName = Field(description="Deployment to scale.")
    replicas: int = Field(ge=1, le=1000, description="Desired replica count after scaling.")


class RollbackDeployment(_Plan):
    """Revert a deployment's pod template to its previous revision."""

    operation: Literal["rollback_deployment"] = Field(description="Operation discriminator.")
    target: ServiceName = Field(description="Deployment to roll back.")


class IncreaseMemoryLimit(_Plan):
    """Raise the memory limit of a deployment's main container."""

    operation: Literal["increase_memory_limit"] = Field(description="Operation discriminator.")
    target: ServiceName = Field(description="Deployment whose limit is raised.")
    memory_limit: MemoryQuantity = Field(description="New memory limit, e.g. '512Mi'.")

    @field_validator("memory_limit")
    @classmethod
    def _is_quantity(cls, value: str) -> str:
        if memory_bytes(value) <= 0:
            raise ValueError("memory_limit must be positive")
        return value


class RollbackConfig(_Plan):
    """Remove a faulty configuration in the given scope: a route rule, or a feature flag
    (its default variant restored, every other flag left as it is)."""

    operation: Literal["rollback_config"] = Field(description="Operation discriminator.")
    target: ServiceName = Field(
        description="Service whose inbound route is broken, or whose code reads the flag."
    )
    scope: Scope = Field(
        description="The route rule to roll back, 'METHOD /path', or the flag key to revert."
    )


class RepairDependency(_Plan):
    """Repair how a service reaches one of its dependencies (name resolution, address)."""

    operation: Literal["repair_dependency"] = Field(description="Operation discriminator.")
    target: ServiceName = Field(description="Service on whose dependency path the repair acts.")
    dependency: Endpoint = Field(description="The broken dependency endpoint, 'name:port'.")


class NoAction(_Plan):
    """Do nothing. Never valid for a fault incident; it is the explicit abstention."""

    operation: Literal["no_action"] = Field(description="Operation discriminator.")


RecoveryPlan = Annotated[
    RestartService
    | ScaleOut
    | RollbackDeployment
    | IncreaseMemoryLimit
    | RollbackConfig
    | RepairDependency
    | NoAction,
    Field(discriminator="operation"),
]
"""Any recovery plan; parse untrusted input with ``PLAN_ADAPTER``."""

PLAN_ADAPTER: TypeAdapter[RecoveryPlan] = TypeAdapter(cast(Any, RecoveryPlan))
"""cast: mypy reads an Annotated union as a value, not as the type it annotates."""


def plan_target(plan: RecoveryPlan) -> str | None:
    """The service a plan acts on, or None for ``no_action``."""
    return getattr(plan, "target", None)


class FailureMode(StrEnum):
    """Why an invalid plan is invalid; also the error taxonomy, in precedence order."""

    NO_OP = "no_op"
    INVALID_STRUCTURE = "invalid_structure"
    WRONG_OPERATION = "wrong_operation"
    WRONG_TARGET = "wrong_target"
    INVALID_SCOPE = "invalid_scope"


class PlanPattern(BaseModel):
    """A member of P+: every plan it matches is an equivalent valid recovery."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    operation: Operation = Field(description="The operation a matching plan must use.")
    targets: list[str] = Field(
        default_factory=list, description="Admissible targets; empty only for no_action."
    )
    scope: str | None = Field(default=None, description="Required route scope (rollback_config).")
    dependency: str | None = Field(
        default=None, description="Required dependency endpoint (repair_dependency)."
    )
    min_replicas: int | None = Field(default=None, description="Lowest replica count (scale_out).")
    max_replicas: int | None = Field(default=None, description="Highest replica count (scale_out).")
    min_memory_limit: str | None = Field(
        default=None, description="Smallest memory limit that recovers (increase_memory_limit)."
    )
    max_memory_limit: str | None = Field(
        default=None, description="Largest memory limit allowed (increase_memory_limit)."
    )

    def matches(self, plan: RecoveryPlan) -> bool:
        """True when ``plan`` has this operation, an admissible target and in-bound fields."""
        if plan.operation != self.operation.value:
            return False
        if self.targets and plan_target(plan) not in self.targets:
            return False
        if isinstance(plan, RollbackConfig) and plan.scope != self.scope:
            return False
        if isinstance(plan, RepairDependency) and plan.dependency != self.dependency:
            return False
        if isinstance(plan, ScaleOut):
            if self.min_replicas is not None and plan.replicas < self.min_replicas:
                return False
            if self.max_replicas is not None and plan.replicas > self.max_replicas:
                return False
        if isinstance(plan, IncreaseMemoryLimit):
            limit = memory_bytes(plan.memory_limit)
            if self.min_memory_limit and limit < memory_bytes(self.min_memory_limit):
                return False
            if self.max_memory_limit and limit > memory_bytes(self.max_memory_limit):
                return False
        return True


class InvalidPlan(BaseModel):
    """A member of P-: a plausible but wrong plan, tagged with how it is wrong."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    plan: RecoveryPlan = Field(description="The invalid plan.")
    failure_mode: FailureMode = Field(description="Why it does not recover this incident.")
    rationale: str = Field(default="", description="One sentence for a human reader.")
