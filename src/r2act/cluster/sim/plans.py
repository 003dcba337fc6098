"""Recovery plans as the API server and controllers would carry them out.

Mechanics, not labels: a restart or any template change rolls out *new* pods, which no
chaos object selected, so pod-level faults (pod-failure, stress, delay, HTTP rules) clear
once they are ready; a restart keeps the template, so a broken env or a too-low memory
limit (ConfigFault) comes back with the new pods. Scale-out adds replicas that existing
clients never reach (pinned connections, ``pinning``). ``repair_dependency(C, S:port)``
sets C's address variable for S back to the release manifest's value (a rollout of C);
``rollback_deployment`` rolls the previous template out again; ``increase_memory_limit``
patches the limit (a rollout). ``rollback_config`` deletes the HTTPChaos rule its scope
names, only when the rule selects the target's pods (the entry point's): a backend on the
route holds no rule. A rollout whose new pods never become ready (OOM at every start) is
stuck: the old pods keep serving, as with the Deployment's default RollingUpdate
(maxUnavailable 25% rounds down to 0 for one replica). Each function returns the
``Change`` records ``undo`` needs.
"""

from __future__ import annotations

from r2act.cluster.sim.chaos import parse_chaos, rfc3339
from r2act.cluster.sim.events import event
from r2act.cluster.sim.lifecycle import delete
from r2act.cluster.sim.seeding import between
from r2act.cluster.sim.state import PodRec, SimState, TemplateRec, new_pod_name, replica_set_hash
from r2act.cluster.sim.timeline import START_WS
from r2act.errors import NotFoundError, PermanentClusterError
from r2act.schema import (
    Change,
    IncreaseMemoryLimit,
    RecoveryPlan,
    RepairDependency,
    RestartService,
    RollbackConfig,
    RollbackDeployment,
    ScaleOut,
    Topology,
    format_mebibytes,
    memory_bytes,
)
from r2act.systems import system_of

STARTUP_S = 6.0
"""Seconds until a new pod is ready where its system says none (``System.startup_s``: its
probes' initialDelaySeconds plus a little)."""


def create_pod(state: SimState, topology: Topology, app: str, now: float) -> PodRec:
    """Schedule a pod of ``app``'s current template; it is ready after its startup time."""
    dep = state.deployments[app]
    name = new_pod_name(state, app, dep.template.revision)
    startup = system_of(topology).startup_s.get(app, STARTUP_S)
    ready = now + startup + between(state.seed, 0.0, 4.0, "startup", name)
    pod = PodRec(
        name=name,
        app=app,
        revision=dep.template.revision,
        memory_limit=dep.template.memory_limit,
        env=dict(dep.template.env),
        created_at=now,
        ready_at=ready,
    )
    state.pods.append(pod)
    container = topology.deployment(app).main
    event(
        state,
        now,
        "Scheduled",
        ("Pod", name),
        f"Successfully assigned {state.namespace}/{name} to sim-worker",
        source="default-scheduler",
    )
    event(
        state,
        now + 0.5,
        "Pulled",
        ("Pod", name),
        f'Container image "{container.image}" already present on machine',
    )
    event(state, now + 0.6, "Created", ("Pod", name), f"Created container {container.name}")
    event(state, now + 0.8, "Started", ("Pod", name), f"Started container {container.name}")
    return pod


def delete_pod(state: SimState, topology: Topology, pod: PodRec, at: float) -> None:
    """Terminate ``pod`` at ``at`` (possibly in the future, when its replacement is ready)."""
    if pod.deleted_at is not None and pod.deleted_at <= at:
        return
    pod.deleted_at = at
    container = topology.deployment(pod.app).main.name
    event(state, at, "Killing", ("Pod", pod.name), f"Stopping container {container}")


def _live(state: SimState, app: str, now: float) -> list[PodRec]:
    """Pods of the deployment's current replica sets: existing and not already terminating."""
    return [p for p in state.pods if p.app == app and p.created_at <= now and p.deleted_at is None]


def rollout(
    state: SimState, topology: Topology, app: str, template: TemplateRec, now: float
) -> None:
    """Replace every pod of ``app`` with pods of ``template`` (surge one, then swap)."""
    dep = state.deployments[app]
    dep.history.append(dep.template)
    dep.template = template
    old = _live(state, app, now)
    rs_new = f"{app}-{replica_set_hash(state.seed, app, template.revision)}"
    event(
        state,
        now,
        "ScalingReplicaSet",
        ("Deployment", app),
        f"Scaled up replica set {rs_new} from 0 to {dep.replicas}",
        source="deployment-controller",
    )
    fresh = [create_pod(state, topology, app, now) for _ in range(dep.replicas)]
    if never_ready(topology, app, template):
        return  # stuck: the old replica set keeps serving until the template changes again
    last_ready = max((p.ready_at for p in fresh), default=now)
    for index, pod in enumerate(old):
        at = fresh[index].ready_at if index < len(fresh) else last_ready
        delete_pod(state, topology, pod, at)
    if old:
        rs_old = f"{app}-{replica_set_hash(state.seed, app, old[0].revision)}"
        event(
            state,
            last_ready,
            "ScalingReplicaSet",
            ("Deployment", app),
            f"Scaled down replica set {rs_old} from {len(old)} to 0",
            source="deployment-controller",
        )


def never_ready(topology: Topology, app: str, template: TemplateRec) -> bool:
    """Pods of ``template`` are OOM-killed before their first readiness (``timeline``)."""
    request = memory_bytes(topology.deployment(app).main.memory_request)
    return template.memory_limit < START_WS * request


def scale(state: SimState, topology: Topology, app: str, replicas: int, now: float) -> None:
    """Set ``spec.replicas``: add pods of the current template or remove the newest ones."""
    dep = state.deployments[app]
    live = _live(state, app, now)
    rs = f"{app}-{replica_set_hash(state.seed, app, dep.template.revision)}"
    verb = "up" if replicas > dep.replicas else "down"
    event(
        state,
        now,
        "ScalingReplicaSet",
        ("Deployment", app),
        f"Scaled {verb} replica set {rs} from {dep.replicas} to {replicas}",
        source="deployment-controller",
    )
    dep.replicas = replicas
    for _ in range(replicas - len(live)):
        create_pod(state, topology, app, now)
    for pod in sorted(live, key=lambda p: p.created_at)[replicas:] if replicas < len(live) else []:
        delete_pod(state, topology, pod, now)


def _next(template: TemplateRec, state: SimState, app: str, **changes: object) -> TemplateRec:
    """``template`` with ``changes`` as the deployment's next revision."""
    dep = state.deployments[app]
    revision = max([t.revision for t in dep.history] + [dep.template.revision]) + 1
    data = template.model_dump()
    data.update(changes, revision=revision)
    return TemplateRec.model_validate(data)


def _template_json(template: TemplateRec) -> dict[str, object]:
    data: dict[str, object] = {
        "revision": template.revision,
        "memory_limit": format_mebibytes(template.memory_limit),
        "annotations": dict(template.annotations),
    }
    if template.env:
        data["env"] = dict(template.env)
    if template.memory_request is not None:
        data["memory_request"] = format_mebibytes(template.memory_request)
    return data


def apply(state: SimState, topology: Topology, plan: RecoveryPlan, now: float) -> list[Change]:
    """Carry out ``plan``; the changes it made, in order."""
    target = getattr(plan, "target", None)
    if target is not None and target not in state.deployments:
        raise NotFoundError(f"deployment {target!r} not found in namespace {state.namespace}")
    if isinstance(plan, RestartService):
        dep = state.deployments[plan.target]
        before = _template_json(dep.template)
        annotations = {
            **dep.template.annotations,
            "kubectl.kubernetes.io/restartedAt": rfc3339(now),
        }
        rollout(
            state,
            topology,
            plan.target,
            _next(dep.template, state, plan.target, annotations=annotations),
            now,
        )
        return [
            Change(
                kind="restart",
                deployment=plan.target,
                before=before,
                after=_template_json(dep.template),
            )
        ]
    if isinstance(plan, ScaleOut):
        before_n = state.deployments[plan.target].replicas
        scale(state, topology, plan.target, plan.replicas, now)
        return [
            Change(kind="replicas", deployment=plan.target, before=before_n, after=plan.replicas)
        ]
    if isinstance(plan, IncreaseMemoryLimit):
        return [set_memory(state, topology, plan.target, memory_bytes(plan.memory_limit), now)]
    if isinstance(plan, RollbackDeployment):
        dep = state.deployments[plan.target]
        if not dep.history:
            return []
        before = _template_json(dep.template)
        previous = dep.history[-1]
        rollout(state, topology, plan.target, _next(previous, state, plan.target), now)
        return [
            Change(
                kind="template",
                deployment=plan.target,
                before=before,
                after=_template_json(dep.template),
            )
        ]
    if isinstance(plan, RollbackConfig):
        return _remove_rules(state, topology, plan, now)
    if isinstance(plan, RepairDependency):
        return repair(state, topology, plan, now)
    return []


def repair(state: SimState, topology: Topology, plan: RepairDependency, now: float) -> list[Change]:
    """Set the target's address variable for the dependency back to the manifest's value."""
    spec = topology.deployment(plan.target)
    variable = next((k for k, v in spec.env.items() if v == plan.dependency), None)
    dep = state.deployments[plan.target]
    if variable is None or variable not in dep.template.env:
        return []
    before = _template_json(dep.template)
    env = {k: v for k, v in dep.template.env.items() if k != variable}
    rollout(state, topology, plan.target, _next(dep.template, state, plan.target, env=env), now)
    return [
        Change(
            kind="template",
            deployment=plan.target,
            before=before,
            after=_template_json(dep.template),
        )
    ]


def set_memory(state: SimState, topology: Topology, app: str, limit: int, now: float) -> Change:
    """Patch the main container's memory limit (a template change, hence a rollout)."""
    dep = state.deployments[app]
    request = dep.template.memory_request
    if request is None:
        request = memory_bytes(topology.deployment(app).main.memory_request)
    if limit < request:
        raise PermanentClusterError(
            f"Deployment.apps {app!r} is invalid: limits.memory {format_mebibytes(limit)} must be "
            f"greater than or equal to the memory request {format_mebibytes(request)}"
        )
    before = format_mebibytes(dep.template.memory_limit)
    rollout(state, topology, app, _next(dep.template, state, app, memory_limit=limit), now)
    return Change(kind="memory_limit", deployment=app, before=before, after=format_mebibytes(limit))


def _remove_rules(
    state: SimState, topology: Topology, plan: RollbackConfig, now: float
) -> list[Change]:
    changes: list[Change] = []
    label = system_of(topology).workload_label
    for rec in state.chaos:
        if rec.deleted_at is not None or rec.kind != "HTTPChaos":
            continue
        selector = rec.spec.get("selector")
        labels = selector.get("labelSelectors") if isinstance(selector, dict) else None
        if not isinstance(labels, dict) or labels.get(label) != plan.target:
            continue  # the rule lives on the pods it selects; a backend's config holds no rule
        _, _, fault = parse_chaos(
            {"kind": rec.kind, "metadata": {"name": rec.name}, "spec": rec.spec}, label
        )
        if not _scope_matches(topology, plan, fault.http_method, fault.http_path):
            continue
        delete(state, rec, plan.operation)
        changes.append(Change(kind="chaos_removed", before={"kind": rec.kind, "name": rec.name}))
    return changes


def _scope_matches(topology: Topology, plan: RollbackConfig, method: str | None, path: str) -> bool:
    """The plan names the rule's route (ANY matches every method) on the target's path."""
    plan_method, _, plan_path = plan.scope.partition(" ")
    if plan_path != path or (plan_method != "ANY" and method not in (None, plan_method)):
        return False
    return any(
        r.path == path and plan_method in ("ANY", r.method) for r in topology.routes_of(plan.target)
    )


def preimage(state: SimState, plan: RecoveryPlan) -> list[Change]:
    """What ``apply`` may change for ``plan``, with today's values as ``before``."""
    target = getattr(plan, "target", None)
    if target is None or target not in state.deployments:
        return []
    dep = state.deployments[target]
    if isinstance(plan, ScaleOut):
        return [Change(kind="replicas", deployment=target, before=dep.replicas)]
    if isinstance(plan, IncreaseMemoryLimit):
        before = format_mebibytes(dep.template.memory_limit)
        return [Change(kind="memory_limit", deployment=target, before=before)]
    if isinstance(plan, (RollbackDeployment, RepairDependency)):
        return [Change(kind="template", deployment=target, before=_template_json(dep.template))]
    return []


def undo(state: SimState, topology: Topology, changes: list[Change], now: float) -> None:
    """Revert replicas and templates (restarts and removed faults cannot be taken back);
    a deployment already as ``before`` says is left alone (no rollout)."""
    for change in reversed(changes):
        app = change.deployment
        if app is None or app not in state.deployments:
            continue
        current = state.deployments[app]
        if change.kind == "replicas" and isinstance(change.before, int):
            if current.replicas != change.before:
                scale(state, topology, app, change.before, now)
        elif change.kind == "memory_limit" and isinstance(change.before, str):
            if format_mebibytes(current.template.memory_limit) != change.before:
                set_memory(state, topology, app, memory_bytes(change.before), now)
        elif change.kind == "template" and isinstance(change.before, dict):
            if _template_json(current.template) == change.before:
                continue
            limit = change.before.get("memory_limit")
            request = change.before.get("memory_request")
            annotations = change.before.get("annotations")
            env = change.before.get("env")
            rollout(
                state,
                topology,
                app,
                _next(
                    current.template,
                    state,
                    app,
                    memory_limit=memory_bytes(limit)
                    if isinstance(limit, str)
                    else current.template.memory_limit,
                    memory_request=memory_bytes(request) if isinstance(request, str) else None,
                    annotations=dict(annotations) if isinstance(annotations, dict) else {},
                    env=dict(env) if isinstance(env, dict) else {},
                ),
                now,
            )
