"""A fixture factory that writes raw incidents (DESIGN section 6) from synthetic data.

Tests build the exact situation they need (a phase missing, empty logs, a failed
injection, a leak, a healthy incident) without a collector or a simulator; the files follow
the raw contract byte for byte in structure: gzip JSON-lines logs, JSON-lines events,
long-format metrics Parquet, state and chaos status JSON, incident.json, chaos.yaml and
COMPLETE.
"""

from __future__ import annotations

import gzip
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from r2act.campaigns import load_manifest, plan_incidents, render_chaos
from r2act.schema import PHASES, PlannedIncident

MANIFEST = """\
name: gatetest
system: onlineboutique
target: {kind: sim, seed: 3}
services: [cartservice, checkoutservice, paymentservice]
faults:
  - {type: pod_failure, intensities: [moderate, severe]}
  - {type: cpu_saturation, intensities: [severe]}
  - {type: network_delay, intensities: [moderate]}
  - {type: dns_fault, intensities: [severe]}
repetitions: 3
phases: {pre_s: 60, during_s: 60, post_s: 60, recovery_timeout_s: 60}
seed: 11
"""
LOG_SERVICES = ("frontend", "cartservice", "checkoutservice", "paymentservice")
STEP = 15.0
T0 = 1_780_000_000.0

Injection = Literal["ok", "failed", "unconfirmed"]


@dataclass
class RawSpec:
    """What to write for one incident; the defaults make a clean main incident."""

    missing_phase: str | None = None
    empty_logs_phase: str | None = None
    injection: Injection = "ok"
    leak: Literal["logs", "events", "metrics", None] = None
    metric_gap: bool = False
    effect: bool = True
    recovered: bool = True
    complete: bool = True
    pilot: bool = False
    lines_per_service: int = 20
    extra_events: list[dict[str, Any]] = field(default_factory=list)


def planned(tmp: Path) -> list[PlannedIncident]:
    """The small campaign every test draws incidents from."""
    path = tmp / "gatetest.yaml"
    path.write_text(MANIFEST, encoding="utf-8")
    return plan_incidents(load_manifest(path))


def _pod(service: str) -> str:
    return f"{service}-6d4f9c7b8-x{len(service):02d}q"


def _windows(incident: PlannedIncident) -> dict[str, tuple[float, float]]:
    p = incident.phases
    pre = (T0, T0 + p.pre_s)
    during = (pre[1] + 1, pre[1] + 1 + p.during_s)
    post = (during[1] + 5, during[1] + 5 + p.post_s)
    return {"pre": pre, "during": during, "post": post}


def _logs(
    incident: PlannedIncident,
    phase: str,
    window: tuple[float, float],
    spec: RawSpec,
    chaos_name: str,
) -> bytes:
    if spec.empty_logs_phase == phase:
        return gzip.compress(b"", mtime=0)
    out: list[str] = []
    n = spec.lines_per_service
    for i in range(n):
        for service in LOG_SERVICES:
            ts = window[0] + (window[1] - window[0]) * (i + 0.5) / n
            bad = spec.effect and phase == "during" and service == incident.service and i % 2
            message = (
                {"severity": "error", "message": "rpc error: code = Unavailable desc = refused"}
                if bad
                else {"severity": "info", "message": f"request complete in {i} ms"}
            )
            if spec.leak == "logs" and phase == "during" and i == 3:
                message = {"severity": "info", "message": f"applied {chaos_name} via chaos-mesh"}
            out.append(
                json.dumps(
                    {
                        "ts": ts,
                        "pod": _pod(service),
                        "container": "server",
                        "service": service,
                        "line": json.dumps(message),
                    }
                )
            )
    return gzip.compress(("\n".join(out) + "\n").encode(), mtime=0)


def _event(
    ts: float,
    reason: str,
    kind: str,
    name: str,
    message: str,
    *,
    type_: str = "Normal",
    source: str = "kubelet",
) -> dict[str, Any]:
    return {
        "ts": ts,
        "type": type_,
        "reason": reason,
        "object_kind": kind,
        "object_name": name,
        "message": message,
        "count": 1,
        "source": source,
    }


def _events(
    incident: PlannedIncident,
    phase: str,
    window: tuple[float, float],
    spec: RawSpec,
    chaos: dict[str, Any],
) -> list[dict[str, Any]]:
    name, kind = chaos["metadata"]["name"], chaos["kind"]
    pod = _pod(incident.service)
    events = [
        _event(
            window[0] + 1,
            "Scheduled",
            "Pod",
            _pod("frontend"),
            "assigned",
            source="default-scheduler",
        )
    ]
    if phase == "during":
        if spec.injection == "failed":
            events.append(
                _event(
                    window[0] + 2,
                    "Failed",
                    kind,
                    name,
                    "apply failed: pod not found",
                    type_="Warning",
                    source="chaos-controller-manager",
                )
            )
        else:
            events.append(
                _event(
                    window[0] + 2,
                    "Applied",
                    kind,
                    name,
                    "successfully applied",
                    source="chaos-controller-manager",
                )
            )
        if spec.effect:
            events.append(
                _event(
                    window[0] + 10,
                    "BackOff",
                    "Pod",
                    pod,
                    "Back-off restarting failed container",
                    type_="Warning",
                )
            )
        if spec.leak == "events":
            events.append(
                _event(
                    window[0] + 11,
                    "Killing",
                    "Pod",
                    pod,
                    f"Stopping container server (chaos {name})",
                )
            )
    events.extend(e for e in spec.extra_events if window[0] <= e["ts"] <= window[1])
    return events


def _metrics(
    incident: PlannedIncident, phase: str, window: tuple[float, float], spec: RawSpec
) -> pa.Table:
    rows: dict[str, list[Any]] = {"ts": [], "query": [], "labels": [], "value": []}
    t = window[0]
    while t <= window[1] + 1e-9:
        hole = spec.metric_gap and phase == "during" and window[0] + 10 < t < window[1] - 10
        for service in LOG_SERVICES:
            labels = {"container": "server", "namespace": "default", "pod": _pod(service)}
            if spec.leak == "metrics":
                labels["chaos"] = "r2act"
            cpu = 0.05 + 0.001 * (int(t) % 3)
            if spec.effect and phase == "during" and service == incident.service:
                cpu = 0.9
            for query, value in (("cpu_usage", cpu), ("memory_working_set", 5e7)):
                if hole and query == "cpu_usage":
                    continue
                rows["ts"].append(t)
                rows["query"].append(query)
                rows["labels"].append(json.dumps(labels, sort_keys=True))
                rows["value"].append(value)
        t += STEP
    schema = pa.schema(
        [
            ("ts", pa.float64()),
            ("query", pa.string()),
            ("labels", pa.string()),
            ("value", pa.float64()),
        ]
    )
    return pa.table(rows, schema=schema)


def _state(
    incident: PlannedIncident, phase: str, window: tuple[float, float], spec: RawSpec
) -> dict[str, Any]:
    broken = phase == "during" and spec.effect
    unhealthy_post = phase == "post" and not spec.recovered
    pods, deployments = [], []
    for service in LOG_SERVICES:
        hit = service == incident.service and (broken or unhealthy_post)
        pods.append(
            {
                "name": _pod(service),
                "app": service,
                "phase": "Running",
                "ready": not hit,
                "created_at": T0 - 3600,
                "containers": [
                    {
                        "name": "server",
                        "ready": not hit,
                        "restart_count": 2 if hit else 0,
                        "state": "waiting" if hit else "running",
                        "reason": "CrashLoopBackOff" if hit else None,
                        "image": f"example/{service}:v1",
                        "memory_limit": "128Mi",
                    }
                ],
            }
        )
        deployments.append(
            {
                "name": service,
                "replicas": 1,
                "ready_replicas": 0 if hit else 1,
                "available_replicas": 0 if hit else 1,
                "revision": 1,
                "memory_limits": {"server": "128Mi"},
            }
        )
    return {"ts": window[1], "namespace": "default", "deployments": deployments, "pods": pods}


def _status(
    phase: str, spec: RawSpec, chaos: dict[str, Any], incident: PlannedIncident
) -> dict[str, Any]:
    base = {"kind": chaos["kind"], "name": chaos["metadata"]["name"]}
    if phase != "during":
        return {**base, "exists": False}
    record_id = f"default/{_pod(incident.service)}"
    if spec.injection == "failed":
        event = {
            "type": "Failed",
            "operation": "Apply",
            "message": "pod not found",
            "timestamp": "2026-05-28T00:00:00Z",
        }
        return {
            **base,
            "conditions": {"Selected": True, "AllInjected": False},
            "desired_phase": "Run",
            "records": [{"id": record_id, "phase": "Not Injected", "events": [event]}],
        }
    if spec.injection == "unconfirmed":
        return {
            **base,
            "conditions": {"Selected": True, "AllInjected": False},
            "desired_phase": "Run",
            "records": [{"id": record_id, "phase": "Not Injected"}],
        }
    event = {"type": "Succeeded", "operation": "Apply", "timestamp": "2026-05-28T00:00:00Z"}
    return {
        **base,
        "conditions": {"Selected": True, "AllInjected": True},
        "desired_phase": "Run",
        "records": [{"id": record_id, "phase": "Injected", "injected_count": 1, "events": [event]}],
    }


def write_raw_incident(
    run_dir: Path, incident: PlannedIncident, spec: RawSpec | None = None
) -> Path:
    """Write one raw incident under ``run_dir/raw/<id>/`` and return its directory."""
    spec = spec or RawSpec()
    if spec.pilot:
        incident = incident.model_copy(update={"pilot": True})
    chaos = render_chaos(incident, "default", _topology())
    root = run_dir / "raw" / incident.id
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    windows = _windows(incident)
    for phase in PHASES:
        if phase == spec.missing_phase:
            continue
        d = root / phase
        d.mkdir()
        w = windows[phase]
        (d / "logs.jsonl.gz").write_bytes(
            _logs(incident, phase, w, spec, chaos["metadata"]["name"])
        )
        events = _events(incident, phase, w, spec, chaos)
        (d / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
        pq.write_table(
            _metrics(incident, phase, w, spec), d / "metrics.parquet", compression="zstd"
        )
        (d / "state.json").write_text(json.dumps(_state(incident, phase, w, spec)))
        (d / "chaos_status.json").write_text(json.dumps(_status(phase, spec, chaos, incident)))
    injected = windows["during"][0]
    removed = windows["during"][1]
    document = {
        "incident": incident.model_dump(mode="json"),
        "chaos": chaos,
        "tool_version": "0.1.0",
        "manifest_sha256": "0" * 64,
        "target": {"kind": "sim", "fingerprint": "sim:default:3", "namespace": "default"},
        "campaign": incident.campaign,
        "load": {"users": 10, "spawn_rate": 1.0},
        "timestamps": {
            "pre_start": windows["pre"][0],
            "injected_at": injected,
            "effect_confirmed_at": injected + 2 if spec.injection == "ok" else None,
            "removed_at": removed,
            "recovered_at": removed + 3 if spec.recovered else None,
            "post_end": windows["post"][1],
        },
        "windows": {p: list(w) for p, w in windows.items() if p != spec.missing_phase},
    }
    (root / "incident.json").write_text(json.dumps(document, indent=2))
    (root / "chaos.yaml").write_text(yaml.safe_dump(chaos, sort_keys=False))
    (root / "journal.jsonl").write_text(json.dumps({"step": "pre", "status": "ok"}) + "\n")
    if spec.complete:
        (root / "COMPLETE").write_text('{"completed_at": 0, "log_records": 0}\n')
    return root


def _topology() -> Any:
    from r2act.systems import ONLINE_BOUTIQUE

    return ONLINE_BOUTIQUE
