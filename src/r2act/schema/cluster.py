"""Results of cluster operations that leave the cluster port: preflight, health, plan effects."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class ChaosRef(BaseModel):
    """A Chaos Mesh object r2act created, as found on the cluster."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(description="Chaos Mesh kind.")
    name: str = Field(description="Object name.")
    namespace: str = Field(description="Namespace.")
    incident_id: str | None = Field(default=None, description="Its r2act.io/incident label.")
    run_id: str | None = Field(
        default=None, description="Its r2act.io/run label: the run that created it."
    )


class HealthReport(BaseModel):
    """One health probe of the system."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ts: float = Field(description="When it was probed, seconds since the epoch.")
    healthy: bool = Field(description="All checks passed.")
    frontend_ok: bool = Field(description="Entry-point pages answered successfully.")
    unavailable: list[str] = Field(description="Deployments with fewer available than desired.")
    error_rate: float = Field(ge=0, le=1, description="Share of failed user requests just now.")
    detail: str = Field(default="", description="Why it is unhealthy, for a human.")


class PreflightReport(BaseModel):
    """What must hold before r2act injects anything."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    deployments_ready: bool = Field(description="Every deployment has all replicas available.")
    not_ready: list[str] = Field(default_factory=list, description="Deployments not ready.")
    frontend_healthy: bool = Field(description="The entry point answers its health check.")
    leftovers: list[ChaosRef] = Field(
        default_factory=list, description="r2act chaos objects still on the cluster."
    )
    metrics_reachable: bool = Field(description="The metrics backend answered a query.")
    traces_problem: str | None = Field(
        default=None,
        description=(
            "Why the trace store is unusable (unreachable, or receiving no span from an "
            "instrumented service), with the fix; None when it is fine or no traces are asked for."
        ),
    )

    @property
    def ok(self) -> bool:
        """Everything holds."""
        return (
            self.deployments_ready
            and self.frontend_healthy
            and not self.leftovers
            and self.metrics_reachable
            and self.traces_problem is None
        )

    def problems(self) -> list[str]:
        """One line per failed precondition."""
        out: list[str] = []
        if not self.deployments_ready:
            out.append(f"deployments not ready: {', '.join(self.not_ready) or '?'}")
        if not self.frontend_healthy:
            out.append("frontend health check fails")
        if self.leftovers:
            names = ", ".join(f"{r.kind}/{r.name}" for r in self.leftovers)
            out.append(f"leftover r2act chaos objects: {names}")
        if not self.metrics_reachable:
            out.append("metrics backend unreachable")
        if self.traces_problem is not None:
            out.append(self.traces_problem)
        return out


class Change(BaseModel):
    """One change a plan made, with what it replaced, so that it can be undone."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(
        description="'restart', 'replicas', 'memory_limit', 'template' or 'chaos_removed'."
    )
    deployment: str | None = Field(default=None, description="Deployment changed, if any.")
    before: JsonValue = Field(default=None, description="Value before the change.")
    after: JsonValue = Field(default=None, description="Value after the change.")


class PlanEffect(BaseModel):
    """What applying a plan did to the cluster."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    operation: str = Field(description="The plan's operation.")
    changes: list[Change] = Field(default_factory=list, description="Changes, in order.")
