"""What ``state()`` and ``health()`` read off the simulated cluster.

Health follows the replay probe's definition: the entry point answers every page (each
route's failing-or-too-slow share under one half, as a prober fetching each page sees
it), every deployment has all desired replicas available, and the users' error rate
(failed or slower than the healthy baseline plus the SLO budget, weighted by the load
generator's task weights) is under the threshold.
"""

from __future__ import annotations

from r2act.cluster.sim.scene import Scene
from r2act.cluster.sim.state import SimState
from r2act.cluster.sim.timeline import PodTimeline
from r2act.schema import (
    ClusterState,
    ContainerState,
    DeploymentState,
    HealthReport,
    PodState,
    Topology,
    format_mebibytes,
)

PAGE_FAILURE_LIMIT = 0.5


def health_report(
    scene: Scene, topology: Topology, replicas: dict[str, int], threshold: float
) -> HealthReport:
    """One probe of the system as it is in ``scene``."""
    unavailable = sorted(
        name for name, view in scene.services.items() if len(view.ready) < replicas.get(name, 1)
    )
    weights = {r.scope: r.weight for r in topology.routes}
    total = sum(weights.values()) or 1.0
    error_rate = sum(weights[s] * v.bad(user=True) for s, v in scene.routes.items()) / total
    error_rate = min(1.0, max(0.0, error_rate))
    failing_pages = sorted(
        s for s, v in scene.routes.items() if v.bad(user=False) >= PAGE_FAILURE_LIMIT
    )
    front = scene.services.get(topology.entrypoint)
    frontend_ok = bool(front and front.ready) and not failing_pages
    healthy = frontend_ok and not unavailable and error_rate < threshold
    reasons = []
    if not frontend_ok:
        reasons.append("pages failing: " + (", ".join(failing_pages) or "frontend not ready"))
    if unavailable:
        reasons.append("unavailable: " + ", ".join(unavailable))
    if error_rate >= threshold:
        reasons.append(f"error rate {error_rate:.3f} >= {threshold:.3f}")
    return HealthReport(
        ts=scene.t,
        healthy=healthy,
        frontend_ok=frontend_ok,
        unavailable=unavailable,
        error_rate=round(error_rate, 6),
        detail="; ".join(reasons),
    )


def cluster_state(
    state: SimState, timelines: dict[str, PodTimeline], topology: Topology
) -> ClusterState:
    """Deployments and pods as ``kubectl get`` would show them now."""
    now = state.now
    pods: list[PodState] = []
    ready_by_app: dict[str, int] = {}
    for line in timelines.values():
        pod = line.pod
        if not pod.exists(now):
            continue
        spec = topology.deployment(pod.app)
        ready = line.ready(now)
        ready_by_app[pod.app] = ready_by_app.get(pod.app, 0) + int(ready)
        waiting = line.waiting(now)
        image = spec.main.image
        if line.paused(now):
            image = "gcr.io/google-containers/pause:latest"
        containers = [
            ContainerState(
                name=spec.main.name,
                ready=ready,
                restart_count=line.restart_count(now),
                state="waiting" if waiting or now < pod.created_at + 1.0 else "running",
                reason="CrashLoopBackOff"
                if waiting
                else ("ContainerCreating" if now < pod.created_at + 1.0 else None),
                last_terminated_reason=line.last_reason(now),
                image=image,
                memory_limit=format_mebibytes(pod.memory_limit),
            )
        ]
        pods.append(
            PodState(
                name=pod.name,
                app=pod.app,
                phase="Running" if now >= pod.created_at + 1.0 else "Pending",
                ready=ready,
                created_at=pod.created_at,
                containers=containers,
            )
        )
    deployments = [
        DeploymentState(
            name=dep.name,
            replicas=dep.replicas,
            ready_replicas=ready_by_app.get(dep.name, 0),
            available_replicas=ready_by_app.get(dep.name, 0),
            revision=dep.template.revision,
            memory_limits={
                topology.deployment(dep.name).main.name: format_mebibytes(dep.template.memory_limit)
            },
            template_annotations=dict(dep.template.annotations),
        )
        for dep in state.deployments.values()
    ]
    pods.sort(key=lambda p: p.name)
    return ClusterState(ts=now, namespace=state.namespace, deployments=deployments, pods=pods)
