"""``connect``: from a manifest's target to a ``Cluster``.

The simulator branch lives here; the Kubernetes branch is added by the kube adapter. The
import of an adapter happens inside its branch, so a sim-only run never imports the
Kubernetes client.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from r2act.campaigns import KubernetesTarget, SimTarget
from r2act.campaigns.manifest import TracesConfig
from r2act.cluster.base import Cluster
from r2act.schema import NoiseLevel, Topology


def connect(
    target: SimTarget | KubernetesTarget,
    *,
    namespace: str,
    workspace: Path,
    metric_queries: Mapping[str, str] | None = None,
    users: int = 10,
    error_rate_threshold: float = 0.05,
    reverting: bool = False,
    noise: NoiseLevel = NoiseLevel.REALISTIC,
    topology: Topology | None = None,
    traces: TracesConfig | None = None,
) -> Cluster:
    """The cluster a campaign runs on.

    ``metric_queries`` are the campaign's PromQL queries (the simulator answers any of
    them, so it ignores them here). ``users`` (the manifest's load) drives the simulator's
    traffic and log volume; ``error_rate_threshold`` is the health probe's limit. A sim
    cluster's state lives in ``<workspace>/.sim/<target.name>/``, so the same workspace
    reconnects to the same cluster. ``reverting`` (cleanup) connects to a Kubernetes
    namespace whose opt-in was withdrawn, to remove r2act's own objects from it. ``noise``
    (the manifest's) sets the simulator's background; a real cluster shows its own.
    ``topology`` is the system a new simulated cluster runs (the manifest's); without it, a
    saved one keeps its own and a new one runs the default system. ``traces`` (the
    manifest's section, if any) makes a Kubernetes cluster a ``TraceSource`` reading the
    system's trace store (or ``traces.store``); the simulator takes its sample rate, so the
    trace context its log lines carry names the spans it keeps.
    """
    if isinstance(target, SimTarget):
        from r2act.cluster.sim import SimulatedCluster

        return SimulatedCluster(
            workspace,
            name=target.name,
            seed=target.seed,
            namespace=namespace,
            glitches=target.glitches,
            users=users,
            error_rate_threshold=error_rate_threshold,
            noise=noise,
            topology=topology,
            trace_sample=traces.sample if traces is not None else None,
        )
    # Kubernetes: the named kubeconfig context, refused (SafetyError) right here unless the
    # namespace carries r2act.io/chaos-allowed=true.
    from r2act.cluster.kube import connect_kubernetes

    return connect_kubernetes(
        target,
        namespace=namespace,
        workspace=workspace,
        metric_queries=metric_queries,
        error_rate_threshold=error_rate_threshold,
        reverting=reverting,
        traces=traces,
        **({} if topology is None else {"topology": topology}),
    )
