"""What ``state()`` and ``health()`` read off the simulated cluster.

Health is the shared oracle's (``r2act.cluster.oracle``): one probe request per
entry-point route plus the health endpoint, judged by the same success rule, latency
budget and threshold as on a real cluster. The simulator does not sample the probe: it
takes each route's chance of failing from the scene (errors on fresh connections through
any ready entry-point pod, plus the chance of exceeding the latency budget).
"""

from __future__ import annotations

from r2act.cluster.oracle import judge
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


def health_report(
    scene: Scene, topology: Topology, replicas: dict[str, int], threshold: float
) -> HealthReport:
    """One probe round of the system as it is in ``scene``."""
    unavailable = [
        name for name, view in scene.services.items() if len(view.ready) < replicas.get(name, 1)
    ]
    front = scene.services.get(topology.entrypoint)
    healthz_ok = bool(front and front.ready)
    failures = {scope: view.probe_failure() for scope, view in scene.routes.items()}
    return judge(
        scene.t,
        healthz_ok=healthz_ok,
        unavailable=unavailable,
        failures=failures,
        threshold=threshold,
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
