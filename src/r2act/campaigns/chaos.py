"""Render a planned incident as the object that injects it: Chaos Mesh, ConfigFault or
FlagFault.

One function per kind keeps each spec readable next to the Chaos Mesh docs. Every object
is labelled so that ``r2act cleanup`` can find it and named deterministically from the
incident id, so a resumed campaign recognises (and refuses to duplicate) its own objects.

Memory and DNS faults are ``ConfigFault`` objects (``r2act.io/v1alpha1``): a change to one
Deployment's pod template (a memory limit, or one ``*_ADDR`` variable) that the adapters
apply as a rollout and undo from the originals they saved (``docs/faults.md``). Feature
flags are ``FlagFault`` objects (same API version), in the form
``cluster.flag_fault_object.parse`` reads: one flag and the variant to make its default.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from r2act.schema import (
    CONFIG_FAULT_API_VERSION,
    CONFIG_FAULT_KIND,
    FLAG_FAULT_KIND,
    FaultType,
    PlannedIncident,
    Topology,
)
from r2act.systems import system_of

API_VERSION = "chaos-mesh.org/v1alpha1"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "r2act"
INCIDENT_LABEL = "r2act.io/incident"
INCIDENT_ANNOTATION = "r2act.io/incident-id"
MAX_NAME = 57
"""Chaos Mesh appends suffixes to names of objects it derives; 57 leaves room under 63."""

_ABBREV = {
    FaultType.POD_FAILURE: "pod",
    FaultType.CPU_SATURATION: "cpu",
    FaultType.MEMORY_PRESSURE: "mem",
    FaultType.NETWORK_DELAY: "delay",
    FaultType.HTTP_ERROR: "http-error",
    FaultType.HTTP_ABORT: "http-abort",
    FaultType.DNS_FAULT: "dns-error",
    FaultType.DNS_RANDOM: "dns-random",
    FaultType.FEATURE_FLAG: "flag",
}


OWN_NAME_PREFIXES = tuple(f"r2act-{abbrev}-" for abbrev in _ABBREV.values())
"""How every object ``chaos_name`` names begins: the marks of r2act's own objects (with the
``r2act.io/`` label and annotation keys) that a leak check looks for, where the bare word
``r2act`` would also hit names r2act did not make (a kind node ``r2act-worker``)."""


def _hex10(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def chaos_name(incident: PlannedIncident) -> str:
    """``r2act-<fault abbrev>-<10 hex of sha256(id)>``: unique, DNS-1123, at most 57 chars."""
    return f"r2act-{_ABBREV[incident.fault.type]}-{_hex10(incident.id)}"


def incident_label(incident_id: str) -> str:
    """The id as a label value; ids over 63 chars keep a 52-char prefix and a hash."""
    if len(incident_id) <= 63:
        return incident_id
    return f"{incident_id[:52]}-{_hex10(incident_id)}"


def render_chaos(incident: PlannedIncident, namespace: str, topology: Topology) -> dict[str, Any]:
    """The injecting object (apiVersion, kind, metadata, spec) for ``incident``."""
    fault = incident.fault
    config = fault.chaos_kind in (CONFIG_FAULT_KIND, FLAG_FAULT_KIND)
    spec: dict[str, Any] = {} if config else {"mode": "all"}
    spec.update(_RENDERERS[fault.type](incident, namespace, topology))
    spec["duration"] = f"{fault.duration_s}s"
    return {
        "apiVersion": CONFIG_FAULT_API_VERSION if config else API_VERSION,
        "kind": fault.chaos_kind,
        "metadata": {
            "name": chaos_name(incident),
            "namespace": namespace,
            "labels": {MANAGED_BY_LABEL: MANAGED_BY, INCIDENT_LABEL: incident_label(incident.id)},
            "annotations": {INCIDENT_ANNOTATION: incident.id},
        },
        "spec": spec,
    }


def _by_app(namespace: str, app: str, topology: Topology) -> dict[str, Any]:
    """A selector of ``app``'s pods by the label its system's Deployments select them by
    (``System.workload_label``: ``app`` in Online Boutique, ``opentelemetry.io/name`` in
    the opentelemetry-demo chart)."""
    label = system_of(topology).workload_label
    return {"selector": {"namespaces": [namespace], "labelSelectors": {label: app}}}


def _pod(incident: PlannedIncident, namespace: str, topology: Topology) -> dict[str, Any]:
    return {"action": "pod-failure", **_by_app(namespace, incident.service, topology)}


def _stress(incident: PlannedIncident, namespace: str, topology: Topology) -> dict[str, Any]:
    params = incident.fault.parameters
    return {
        **_by_app(namespace, incident.service, topology),
        "containerNames": [topology.deployment(incident.service).main.name],
        "stressors": {"cpu": {"workers": params["workers"], "load": params["load"]}},
    }


def _memory(incident: PlannedIncident, namespace: str, topology: Topology) -> dict[str, Any]:
    """The service's own main container gets a limit below its working set."""
    main = topology.deployment(incident.service).main
    return {
        "deployment": incident.service,
        "container": main.name,
        "resources": {"limits": {"memory": incident.fault.parameters["memory_limit"]}},
    }


def _delay(incident: PlannedIncident, namespace: str, topology: Topology) -> dict[str, Any]:
    params = incident.fault.parameters
    return {
        "action": "delay",
        **_by_app(namespace, incident.service, topology),
        "direction": params.get("direction", "to"),
        "delay": {
            "latency": params["latency"],
            "jitter": params["jitter"],
            "correlation": params["correlation"],
        },
    }


def _http(incident: PlannedIncident, namespace: str, topology: Topology) -> dict[str, Any]:
    params = incident.fault.parameters
    spec: dict[str, Any] = {
        **_by_app(namespace, topology.entrypoint, topology),
        "target": params["target"],
        "port": params["port"],
        "path": params["path"],
        "method": params["method"],
    }
    if incident.fault.type == FaultType.HTTP_ERROR:
        spec["replace"] = {"code": params["code"]}
    else:
        spec["abort"] = True
    return spec


def _dns(incident: PlannedIncident, namespace: str, topology: Topology) -> dict[str, Any]:
    """The primary caller's address variable for the service gets a wrong value."""
    params = incident.fault.parameters
    caller = str(params["caller"])
    return {
        "deployment": caller,
        "container": topology.deployment(caller).main.name,
        "env": {str(params["variable"]): str(params["value"])},
    }


def _flag(incident: PlannedIncident, namespace: str, topology: Topology) -> dict[str, Any]:
    """The flag and the variant to make its default, and where the system's flag service
    reads the flag file (``System.flag_store``: its ConfigMap, data key and Deployment)."""
    params = incident.fault.parameters
    store = system_of(topology).flag_store
    if store is None:
        raise ValueError(f"{topology.system} has no flag service; a feature_flag fault needs one")
    return {
        "flag": str(params["flag"]),
        "variant": str(params["variant"]),
        "configMap": store.config_map,
        "key": store.key,
        "deployment": store.deployment,
    }


_RENDERERS: dict[FaultType, Callable[[PlannedIncident, str, Topology], dict[str, Any]]] = {
    FaultType.POD_FAILURE: _pod,
    FaultType.CPU_SATURATION: _stress,
    FaultType.MEMORY_PRESSURE: _memory,
    FaultType.NETWORK_DELAY: _delay,
    FaultType.HTTP_ERROR: _http,
    FaultType.HTTP_ABORT: _http,
    FaultType.DNS_FAULT: _dns,
    FaultType.DNS_RANDOM: _dns,
    FaultType.FEATURE_FLAG: _flag,
}
