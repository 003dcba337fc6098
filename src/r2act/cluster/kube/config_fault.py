"""ConfigFault on a real Deployment: what to patch, what to remember, what counts as injected.

Pure JSON in, JSON out (``kube`` sends it). The contract (CONTRACTS "ConfigFault object"):
inject stores the original values of exactly the touched fields, with the fault's name,
incident id and run id, as JSON in the Deployment annotation ``r2act.io/config-fault`` and
patches the pod template (a rollout); remove restores them and drops the annotation. Both
are one JSON Patch whose first operation tests the annotation, so a concurrent change makes
the server refuse the patch instead of overwriting someone else's state. The Deployment is
never labelled or deleted.

A memory limit below the container's request is invalid (the API server rejects it), so a
lower limit brings the request down with it; both originals are kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from r2act.cluster.base import MANAGED_BY, MANAGED_BY_LABEL, RUN_LABEL
from r2act.cluster.config_fault_object import parse, rejected
from r2act.cluster.kube.parse import annotation_record
from r2act.errors import ConflictError
from r2act.schema import (
    CONFIG_FAULT_ANNOTATION,
    CONFIG_FAULT_API_VERSION,
    CONFIG_FAULT_KIND,
    CONFIG_FAULT_RUN_ANNOTATION,
    ChaosRecord,
    ChaosStatus,
    memory_bytes,
)

KIND: Final = CONFIG_FAULT_KIND
API_VERSION: Final = CONFIG_FAULT_API_VERSION
ANNOTATION: Final = CONFIG_FAULT_ANNOTATION
RUN_ANNOTATION: Final = CONFIG_FAULT_RUN_ANNOTATION
_POINTER: Final = "/metadata/annotations/" + ANNOTATION.replace("~", "~0").replace("/", "~1")

Json = Mapping[str, Any]


def bookkeeping(deployment: Json) -> dict[str, Any] | None:
    """The parsed annotation of a Deployment, None when it carries none (garbage counts as
    someone else's, ``parse.annotation_record``)."""
    return annotation_record(deployment, ANNOTATION)


def _containers(deployment: Json) -> list[dict[str, Any]]:
    spec = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    return [dict(c) for c in spec.get("containers") or []]


def _index(deployment: Json, container: str, name: str) -> int:
    for index, found in enumerate(_containers(deployment)):
        if found.get("name") == container:
            return index
    deployment_name = (deployment.get("metadata") or {}).get("name")
    raise rejected(name, f"deployment {deployment_name} has no container {container!r}")


def _env_value(env: list[Any], variable: str) -> str | None:
    for entry in env:
        if isinstance(entry, Mapping) and entry.get("name") == variable:
            value = entry.get("value")
            return None if value is None else str(value)
    return None


def _with_env(env: list[Any], values: Mapping[str, str | None]) -> list[Any]:
    """``env`` with each variable set (None removes it), order kept, new ones appended."""
    out: list[Any] = []
    seen: set[str] = set()
    for entry in env:
        variable = entry.get("name") if isinstance(entry, Mapping) else None
        if variable in values:
            seen.add(str(variable))
            if values[str(variable)] is not None:
                out.append({"name": variable, "value": values[str(variable)]})
        else:
            out.append(entry)
    out.extend(
        {"name": k, "value": v} for k, v in values.items() if k not in seen and v is not None
    )
    return out


def _resource_ops(index: int, current: Json, memory: Mapping[str, str | None]) -> list[Any]:
    """Set (or remove, for None) limits.memory and requests.memory of one container."""
    resources = dict(current.get("resources") or {})
    for section in ("limits", "requests"):
        values = dict(resources.get(section) or {})
        if memory.get(section) is None:
            values.pop("memory", None)
        else:
            values["memory"] = memory[section]
        resources[section] = values
    path = f"/spec/template/spec/containers/{index}/resources"
    return [{"op": "add", "path": path, "value": resources}]


def inject_patch(deployment: Json, obj: Json) -> list[dict[str, Any]]:
    """The JSON Patch that applies the fault and records the originals (ConflictError when
    the Deployment already carries a ConfigFault)."""
    name, spec = parse(obj)
    if bookkeeping(deployment) is not None:
        raise ConflictError(
            f"deployment {spec['deployment']} already carries a ConfigFault ({ANNOTATION}); "
            "r2act never overwrites one (remove it first: r2act cleanup)"
        )
    index = _index(deployment, spec["container"], name)
    current = _containers(deployment)[index]
    metadata = obj.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    labels = metadata.get("labels") or {}
    book: dict[str, Any] = {
        "name": name,
        "incidentId": annotations.get("r2act.io/incident-id") or labels.get("r2act.io/incident"),
        "runId": labels.get(RUN_LABEL) or annotations.get(RUN_ANNOTATION),
        "container": spec["container"],
    }
    ops: list[dict[str, Any]] = []
    if spec.get("env") is not None:
        env = list(current.get("env") or [])
        wanted = {str(k): str(v) for k, v in spec["env"].items()}
        book["env"] = {k: _env_value(env, k) for k in sorted(wanted)}
        book["applied"] = {"env": wanted}
        path = f"/spec/template/spec/containers/{index}/env"
        ops.append({"op": "add", "path": path, "value": _with_env(env, dict(wanted))})
    else:
        resources = current.get("resources") or {}
        limit = ((resources.get("limits") or {}).get("memory")) or None
        request = ((resources.get("requests") or {}).get("memory")) or None
        book["resources"] = {"limits": {"memory": limit}, "requests": {"memory": request}}
        new_limit = str(spec["resources"]["limits"]["memory"])
        book["applied"] = {"resources": {"limits": {"memory": new_limit}}}
        new_request = request
        if request is not None and memory_bytes(str(request)) > memory_bytes(new_limit):
            new_request = new_limit
        ops += _resource_ops(index, current, {"limits": new_limit, "requests": new_request})
    if (deployment.get("metadata") or {}).get("annotations") is None:
        ops.insert(0, {"op": "add", "path": "/metadata/annotations", "value": {}})
    ops.append({"op": "add", "path": _POINTER, "value": json.dumps(book, sort_keys=True)})
    return ops


def remove_patch(deployment: Json, name: str) -> list[dict[str, Any]] | None:
    """The JSON Patch that restores the originals and drops the annotation; None when the
    annotation does not name this fault (then nothing is r2act's to undo)."""
    book = bookkeeping(deployment)
    if book is None or book.get("name") != name:
        return None
    raw = ((deployment.get("metadata") or {}).get("annotations") or {})[ANNOTATION]
    ops: list[dict[str, Any]] = [{"op": "test", "path": _POINTER, "value": raw}]
    index = _index(deployment, str(book.get("container")), name)
    current = _containers(deployment)[index]
    if isinstance(book.get("env"), dict):
        env = list(current.get("env") or [])
        path = f"/spec/template/spec/containers/{index}/env"
        ops.append({"op": "add", "path": path, "value": _with_env(env, book["env"])})
    if isinstance(book.get("resources"), dict):
        resources = book["resources"]
        memory = {
            "limits": (resources.get("limits") or {}).get("memory"),
            "requests": (resources.get("requests") or {}).get("memory"),
        }
        ops += _resource_ops(index, current, memory)
    ops.append({"op": "remove", "path": _POINTER})
    return ops


def carries(pod: Json, book: Json, spec_values: Json) -> bool:
    """The pod's main container runs the values the fault set."""
    for found in (pod.get("spec") or {}).get("containers") or []:
        if found.get("name") != book.get("container"):
            continue
        env = spec_values.get("env")
        if isinstance(env, Mapping):
            current = list(found.get("env") or [])
            return all(_env_value(current, str(k)) == str(v) for k, v in env.items())
        limit = ((found.get("resources") or {}).get("limits") or {}).get("memory")
        wanted = ((spec_values.get("resources") or {}).get("limits") or {}).get("memory")
        try:
            return limit is not None and memory_bytes(str(limit)) == memory_bytes(str(wanted))
        except ValueError:
            return False
    return False


def faulty_values(book: Json, deployment: Json) -> dict[str, Any]:
    """What the fault set (kept beside the originals; read back from the template when an
    older annotation lacks it)."""
    if isinstance(book.get("applied"), dict):
        return dict(book["applied"])
    index = _index(deployment, str(book.get("container")), str(book.get("name")))
    current = _containers(deployment)[index]
    if isinstance(book.get("env"), dict):
        env = list(current.get("env") or [])
        return {"env": {k: _env_value(env, k) for k in book["env"]}}
    limit = ((current.get("resources") or {}).get("limits") or {}).get("memory")
    return {"resources": {"limits": {"memory": limit}}}


def status(name: str, namespace: str, deployment: Json | None, pods: Sequence[Json]) -> ChaosStatus:
    """Exists while the annotation names the fault; a record per pod of the Deployment."""
    book = None if deployment is None else bookkeeping(deployment)
    if deployment is None or book is None or book.get("name") != name:
        return ChaosStatus(kind=KIND, name=name, exists=False)
    values = faulty_values(book, deployment)
    records = [
        ChaosRecord(
            id=f"{namespace}/{(p.get('metadata') or {}).get('name')}",
            phase="Injected" if carries(p, book, values) else "Not Injected",
            injected_count=int(carries(p, book, values)),
        )
        for p in pods
        if not (p.get("metadata") or {}).get("deletionTimestamp")
    ]
    injected = [r for r in records if r.phase == "Injected"]
    return ChaosStatus(
        kind=KIND,
        name=name,
        conditions={
            "Selected": bool(records),
            "AllInjected": bool(injected),
            "AllRecovered": bool(records) and not injected,
            "Paused": False,
        },
        desired_phase="Run",
        records=injected or records,
    )


def owner_labels(book: Json) -> dict[str, str]:
    """The labels the fault would carry as an object: what the delete guard checks."""
    labels = {MANAGED_BY_LABEL: MANAGED_BY}
    if book.get("runId"):
        labels[RUN_LABEL] = str(book["runId"])
    return labels
