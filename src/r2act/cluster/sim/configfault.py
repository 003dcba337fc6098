"""ConfigFault on the simulated cluster: a changed pod template, bookkept on the Deployment.

The same object the Kubernetes adapter handles (CONTRACTS "ConfigFault object"): inject
stores the original values of the touched fields with the fault's name, incident id and
run id as JSON in the Deployment annotation ``r2act.io/config-fault`` and rolls the changed
template out; a second ConfigFault on an annotated Deployment is a conflict; the status
exists while the annotation names the fault and each pod running the faulty values is an
``Injected`` record; remove restores the originals (another rollout) and drops the
annotation, only if it names this fault. Nothing here is a controller: ``duration`` is
honoured by whoever removes the fault, as on a real cluster.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from r2act.cluster.base import INCIDENT_LABEL, RUN_LABEL
from r2act.cluster.sim import bookkept
from r2act.cluster.sim.chaos import ConfigSpec, parse_config_fault
from r2act.cluster.sim.plans import _next, rollout
from r2act.cluster.sim.state import ChaosRec, PodRec, SimState, TemplateRec
from r2act.errors import ConflictError, NotFoundError, PermanentClusterError
from r2act.schema import (
    CONFIG_FAULT_ANNOTATION,
    CONFIG_FAULT_KIND,
    CONFIG_FAULT_RUN_ANNOTATION,
    ChaosRecord,
    ChaosRef,
    ChaosStatus,
    Topology,
    format_mebibytes,
    memory_bytes,
)


def _meta(obj: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    metadata = obj.get("metadata") or {}
    labels = {str(k): str(v) for k, v in (metadata.get("labels") or {}).items()}
    annotations = {str(k): str(v) for k, v in (metadata.get("annotations") or {}).items()}
    return labels, annotations


def bookkeeping(state: SimState, deployment: str) -> dict[str, Any] | None:
    """The parsed ``r2act.io/config-fault`` annotation of a deployment, if any."""
    return bookkept.bookkeeping(state, deployment, CONFIG_FAULT_ANNOTATION)


def inject(state: SimState, topology: Topology, obj: Mapping[str, Any]) -> ChaosRec:
    """Patch the deployment's template as the ConfigFault says and record the originals."""
    name, spec = parse_config_fault(obj)
    labels, annotations = _meta(obj)
    namespace = str((obj.get("metadata") or {}).get("namespace") or state.namespace)
    if namespace != state.namespace:
        raise PermanentClusterError(f"ConfigFault {name!r} is for namespace {namespace!r}")
    dep = state.deployments.get(spec.deployment)
    if dep is None:
        raise NotFoundError(f"deployment {spec.deployment!r} not found in namespace {namespace}")
    main = topology.deployment(spec.deployment).main
    if spec.container != main.name:
        raise PermanentClusterError(
            f"ConfigFault {name!r}: deployment {spec.deployment} has no main container "
            f"{spec.container!r} (it is {main.name!r})"
        )
    if CONFIG_FAULT_ANNOTATION in dep.annotations or state.live_chaos(CONFIG_FAULT_KIND, name):
        raise ConflictError(
            f"deployment {spec.deployment} already carries a ConfigFault "
            f"({CONFIG_FAULT_ANNOTATION}); r2act never overwrites one"
        )
    template, originals = _faulty(topology, dep.template, spec)
    incident = annotations.get("r2act.io/incident-id") or labels.get(INCIDENT_LABEL)
    dep.annotations[CONFIG_FAULT_ANNOTATION] = json.dumps(
        {
            "name": name,
            "incidentId": incident,
            "runId": labels.get(RUN_LABEL) or annotations.get(CONFIG_FAULT_RUN_ANNOTATION),
            "container": spec.container,
            **originals,
        },
        sort_keys=True,
    )
    now = state.now
    rollout(
        state,
        topology,
        spec.deployment,
        _next(template, state, spec.deployment),
        now,
    )
    rec = ChaosRec(
        kind=CONFIG_FAULT_KIND,
        name=name,
        namespace=namespace,
        labels=labels,
        annotations=annotations,
        spec=dict(obj.get("spec") or {}),
        created_at=now,
        applied_at=now,
        pods=[],
        containers=[spec.container],
        heal_s=0.0,
    )
    state.chaos.append(rec)
    return rec


def _faulty(
    topology: Topology, template: TemplateRec, spec: ConfigSpec
) -> tuple[TemplateRec, dict[str, Any]]:
    """The template with the fault applied, and the originals of the touched fields."""
    deployment = topology.deployment(spec.deployment)
    if spec.env:
        before = {k: template.env.get(k, deployment.env.get(k)) for k, _ in spec.env}
        env = {**template.env, **dict(spec.env)}
        return template.model_copy(update={"env": env}), {"env": before}
    assert spec.memory_limit is not None
    request = template.memory_request
    manifest_request = memory_bytes(deployment.main.memory_request)
    current_request = manifest_request if request is None else request
    limits = {"memory": format_mebibytes(template.memory_limit)}
    requests = {"memory": format_mebibytes(current_request)}
    # The API server rejects a limit below the request, so the request follows it down.
    new_request = min(current_request, spec.memory_limit)
    update = {"memory_limit": spec.memory_limit, "memory_request": new_request}
    return template.model_copy(update=update), {
        "resources": {"limits": limits, "requests": requests}
    }


def remove(state: SimState, topology: Topology, rec: ChaosRec) -> None:
    """Restore the originals and drop the annotation (only if it names ``rec``)."""
    now = state.now
    rec.deleted_at, rec.removed_by = now, rec.removed_by or "api"
    deployment = str(rec.spec.get("deployment"))
    book = bookkeeping(state, deployment)
    if book is None or book.get("name") != rec.name:
        return
    dep = state.deployments[deployment]
    manifest = topology.deployment(deployment)
    template = dep.template
    if isinstance(book.get("env"), dict):
        env = dict(template.env)
        for key, value in book["env"].items():
            if value is None or manifest.env.get(key) == value:
                env.pop(key, None)
            else:
                env[key] = str(value)
        template = template.model_copy(update={"env": env})
    if isinstance(book.get("resources"), dict):
        resources = book["resources"]
        limit = memory_bytes(str(resources["limits"]["memory"]))
        request = memory_bytes(str(resources["requests"]["memory"]))
        same = request == memory_bytes(manifest.main.memory_request)
        template = template.model_copy(
            update={"memory_limit": limit, "memory_request": None if same else request}
        )
    del dep.annotations[CONFIG_FAULT_ANNOTATION]
    if template != dep.template:
        rollout(state, topology, deployment, _next(template, state, deployment), now)


def carries(pod: PodRec, spec: Mapping[str, Any]) -> bool:
    """The pod runs the values the ConfigFault set."""
    env = spec.get("env")
    if isinstance(env, Mapping):
        return all(pod.env.get(str(k)) == str(v) for k, v in env.items())
    limits = (spec.get("resources") or {}).get("limits") or {}
    try:
        return pod.memory_limit == memory_bytes(str(limits.get("memory")))
    except ValueError:
        return False


def status(state: SimState, rec: ChaosRec) -> ChaosStatus:
    """Exists while the annotation names it; one record per pod of the deployment."""
    deployment = str(rec.spec.get("deployment"))
    book = bookkeeping(state, deployment)
    if rec.deleted_at is not None or book is None or book.get("name") != rec.name:
        return ChaosStatus(kind=rec.kind, name=rec.name, exists=False)
    now = state.now
    records = [
        ChaosRecord(
            id=f"{rec.namespace}/{pod.name}",
            phase="Injected" if carries(pod, rec.spec) else "Not Injected",
            injected_count=int(carries(pod, rec.spec)),
        )
        for pod in state.pods_of(deployment, now)
        if pod.deleted_at is None
    ]
    phases = {r.phase for r in records}
    return ChaosStatus(
        kind=rec.kind,
        name=rec.name,
        conditions={
            "Selected": bool(records),
            "AllInjected": bool(records) and "Injected" in phases,
            "AllRecovered": bool(records) and phases == {"Not Injected"},
            "Paused": False,
        },
        desired_phase="Run",
        records=[r for r in records if r.phase == "Injected"] or records,
    )


def leftovers(state: SimState) -> list[ChaosRef]:
    """ConfigFaults found through the deployments' annotations."""
    return bookkept.leftovers(state, CONFIG_FAULT_KIND, CONFIG_FAULT_ANNOTATION)
