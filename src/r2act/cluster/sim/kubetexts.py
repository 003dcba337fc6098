"""Kubernetes event texts: what the kubelet, the controllers and Chaos Mesh really record.

The mechanics (``timeline``, ``plans``, ``lifecycle``) decide *that* something happens to
a pod or a chaos object and say so with a reason and a short message; this module renders
the message exactly as the component that records it prints it (``texts`` cites each), with
the details a real event carries: the full image of a Pulled event, the pod's
``name_namespace(uid)`` in a BackOff event, the pod IP and the Go error of a failed probe.
It is applied when events are read (``events.window_events``), so the stored history stays
the mechanics' and every reader sees the same texts.

Hook for the mechanics: an Unhealthy message says which probe failed ("Readiness" or
"Liveness" first) and how: ``refused``/``connect`` (nothing listens) or ``timeout``/
``deadline``/``did not complete`` (too slow); with ``connect timeout`` for a network that
delays the TCP handshake (gRPC probes then fail to connect, not in the RPC).
"""

from __future__ import annotations

from r2act.cluster.sim.identity import PAUSE_IMAGE, PodFacts, pod_ip, pod_uid
from r2act.cluster.sim.texts import T

OOM_SOURCES = frozenset({"OOMKilling"})
"""Reasons only node-problem-detector records (about the Node); deploy/kind installs none."""


def probe_output(facts: PodFacts, pod: str, how: str) -> str:
    """The prober's output for a failed probe of ``pod`` (``how``: down, slow, connect)."""
    addr = f"{pod_ip(pod)}:{facts.port}"
    if facts.probe == "http":
        if how == "down":
            return T("k8s.http_get")(addr, T("go.refused")(addr))
        return T("k8s.http_get")(addr, T("k8s.http_timeout")())
    if facts.probe == "tcp":
        return T("k8s.tcp_refused")(addr) if how == "down" else T("go.io_timeout")(addr)
    if how == "slow":
        return T("k8s.grpc_rpc")()
    return T("k8s.grpc_connect")(addr, T("go.deadline")())


def _how(message: str) -> str:
    """down (nothing listens), connect (the handshake times out) or slow (no answer in 1 s)."""
    text = message.lower()
    if "refused" in text:
        return "down"
    if "connect timeout" in text:
        return "connect"
    if "failed to connect" in text:
        return "down"
    return "slow"


def kubelet_message(
    reason: str, message: str, *, pod: str, facts: PodFacts, namespace: str
) -> str | None:
    """The kubelet's text for an event the mechanics recorded about ``pod`` (of a deployment
    with ``facts``); None if no component on the test bed would record it."""
    if reason in OOM_SOURCES:
        return None
    container = facts.container
    if reason == "Pulled":
        return T("k8s.pulled")(PAUSE_IMAGE if "pause" in message else facts.image)
    if reason == "Created":
        return T("k8s.created")(container)
    if reason == "Started":
        return T("k8s.started")(container)
    if reason == "BackOff":
        return T("k8s.backoff")(container, pod, namespace, pod_uid(pod))
    if reason == "Killing":
        if "liveness" in message:
            return T("k8s.liveness_restart")(container)
        if "definition changed" in message:
            return T("k8s.definition_changed")(container)
        return T("k8s.stopping")(container)
    if reason == "Unhealthy":
        probe = "Liveness" if message.startswith("Liveness") else "Readiness"
        return T("k8s.probe_failed")(probe, probe_output(facts, pod, _how(message)))
    return message


# --- Chaos Mesh ----------------------------------------------------------------------

SOURCES: dict[str, str] = {
    "FinalizerInited": "finalizers",
    "Started": "desiredphase",
    "TimeUp": "desiredphase",
    "Deleted": "desiredphase",
    "Paused": "desiredphase",
    "Applied": "records",
    "Recovered": "records",
    "Failed": "records",
}
"""The controller that records each reason: chaos-controller-manager builds one recorder
per controller and names the event source after it (``recorder.go`` L131-135)."""
CONTAINER_RECORDS = frozenset({"StressChaos", "DNSChaos", "IOChaos"})
"""Kinds that select containers: their record id is ``namespace/pod/container``."""


def record_id(kind: str, namespace: str, pod: str, containers: list[str]) -> str:
    """The id Applied/Recovered name: ``ns/pod``, or ``ns/pod/container`` for container kinds."""
    if kind in CONTAINER_RECORDS:
        return f"{namespace}/{pod}/{containers[0] if containers else 'server'}"
    return f"{namespace}/{pod}"


def updated(field: str) -> tuple[str, str, str]:
    """(reason, message, source) of the Updated event a controller records after it wrote
    ``field`` (finalizer, desiredPhase or records) to the object."""
    source = {"finalizer": "finalizers", "desiredPhase": "desiredphase"}.get(field, "records")
    return "Updated", T("cm.updated")(field), source


AFTER: dict[str, str] = {
    "FinalizerInited": "finalizer",
    "Started": "desiredPhase",
    "TimeUp": "desiredPhase",
    "Deleted": "desiredPhase",
}
"""Reasons after which the same controller writes the object and records an Updated."""


# --- probe cadence -------------------------------------------------------------------

FAILURE_THRESHOLD = 3
"""Every probe of the systems' manifests has the default failureThreshold 3 (and 1 s
timeout): a container stops being ready after 3 failed readiness periods and is restarted
after 3 failed liveness periods; the periods are each system's (``System.probes``)."""
