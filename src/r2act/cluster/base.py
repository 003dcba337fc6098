"""The cluster port: everything collection and replay need from a cluster, nothing more.

Two adapters implement it: ``cluster.sim`` (an in-process digital twin, the default) and
``cluster.kube`` (a real Kubernetes cluster with Chaos Mesh and Prometheus). Callers depend
on this protocol only, so a stage that works on one works on the other.

Errors: adapters raise ``r2act.errors.TransientClusterError`` for failures worth retrying
and ``PermanentClusterError`` (or its subclasses) otherwise; nothing else escapes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from r2act.schema import (
    ChaosRef,
    ChaosStatus,
    ClusterState,
    HealthReport,
    KubeEvent,
    LogLine,
    MetricSeries,
    PlanEffect,
    PreflightReport,
    RecoveryPlan,
    TimeWindow,
)
from r2act.schema.traces import Span

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
"""Label every object r2act creates carries, with value ``r2act``."""
MANAGED_BY = "r2act"
INCIDENT_LABEL = "r2act.io/incident"
"""Label naming the incident a chaos object belongs to."""
RUN_LABEL = "r2act.io/run"
"""Label naming the run (output directory) that created a chaos object."""
OPT_IN_LABEL = "r2act.io/chaos-allowed"
"""Namespace label (value ``"true"``) without which r2act refuses a Kubernetes target."""

ChaosObject = Mapping[str, Any]


def foreign_reason(labels: Mapping[str, str] | None, ref: ChaosRef) -> str | None:
    """Why r2act must not delete or patch an object carrying ``labels`` for ``ref``; None if
    it may.

    The object must carry ``managed-by=r2act`` and, when ``ref`` names its run, that run's
    label: a same-named object of a user or of another run is never touched. Adapters call
    this right before every delete (chaos objects, and the ConfigFault annotation's owner).
    """
    found = dict(labels or {})
    if found.get(MANAGED_BY_LABEL) != MANAGED_BY:
        return f"{ref.kind}/{ref.name} is not labelled {MANAGED_BY_LABEL}={MANAGED_BY}"
    if ref.run_id is not None and found.get(RUN_LABEL) != ref.run_id:
        return (
            f"{ref.kind}/{ref.name} belongs to another r2act run "
            f"({found.get(RUN_LABEL) or 'no run label'}, not {ref.run_id})"
        )
    return None


"""A Chaos Mesh custom object as sent to the API: apiVersion, kind, metadata, spec."""


@runtime_checkable
class Clock(Protocol):
    """Time as the cluster sees it; the simulated cluster's clock is virtual."""

    def now(self) -> float:
        """Seconds since the epoch (UTC)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait; on a virtual clock this advances time at once."""
        ...


@runtime_checkable
class Cluster(Protocol):
    """A target cluster running the system under test."""

    @property
    def clock(self) -> Clock:
        """The cluster's clock; every timestamp the cluster reports uses it."""
        ...

    @property
    def namespace(self) -> str:
        """The one namespace r2act acts in."""
        ...

    @property
    def fingerprint(self) -> str:
        """Identifies the target (context/namespace or sim name/seed) for provenance."""
        ...

    def preflight(self, metric_queries: Mapping[str, str]) -> PreflightReport:
        """Check deployments, entry-point health, leftovers and metrics before injecting."""
        ...

    def inject(self, chaos: ChaosObject) -> ChaosRef:
        """Create the Chaos Mesh object; ConflictError if it already exists."""
        ...

    def chaos_status(self, ref: ChaosRef) -> ChaosStatus:
        """Read the object's status; ``exists=False`` once it is gone."""
        ...

    def remove(self, ref: ChaosRef, timeout_s: float = 60.0) -> None:
        """Delete the object and wait (bounded) for its finalizer; no-op when already gone."""
        ...

    def leftovers(self) -> list[ChaosRef]:
        """Every chaos object labelled as managed by r2act in the namespace."""
        ...

    def pod_names(self) -> set[str]:
        """Names of the pods that exist now."""
        ...

    def logs(self, window: TimeWindow) -> Iterator[Sequence[LogLine]]:
        """Every container's log lines in the window, in batches (streamed, never all at once)."""
        ...

    def events(self, window: TimeWindow) -> list[KubeEvent]:
        """Kubernetes events of the namespace in the window, chaos-object events included."""
        ...

    def state(self) -> ClusterState:
        """Deployments and pods now."""
        ...

    def metrics(
        self, window: TimeWindow, queries: Mapping[str, str], step_s: float
    ) -> Iterator[MetricSeries]:
        """Range-query each named PromQL query over the window."""
        ...

    def health(self) -> HealthReport:
        """Probe the system's health now."""
        ...

    def apply_plan(self, plan: RecoveryPlan) -> PlanEffect:
        """Execute a typed recovery plan; returns what changed so that it can be undone."""
        ...

    def preimage(self, plan: RecoveryPlan) -> PlanEffect:
        """What ``apply_plan(plan)`` may change, each with its value now, changing nothing.

        Read before a plan is sent and written down first, so that undoing it restores the
        target whether the plan then ran or not (a stop between sending a plan and hearing
        its answer leaves no change nobody knows how to revert)."""
        ...

    def undo(self, effect: PlanEffect) -> None:
        """Revert the side effects recorded in ``effect`` (replicas, resources, template);
        a value already at its ``before`` is left alone."""
        ...


@runtime_checkable
class TraceSource(Protocol):
    """A cluster whose system's spans can be read (issue 24's fourth modality).

    Separate from ``Cluster`` because traces are optional: a campaign without a ``traces``
    section never asks for them, and an adapter without a trace store does not have them.
    """

    def traces(self, window: TimeWindow, sample: float) -> Iterator[Sequence[Span]]:
        """Every kept span that started in the window, in batches (streamed).

        ``sample`` is the share of whole traces kept (``schema.traces.keeps_trace``).
        """
        ...


@runtime_checkable
class Rewindable(Protocol):
    """A cluster that can start a unit of work again from a saved state (the simulator).

    A real cluster cannot: on Kubernetes replay restores by undoing what it did.
    """

    def rewind_to(self, scope: str, key: str) -> bool:
        """Go back to the state saved when ``key`` started in ``scope`` (else save it)."""
        ...
