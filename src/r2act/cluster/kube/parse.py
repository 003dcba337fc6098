"""Reading Kubernetes and Chaos Mesh JSON into r2act's typed observations (pure functions).

The adapter asks the API server for raw JSON (no client models) and turns it into schema
objects here, so that every interpretation rule - how a Chaos Mesh status means
"injected", what a log line's timestamp is, which annotation holds a revision - lives in
one place and can be tested without a server.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, Literal

from r2act.cluster.base import RUN_LABEL
from r2act.schema import (
    ChaosEvent,
    ChaosRecord,
    ChaosRef,
    ChaosStatus,
    ContainerState,
    DeploymentState,
    KubeEvent,
    PodState,
)

Json = Mapping[str, Any]
"""A decoded JSON object from the API server."""

CHAOS_GROUP: Final = "chaos-mesh.org"
CHAOS_VERSION: Final = "v1alpha1"
CHAOS_PLURALS: Final[Mapping[str, str]] = {
    "PodChaos": "podchaos",
    "StressChaos": "stresschaos",
    "NetworkChaos": "networkchaos",
    "HTTPChaos": "httpchaos",
    "DNSChaos": "dnschaos",
}
"""The Chaos Mesh kinds r2act renders and the plural each is served under."""

RESTARTED_AT: Final = "kubectl.kubernetes.io/restartedAt"
REVISION: Final = "deployment.kubernetes.io/revision"
TEMPLATE_HASH: Final = "pod-template-hash"
ROLLBACK_KEEP_ANNOTATIONS: Final = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION,
        "deployment.kubernetes.io/revision-history",
        "deployment.kubernetes.io/desired-replicas",
        "deployment.kubernetes.io/max-replicas",
        "deprecated.deployment.rollback.to",
    }
)
"""Deployment annotations a rollback keeps from the deployment, not from the ReplicaSet."""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def annotation_record(obj: Json, key: str) -> dict[str, Any] | None:
    """The JSON object an r2act bookkeeping annotation ``key`` holds; None when ``obj`` has
    no such annotation. Garbage (not JSON, or not an object) comes back as ``{"name": None,
    "raw": ...}``: someone else's record, never nothing, so no guard mistakes it for absent."""
    raw = _dict(_dict(obj.get("metadata")).get("annotations")).get(key)
    if raw is None:
        return None
    try:
        found = json.loads(raw)
    except ValueError:
        return {"name": None, "raw": raw}
    return found if isinstance(found, dict) else {"name": None, "raw": raw}


def selected_pods(deployment: Json, pods: Iterable[Json]) -> list[dict[str, Any]]:
    """The pods among ``pods`` that ``deployment``'s selector matches (none for a Deployment
    without ``matchLabels``): the pods whose restart a fault on it waits for."""
    labels = _dict(_dict(deployment.get("spec")).get("selector")).get("matchLabels") or {}
    if not labels:
        return []
    return [
        dict(p)
        for p in pods
        if all(_dict(_dict(p.get("metadata")).get("labels")).get(k) == v for k, v in labels.items())
    ]


def parse_time(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 time, nanoseconds included (kubelet format)."""
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    # Python parses at most microseconds: cut a longer fraction before the offset.
    if "." in value:
        head, _, rest = value.partition(".")
        digits = ""
        while rest and rest[0].isdigit():
            digits, rest = digits + rest[0], rest[1:]
        value = f"{head}.{digits[:6].ljust(6, '0')}{rest}"
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def format_time(ts: float) -> str:
    """RFC 3339 UTC with seconds, the form kubectl writes into ``restartedAt``."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def split_log_line(raw: str) -> tuple[float, str] | None:
    """``(ts, line)`` of a line fetched with ``timestamps=true``; None when it has no stamp."""
    stamp, sep, line = raw.partition(" ")
    if not sep and not stamp:
        return None
    try:
        return parse_time(stamp), line
    except ValueError:
        return None


def _container_state(status: Json, limits: Mapping[str, str | None], image: str) -> ContainerState:
    state = _dict(status.get("state"))
    kind: Literal["running", "waiting", "terminated"] = "waiting"
    reason: str | None = None
    if "running" in state:
        kind = "running"
    elif "terminated" in state:
        kind = "terminated"
        reason = _dict(state["terminated"]).get("reason")
    elif "waiting" in state:
        reason = _dict(state["waiting"]).get("reason")
    last = _dict(_dict(status.get("lastState")).get("terminated"))
    name = str(status.get("name", ""))
    return ContainerState(
        name=name,
        ready=bool(status.get("ready", False)),
        restart_count=int(status.get("restartCount", 0) or 0),
        state=kind,
        reason=reason,
        last_terminated_reason=last.get("reason"),
        image=str(status.get("image") or image),
        memory_limit=limits.get(name),
    )


def _memory_limits(pod_spec: Json) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for container in _list(pod_spec.get("containers")):
        limits = _dict(_dict(_dict(container).get("resources")).get("limits"))
        memory = limits.get("memory")
        out[str(container.get("name", ""))] = None if memory is None else str(memory)
    return out


def pod_app(meta: Json, label: str) -> str:
    """The workload a pod belongs to: the value of its system's workload label ``label``
    (``System.workload_label``: ``app`` for Online Boutique, ``opentelemetry.io/name`` for
    the opentelemetry-demo chart), else the DaemonSet that owns it (a node agent, such as a
    chart's log collector DaemonSet, whose pod template labels name no workload); "" when
    neither says."""
    value = _dict(meta.get("labels")).get(label)
    if isinstance(value, str) and value:
        return value
    for ref in _list(meta.get("ownerReferences")):
        owner = _dict(ref)
        if owner.get("kind") == "DaemonSet" and owner.get("name"):
            return str(owner["name"])
    return ""


def pod_state(pod: Json, label: str) -> PodState:
    """A pod's phase, readiness and container statuses (spec-only containers while pending),
    filed under the workload its label ``label`` names (``pod_app``)."""
    meta = _dict(pod.get("metadata"))
    spec = _dict(pod.get("spec"))
    status = _dict(pod.get("status"))
    limits = _memory_limits(spec)
    images = {str(c.get("name")): str(c.get("image", "")) for c in _list(spec.get("containers"))}
    statuses = {str(s.get("name")): s for s in _list(status.get("containerStatuses"))}
    containers = []
    for name, image in images.items():
        found = statuses.get(name, {"name": name})
        containers.append(_container_state(found, limits, image))
    conditions = {c.get("type"): c.get("status") for c in _list(status.get("conditions"))}
    created = meta.get("creationTimestamp")
    return PodState(
        name=str(meta.get("name", "")),
        app=pod_app(meta, label),
        phase=str(status.get("phase", "Pending")),
        ready=conditions.get("Ready") == "True",
        created_at=parse_time(created) if isinstance(created, str) else 0.0,
        containers=containers,
    )


def deployment_state(deployment: Json) -> DeploymentState:
    """Desired and available replicas, revision, memory limits and template annotations."""
    meta = _dict(deployment.get("metadata"))
    spec = _dict(deployment.get("spec"))
    status = _dict(deployment.get("status"))
    template = _dict(spec.get("template"))
    limits = _memory_limits(_dict(template.get("spec")))
    revision = _dict(meta.get("annotations")).get(REVISION, "0")
    return DeploymentState(
        name=str(meta.get("name", "")),
        replicas=int(spec.get("replicas", 1) if spec.get("replicas") is not None else 1),
        ready_replicas=int(status.get("readyReplicas", 0) or 0),
        available_replicas=int(status.get("availableReplicas", 0) or 0),
        revision=int(revision) if str(revision).isdigit() else 0,
        memory_limits={k: v for k, v in limits.items() if v is not None},
        template_annotations={
            str(k): str(v)
            for k, v in _dict(_dict(template.get("metadata")).get("annotations")).items()
        },
    )


def event_time(event: Json) -> float | None:
    """When an event was last seen: lastTimestamp, eventTime, firstTimestamp or creation."""
    series = _dict(event.get("series"))
    for value in (
        event.get("lastTimestamp"),
        series.get("lastObservedTime"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
        _dict(event.get("metadata")).get("creationTimestamp"),
    ):
        if isinstance(value, str) and value:
            return parse_time(value)
    return None


def kube_event(event: Json) -> KubeEvent | None:
    """A core/v1 Event as a KubeEvent; None when it carries no time at all."""
    ts = event_time(event)
    if ts is None:
        return None
    involved = _dict(event.get("involvedObject"))
    source = _dict(event.get("source"))
    return KubeEvent(
        ts=ts,
        type="Warning" if event.get("type") == "Warning" else "Normal",
        reason=str(event.get("reason") or ""),
        object_kind=str(involved.get("kind") or ""),
        object_name=str(involved.get("name") or ""),
        message=str(event.get("message") or ""),
        count=max(1, int(event.get("count") or 1)),
        source=str(source.get("component") or event.get("reportingComponent") or ""),
    )


def _chaos_event(raw: Json) -> ChaosEvent | None:
    kind, operation = raw.get("type"), raw.get("operation")
    if kind not in ("Succeeded", "Failed") or operation not in ("Apply", "Recover"):
        return None
    return ChaosEvent(
        type=kind,
        operation=operation,
        message=str(raw.get("message") or ""),
        timestamp=str(raw.get("timestamp") or ""),
    )


def chaos_status(obj: Json) -> ChaosStatus:
    """The status block as the controller means it: conditions, desired phase, records."""
    meta = _dict(obj.get("metadata"))
    status = _dict(obj.get("status"))
    experiment = _dict(status.get("experiment"))
    conditions = {
        str(c.get("type")): c.get("status") == "True"
        for c in _list(status.get("conditions"))
        if isinstance(c, dict) and c.get("type")
    }
    records = []
    for raw in _list(experiment.get("containerRecords")):
        record = _dict(raw)
        events = [e for e in (_chaos_event(_dict(x)) for x in _list(record.get("events"))) if e]
        records.append(
            ChaosRecord(
                id=str(record.get("id", "")),
                phase=str(record.get("phase", "")),
                injected_count=int(record.get("injectedCount", 0) or 0),
                recovered_count=int(record.get("recoveredCount", 0) or 0),
                events=events,
            )
        )
    desired = experiment.get("desiredPhase")
    return ChaosStatus(
        kind=str(obj.get("kind", "")),
        name=str(meta.get("name", "")),
        conditions=conditions,
        desired_phase=desired if desired in ("Run", "Stop") else None,
        records=records,
    )


def chaos_ref(obj: Json, incident_label: str) -> ChaosRef:
    """The reference r2act keeps to an object it created."""
    meta = _dict(obj.get("metadata"))
    return ChaosRef(
        kind=str(obj.get("kind", "")),
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace", "")),
        incident_id=_dict(meta.get("labels")).get(incident_label),
        run_id=_dict(meta.get("labels")).get(RUN_LABEL),
    )


def stuck_deletion_detail(obj: Json) -> str:
    """Why a chaos object still exists: finalizers, phase and records not yet recovered."""
    meta = _dict(obj.get("metadata"))
    status = chaos_status(obj)
    pending = [r.id for r in status.records if r.phase.startswith("Injected")]
    failed = [
        f"{r.id}: {e.message}"
        for r in status.records
        for e in r.events
        if e.type == "Failed" and e.operation == "Recover"
    ]
    parts = [
        f"deletionTimestamp={meta.get('deletionTimestamp')}",
        f"finalizers={_list(meta.get('finalizers'))}",
        f"desiredPhase={status.desired_phase}",
        f"AllRecovered={status.conditions.get('AllRecovered')}",
        f"still injected={pending}",
    ]
    if failed:
        parts.append(f"recover failures={failed}")
    return ", ".join(parts)


def http_scope(obj: Json) -> str | None:
    """'METHOD /path' of an HTTPChaos rule (ANY when it has no method); None if no path."""
    spec = _dict(obj.get("spec"))
    path = spec.get("path")
    if not isinstance(path, str) or not path:
        return None
    method = spec.get("method")
    return f"{method if isinstance(method, str) and method else 'ANY'} {path}"


def selected_app(obj: Json, label: str) -> str | None:
    """The workload a chaos object's selector picks pods of, by the system's workload label
    ``label`` (None when its selector names none)."""
    selector = _dict(_dict(obj.get("spec")).get("selector"))
    app = _dict(selector.get("labelSelectors")).get(label)
    return app if isinstance(app, str) else None


def dns_names(obj: Json) -> set[str]:
    """Service names a DNSChaos breaks: its patterns without the trailing '.*'."""
    names: set[str] = set()
    for pattern in _list(_dict(obj.get("spec")).get("patterns")):
        if isinstance(pattern, str) and pattern:
            names.add(pattern[:-2] if pattern.endswith(".*") else pattern.rstrip("*."))
    return names


def strip_server_fields(obj: Json) -> dict[str, Any]:
    """An object as it was sent: apiVersion, kind, name/namespace/labels/annotations, spec."""
    meta = _dict(obj.get("metadata"))
    kept = {k: copy.deepcopy(meta[k]) for k in ("name", "namespace", "labels", "annotations")}
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {k: v for k, v in kept.items() if v is not None},
        "spec": copy.deepcopy(_dict(obj.get("spec"))),
    }


def _revision(obj: Json) -> int:
    value = _dict(_dict(obj.get("metadata")).get("annotations")).get(REVISION, "")
    return int(value) if str(value).isdigit() else -1


def _clean_template(template: Json) -> dict[str, Any]:
    out = copy.deepcopy(dict(template))
    meta = _dict(out.get("metadata"))
    labels = _dict(meta.get("labels"))
    labels.pop(TEMPLATE_HASH, None)
    if meta.get("creationTimestamp") is None:
        meta.pop("creationTimestamp", None)
    return out


def rollback_source(
    deployment: Json, replicasets: Iterable[Json]
) -> tuple[int, dict[str, Any], dict[str, str]] | None:
    """The revision a rollback returns to, its template and the annotations to write.

    kubectl's rule: among the ReplicaSets the deployment owns, take the highest revision
    below the current one; drop its ``pod-template-hash`` label; keep the deployment's own
    revision bookkeeping annotations and take every other annotation from the ReplicaSet.
    None when there is no earlier revision.
    """
    meta = _dict(deployment.get("metadata"))
    uid = meta.get("uid")
    current = _revision(deployment)
    owned = [
        rs
        for rs in replicasets
        if uid is None
        or any(
            _dict(o).get("uid") == uid
            for o in _list(_dict(rs.get("metadata")).get("ownerReferences"))
        )
    ]
    earlier = [
        rs for rs in owned if _revision(rs) >= 0 and (current < 0 or _revision(rs) < current)
    ]
    if not earlier:
        return None
    source = max(earlier, key=_revision)
    template = _clean_template(_dict(_dict(source.get("spec")).get("template")))
    annotations = {
        k: str(v)
        for k, v in _dict(meta.get("annotations")).items()
        if k in ROLLBACK_KEEP_ANNOTATIONS
    }
    for key, value in _dict(_dict(source.get("metadata")).get("annotations")).items():
        if key not in ROLLBACK_KEEP_ANNOTATIONS:
            annotations[key] = str(value)
    return _revision(source), template, annotations


def same_template(a: Json, b: Json) -> bool:
    """Templates equal once the fields the server adds or drops are normalised away."""
    return _clean_template(a) == _clean_template(b)
