"""Observations a cluster hands out: logs, events, metric series, state and chaos status.

Logs and metric points are NamedTuples, not models: a paper-scale campaign has millions of
them and they only need to be written, not validated. Everything small is a pydantic model.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

Phase = Literal["pre", "during", "post"]
PHASES: tuple[Phase, ...] = ("pre", "during", "post")


class TimeWindow(NamedTuple):
    """A closed time interval in seconds since the epoch (UTC)."""

    start: float
    end: float


class LogLine(NamedTuple):
    """One line a container wrote to stdout, as the kubelet would return it."""

    ts: float
    """Seconds since the epoch (UTC) when the line was written."""
    pod: str
    """Pod name."""
    container: str
    """Container name."""
    service: str
    """The pod's ``app`` label."""
    line: str
    """The raw line, in the service's own log format."""


class MetricSeries(NamedTuple):
    """One Prometheus range-query result series."""

    query: str
    """Name of the campaign query that produced it."""
    labels: dict[str, str]
    """The series labels."""
    points: list[tuple[float, float]]
    """(timestamp, value) pairs, ascending."""


class KubeEvent(BaseModel):
    """A core/v1 Event, reduced to the fields a reader needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ts: float = Field(description="Last time the event was seen, seconds since the epoch.")
    type: Literal["Normal", "Warning"] = Field(description="Event type.")
    reason: str = Field(description="Machine-readable reason, e.g. 'BackOff'.")
    object_kind: str = Field(description="Kind of the involved object, e.g. 'Pod'.")
    object_name: str = Field(description="Name of the involved object.")
    message: str = Field(description="Human-readable message.")
    count: int = Field(default=1, ge=1, description="How many times it happened.")
    source: str = Field(default="", description="Component that reported it, e.g. 'kubelet'.")


class ContainerState(BaseModel):
    """One container status of a pod."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Container name.")
    ready: bool = Field(description="Readiness.")
    restart_count: int = Field(ge=0, description="Restarts so far.")
    state: Literal["running", "waiting", "terminated"] = Field(description="Current state.")
    reason: str | None = Field(default=None, description="Reason of a waiting/terminated state.")
    last_terminated_reason: str | None = Field(
        default=None, description="Reason the previous instance ended, e.g. 'OOMKilled'."
    )
    image: str = Field(description="Image the container runs.")
    memory_limit: str | None = Field(default=None, description="Memory limit in force.")


class PodState(BaseModel):
    """One pod."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Pod name.")
    app: str = Field(description="The pod's 'app' label.")
    phase: str = Field(description="Pod phase: Pending, Running, Succeeded, Failed.")
    ready: bool = Field(description="All containers ready.")
    created_at: float = Field(description="Creation time, seconds since the epoch.")
    containers: list[ContainerState] = Field(description="Container statuses.")


class DeploymentState(BaseModel):
    """One deployment's spec highlights and status."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Deployment name.")
    replicas: int = Field(ge=0, description="Desired replicas.")
    ready_replicas: int = Field(ge=0, description="Ready replicas.")
    available_replicas: int = Field(ge=0, description="Available replicas.")
    revision: int = Field(ge=0, description="Current rollout revision.")
    memory_limits: dict[str, str] = Field(description="Memory limit per container.")
    template_annotations: dict[str, str] = Field(
        default_factory=dict, description="Pod template annotations (e.g. restartedAt)."
    )


class ClusterState(BaseModel):
    """Deployments and pods of the target namespace at one instant."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ts: float = Field(description="When it was read, seconds since the epoch.")
    namespace: str = Field(description="Namespace read.")
    deployments: list[DeploymentState] = Field(description="Deployments.")
    pods: list[PodState] = Field(description="Pods.")


class ChaosEvent(BaseModel):
    """One entry of a Chaos Mesh record's event list."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["Succeeded", "Failed"] = Field(description="Outcome.")
    operation: Literal["Apply", "Recover"] = Field(description="What was attempted.")
    message: str = Field(default="", description="Detail, mostly for failures.")
    timestamp: str = Field(description="RFC 3339 time.")


class ChaosRecord(BaseModel):
    """One Chaos Mesh container/pod record: a selected target and its phase."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="'ns/pod' or 'ns/pod/container'.")
    phase: str = Field(description="'Injected', 'Not Injected' (or '.../Wait').")
    injected_count: int = Field(default=0, ge=0, description="Times applied.")
    recovered_count: int = Field(default=0, ge=0, description="Times recovered.")
    events: list[ChaosEvent] = Field(default_factory=list, description="Apply/Recover outcomes.")

    @property
    def pod(self) -> str:
        """The pod name of the record."""
        return self.id.split("/")[1]


class ChaosStatus(BaseModel):
    """The status block of a Chaos Mesh object, read the way the controller means it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(description="Chaos Mesh kind.")
    name: str = Field(description="Object name.")
    exists: bool = Field(default=True, description="False once the object is gone.")
    conditions: dict[str, bool] = Field(
        default_factory=dict, description="Selected / AllInjected / AllRecovered / Paused."
    )
    desired_phase: Literal["Run", "Stop"] | None = Field(
        default=None, description="status.experiment.desiredPhase."
    )
    records: list[ChaosRecord] = Field(default_factory=list, description="Per-target records.")

    def injected(self, existing_pods: set[str] | None = None) -> bool:
        """Selected, all injected, every record Injected and (if given) every pod still there."""
        if not (self.conditions.get("Selected") and self.conditions.get("AllInjected")):
            return False
        if not self.records or any(r.phase != "Injected" for r in self.records):
            return False
        return existing_pods is None or all(r.pod in existing_pods for r in self.records)

    def failed(self) -> bool:
        """True when any record has a Failed Apply event or nothing was selected."""
        if self.conditions.get("Selected") is False:
            return True
        return any(
            e.type == "Failed" and e.operation == "Apply" for r in self.records for e in r.events
        )

    def recovered(self) -> bool:
        """Gone, or stopped with every record recovered."""
        return not self.exists or (
            self.desired_phase == "Stop" and bool(self.conditions.get("AllRecovered"))
        )
