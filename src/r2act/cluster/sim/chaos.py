"""Reading Chaos Mesh objects the way the Chaos Mesh controller does, minus the daemon.

``parse_chaos`` turns the object r2act sends (the same dict the real adapter sends) into a
``Fault``: which pods it selects and what it does to them. ``chaos_status`` renders the
status block the controller would report (conditions, desiredPhase, per-target records).
Selection happens once, at creation: pods created later are never injected, as in Chaos
Mesh (``controllers/common/records``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from r2act.cluster.config_fault_object import parse as parse_config_object
from r2act.cluster.sim.state import ChaosRec, PodRec
from r2act.cluster.sim.texts import T
from r2act.errors import PermanentClusterError
from r2act.schema import (
    ChaosEvent,
    ChaosRecord,
    ChaosStatus,
    memory_bytes,
)

KINDS = ("PodChaos", "StressChaos", "NetworkChaos", "HTTPChaos", "DNSChaos")
CONTAINER_LEVEL = frozenset({"StressChaos", "DNSChaos"})
"""Kinds whose records are per container (``ns/pod/container``), not per pod."""


@dataclass(frozen=True)
class Fault:
    """What one chaos object does, decoded from its spec."""

    effect: str
    """'pod_failure', 'cpu', 'memory', 'delay', 'http' or 'dns'; a flag fault's effect
    (``flagfault.effect_fault``) also 'flag_errors', 'flag_dial' or 'memory_leak'."""
    apps: tuple[str, ...]
    """Workloads the selector picks (values of the system's ``workload_label``)."""
    cpu_cores: float = 0.0
    memory_bytes: int = 0
    latency_ms: float = 0.0
    jitter_ms: float = 0.0
    http_method: str | None = None
    http_path: str = "*"
    http_code: int | None = None
    """Replacement status for http errors; None means the request is aborted."""
    dns_action: str = "error"
    dns_hosts: tuple[str, ...] = ()
    """Service names the DNS patterns match."""
    flag_op: str = ""
    """'flag_errors': the reader's operation whose calls fail."""
    flag_share: float = 0.0
    """'flag_errors': share of those calls that fail."""
    flag_kind: str = ""
    """'flag_errors' and 'flag_dial': the error kind the scene gives the failure."""
    flag_callee: str = ""
    """'flag_dial': the callee the reader cannot dial."""
    leak_bytes_per_s: float = 0.0
    """'memory_leak': how fast the reader's working set grows."""


_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)$")
_SIZE = re.compile(r"^([0-9]+)(B|KB|MB|GB|KiB|MiB|GiB)?$")
_SIZE_UNIT = {
    None: 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}
"""KB/MB/GB are decimal, KiB/MiB/GiB binary (as the recovery labels read them)."""


def _bad(name: str, what: str) -> PermanentClusterError:
    return PermanentClusterError(f"chaos object {name!r} rejected: {what}")


def duration_s(text: str, name: str = "?") -> float:
    """'120s', '200ms', '2m' -> seconds."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise _bad(name, f"duration {text!r} is not like '120s' or '200ms'")
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[match.group(2)]
    return float(match.group(1)) * scale


def size_bytes(text: str, name: str = "?") -> int:
    """'256MB' -> bytes (decimal MB, binary MiB)."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise _bad(name, f"memory size {text!r} is not like '256MB'")
    return int(match.group(1)) * _SIZE_UNIT[match.group(2)]


def selected_apps(selector: Mapping[str, Any], name: str, label: str) -> tuple[str, ...]:
    """Values of the workload label ``label`` (the system's ``System.workload_label``) a
    labelSelectors / expressionSelectors selector picks (the forms r2act emits). A selector
    by another label selects none of the system's pods, as Chaos Mesh would find none."""
    apps: list[str] = []
    labels = selector.get("labelSelectors") or {}
    if label in labels:
        apps.append(str(labels[label]))
    for expression in selector.get("expressionSelectors") or []:
        if expression.get("key") == label and expression.get("operator") == "In":
            apps.extend(str(v) for v in expression.get("values") or [])
    if not apps:
        raise _bad(
            name,
            f"selector names no {label!r} value (the label this system's pods are selected "
            "by; use labelSelectors or expressionSelectors)",
        )
    return tuple(dict.fromkeys(apps))


def parse_chaos(obj: Mapping[str, Any], label: str) -> tuple[str, str, Fault]:
    """(kind, name, fault) of a Chaos Mesh object whose selector picks pods by the workload
    label ``label``; PermanentClusterError when malformed."""
    kind = str(obj.get("kind", ""))
    metadata = obj.get("metadata") or {}
    name = str(metadata.get("name", ""))
    spec = obj.get("spec") or {}
    if kind not in KINDS:
        raise _bad(name, f"kind {kind!r} is not one of {', '.join(KINDS)}")
    if not name:
        raise _bad(name, "metadata.name is missing")
    apps = selected_apps(spec.get("selector") or {}, name, label)
    if kind == "PodChaos":
        if spec.get("action") != "pod-failure":
            raise _bad(name, f"PodChaos action {spec.get('action')!r} is not simulated")
        return kind, name, Fault("pod_failure", apps)
    if kind == "StressChaos":
        stressors = spec.get("stressors") or {}
        if "cpu" in stressors:
            cpu = stressors["cpu"]
            cores = int(cpu.get("workers", 1)) * int(cpu.get("load", 100)) / 100
            return kind, name, Fault("cpu", apps, cpu_cores=cores)
        if "memory" in stressors:
            memory = stressors["memory"]
            size = size_bytes(str(memory.get("size", "0")), name)
            return kind, name, Fault("memory", apps, memory_bytes=size)
        raise _bad(name, "StressChaos has neither a cpu nor a memory stressor")
    if kind == "NetworkChaos":
        delay = spec.get("delay") or {}
        if spec.get("action") != "delay" or "latency" not in delay:
            raise _bad(name, "only NetworkChaos action 'delay' with delay.latency is simulated")
        latency = duration_s(str(delay["latency"]), name) * 1000
        jitter = duration_s(str(delay.get("jitter", "0ms")), name) * 1000
        return kind, name, Fault("delay", apps, latency_ms=latency, jitter_ms=jitter)
    if kind == "HTTPChaos":
        abort = bool(spec.get("abort"))
        replace = spec.get("replace") or {}
        code = replace.get("code")
        if not abort and code is None:
            raise _bad(name, "HTTPChaos needs abort: true or replace.code")
        method = spec.get("method")
        return (
            kind,
            name,
            Fault(
                "http",
                apps,
                http_method=None if method is None else str(method),
                http_path=str(spec.get("path", "*")),
                http_code=None if abort else int(str(code)),
            ),
        )
    patterns = [str(p) for p in spec.get("patterns") or []]
    hosts = tuple(dict.fromkeys(p.split(".")[0].rstrip("*?") for p in patterns if p))
    action = str(spec.get("action", "error"))
    if action not in ("error", "random"):
        raise _bad(name, f"DNSChaos action {action!r} is not error or random")
    return kind, name, Fault("dns", apps, dns_action=action, dns_hosts=hosts)


def select_pods(spec: Mapping[str, Any], apps: tuple[str, ...], pods: list[PodRec]) -> list[str]:
    """Pods the selector picks among ``pods`` (which already exist); honours mode one/all/fixed."""
    chosen = [p.name for p in pods if p.app in apps]
    mode = str(spec.get("mode", "all"))
    if mode == "one":
        return chosen[:1]
    if mode == "fixed":
        return chosen[: int(spec.get("value", 1))]
    if mode in ("fixed-percent", "random-max-percent"):
        count = max(1, len(chosen) * int(spec.get("value", 100)) // 100)
        return chosen[:count]
    return chosen


def rfc3339(ts: float) -> str:
    """Seconds since the epoch -> RFC 3339 (UTC, seconds precision, as Kubernetes writes)."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def chaos_status(rec: ChaosRec, t: float, no_shell: Mapping[str, str], label: str) -> ChaosStatus:
    """The status the controller would report for ``rec`` at time ``t`` (``no_shell``: the
    system's shell-less deployments, where DNSChaos fails to apply; ``label``: its
    workload label)."""
    if rec.deleted_at is not None and t >= rec.deleted_at:
        return ChaosStatus(kind=rec.kind, name=rec.name, exists=False)
    stopped = rec.expired(t)
    records = [_record(rec, pod, t, stopped, no_shell=no_shell, label=label) for pod in rec.pods]
    phases = {r.phase for r in records}
    conditions = {
        "Selected": bool(records),
        "AllInjected": bool(records) and phases == {"Injected"},
        "AllRecovered": bool(records) and phases == {"Not Injected"},
        "Paused": False,
    }
    return ChaosStatus(
        kind=rec.kind,
        name=rec.name,
        conditions=conditions,
        desired_phase="Stop" if stopped else "Run",
        records=records,
    )


def _record(
    rec: ChaosRec, pod: str, t: float, stopped: bool, *, no_shell: Mapping[str, str], label: str
) -> ChaosRecord:
    suffix = f"/{rec.containers[0]}" if rec.kind in CONTAINER_LEVEL and rec.containers else ""
    record_id = f"{rec.namespace}/{pod}{suffix}"
    if t < rec.applied_at:
        return ChaosRecord(id=record_id, phase="Not Injected")
    applied = rfc3339(rec.applied_at)
    if rec.injection_failed:
        failure = ChaosEvent(
            type="Failed",
            operation="Apply",
            message=apply_error(rec, pod, no_shell, label),
            timestamp=applied,
        )
        return ChaosRecord(id=record_id, phase="Not Injected", events=[failure])
    events = [ChaosEvent(type="Succeeded", operation="Apply", timestamp=applied)]
    if stopped:
        end = rec.effect_end() or t
        events.append(ChaosEvent(type="Succeeded", operation="Recover", timestamp=rfc3339(end)))
        return ChaosRecord(
            id=record_id, phase="Not Injected", injected_count=1, recovered_count=1, events=events
        )
    return ChaosRecord(id=record_id, phase="Injected", injected_count=1, events=events)


@dataclass(frozen=True)
class ConfigSpec:
    """What a ConfigFault changes in one deployment's pod template."""

    deployment: str
    container: str
    env: tuple[tuple[str, str], ...] = ()
    memory_limit: int | None = None


def parse_config_fault(obj: Mapping[str, Any]) -> tuple[str, ConfigSpec]:
    """(name, spec) of an r2act ConfigFault; PermanentClusterError when malformed."""
    name, spec = parse_config_object(obj)
    deployment, container = str(spec["deployment"]), str(spec["container"])
    env = spec.get("env")
    if env is not None:
        pairs = tuple(sorted((str(k), str(v)) for k, v in env.items()))
        return name, ConfigSpec(deployment, container, env=pairs)
    limit = memory_bytes(str(spec["resources"]["limits"]["memory"]))
    return name, ConfigSpec(deployment, container, memory_limit=limit)


READ_ONLY_ETC = T("cm.daemon_error")(
    "exit status 1", T("busybox.cp_create")("/etc/resolv.conf.chaos.bak")
)
NO_SHELL = T("cm.daemon_error")("exit status 1", T("go.exec_not_found")("sh"))
"""chaos-daemon's ``util.EncodeOutputToError`` of the failing ``sh -c "cp ..."`` (inferred:
the shell-less image makes the exec fail, busybox's cp reports the read-only /etc)."""


def dns_injection_error(
    app: str, no_shell: Mapping[str, str], read_only_root: bool = True
) -> str | None:
    """The daemon's error when DNSChaos is applied to ``app``'s container (None: it works).

    chaos-daemon backs ``/etc/resolv.conf`` up with ``sh -c "cp ..."`` (dns_server.go L57,
    L74): in an image without a shell (``no_shell``: the system's ``System.no_shell``) the
    exec fails; in one with a shell but a read-only root, the copy under /etc does."""
    if app in no_shell:
        return NO_SHELL
    return READ_ONLY_ETC if read_only_root else None


def apply_error(rec: ChaosRec, pod: str, no_shell: Mapping[str, str], label: str) -> str:
    """The error chaos-daemon returns when applying ``rec`` to ``pod`` fails (``label``: the
    system's workload label, which the selector names the pod's workload by)."""
    if rec.kind == "DNSChaos":
        apps = _apps(rec, label)
        app = max((a for a in apps if pod.startswith(f"{a}-")), key=len, default="")
        reason = dns_injection_error(app, no_shell)
        if reason is not None:
            return T("grpc.status")("Unknown", reason)
    return T("grpc.status")("Unknown", f"{pod}: exit status 1")


def _apps(rec: ChaosRec, label: str) -> tuple[str, ...]:
    try:
        return selected_apps(rec.spec.get("selector") or {}, rec.name, label)  # type: ignore[arg-type]
    except PermanentClusterError:
        return ()
