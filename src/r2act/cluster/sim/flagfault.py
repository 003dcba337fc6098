"""FlagFault on the simulated cluster: a flipped flag in the flag service, read by its reader.

The same object the Kubernetes adapter handles (``cluster/kube/flag_fault.py``, path
``configmap+restart``): inject checks the object (``flag_fault_object.parse``) against the
system's flags and flag store, marks the flag-serving Deployment with the annotation
``r2act.io/flag-fault`` (name, run, incident, flag and its original variant) and rolls it;
remove (or a plan ``rollback_config`` whose scope is the flag) restores the original variant,
drops the annotation and rolls the Deployment again. The flag lives in the flag service, not
in its reader's pod, so the effect acts on *every* pod of the reader, those created by a
restart included, from the moment the new flag-service pod is ready until the one that
serves the original variant is.

What a flag does is read generically from ``System.flags`` (``systems.flags.FlagEffect``);
this module never names a flag or a service. Each effect maps onto a mechanism the engine
already has (``effect_fault``), so its signal shows where the engine shows every failure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from r2act.cluster.flag_fault_object import parse, rejected
from r2act.cluster.sim import bookkept
from r2act.cluster.sim.chaos import Fault, rfc3339
from r2act.cluster.sim.plans import _next, rollout
from r2act.cluster.sim.state import ChaosRec, SimState
from r2act.cluster.sim.traffic import Call, route_calls, route_rates
from r2act.errors import ConflictError, NotFoundError, PermanentClusterError
from r2act.schema import ChaosRecord, ChaosRef, ChaosStatus, Topology
from r2act.schema.faults import FLAG_FAULT_ANNOTATION, FLAG_FAULT_KIND
from r2act.systems import system_of
from r2act.systems.flags import FeatureFlag, FlagEffect, FlagValue, flag_error_kind

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
CPU_BURN_CORES = 4.0
"""Cores a CPU-burn flag keeps busy. Assumption: a flag's busy loop runs a fixed pool of
threads with no CPU limit to cap them; four is the thread count the shipped CPU-burn flag
starts (its verdict in the system's flags), and no flag profile states another."""
GC_PAUSE_CORES = 1.0
"""Cores forced full collections keep busy in the reader. Assumption: a stop-the-world
collection per call is single-threaded work on the call path, about one core while calls
keep coming; nobody publishes a figure for it."""
LEAK_UNIT_BYTES = 2000.0
"""Bytes a memory-leak flag keeps per call of its operation per unit of the variant's value.
Assumption: the leaked object is a message about 2 kB large multiplied by the variant (the
shipped leak pads a ~1.9 kB mail to the variant's multiple)."""
LEAK_USERS = 10
"""Users the leak's call rate is computed for (the load generator's shipped default)."""


@dataclass(frozen=True)
class Acting:
    """One flag fault acting on one reader during [start, stop)."""

    app: str
    fault: Fault
    rec: ChaosRec
    start: float
    stop: float


def _flag_of(topology: Topology, name: str, flag: str, variant: str) -> FeatureFlag:
    flags = system_of(topology).flags
    found = flags.get(flag)
    if found is None:
        known = ", ".join(flags) or "none"
        raise rejected(name, f"system {topology.system} has no flag {flag!r} (has: {known})")
    if variant not in {v.name for v in found.variants}:
        offered = ", ".join(v.name for v in found.variants)
        raise rejected(name, f"flag {flag!r} has no variant {variant!r} (has: {offered})")
    return found


def bookkeeping(state: SimState, deployment: str) -> dict[str, Any] | None:
    """The parsed ``r2act.io/flag-fault`` annotation of a deployment, if any."""
    return bookkept.bookkeeping(state, deployment, FLAG_FAULT_ANNOTATION)


def _restart(state: SimState, topology: Topology, deployment: str) -> str:
    """Roll the flag-serving Deployment as ``kubectl rollout restart`` does; the stamp set."""
    dep = state.deployments[deployment]
    stamp = rfc3339(state.now)
    annotations = {**dep.template.annotations, RESTARTED_AT: stamp}
    rollout(
        state,
        topology,
        deployment,
        _next(dep.template, state, deployment, annotations=annotations),
        state.now,
    )
    return stamp


def inject(state: SimState, topology: Topology, obj: Mapping[str, Any]) -> ChaosRec:
    """Flip the flag in the flag store and restart the flag service (its new pod reads it)."""
    spec = parse(obj)
    change = spec.change
    metadata = obj.get("metadata") or {}
    namespace = str(metadata.get("namespace") or state.namespace)
    if namespace != state.namespace:
        raise PermanentClusterError(f"FlagFault {spec.name!r} is for namespace {namespace!r}")
    store = system_of(topology).flag_store
    if store is None:
        raise rejected(spec.name, f"system {topology.system} has no flag service")
    where = (change.config_map, change.key, change.deployment)
    if where != (store.config_map, store.key, store.deployment):
        raise rejected(
            spec.name,
            f"names ConfigMap {change.config_map}/{change.key} and Deployment "
            f"{change.deployment}; the flag store is {store.config_map}/{store.key} read by "
            f"{store.deployment}",
        )
    flag = _flag_of(topology, spec.name, change.flag, change.variant)
    dep = state.deployments.get(change.deployment)
    if dep is None:
        raise NotFoundError(f"deployment {change.deployment!r} not found in namespace {namespace}")
    if FLAG_FAULT_ANNOTATION in dep.annotations or state.live_chaos(FLAG_FAULT_KIND, spec.name):
        raise ConflictError(
            f"deployment {change.deployment} already carries a FlagFault "
            f"({FLAG_FAULT_ANNOTATION}); r2act never overwrites one"
        )
    labels = {str(k): str(v) for k, v in (metadata.get("labels") or {}).items()}
    annotations = {str(k): str(v) for k, v in (metadata.get("annotations") or {}).items()}
    now = state.now
    stamp = _restart(state, topology, change.deployment)
    dep.annotations[FLAG_FAULT_ANNOTATION] = json.dumps(
        {
            "name": spec.name,
            "incidentId": spec.incident_id,
            "runId": spec.run_id,
            "configMap": change.config_map,
            "flags": {change.flag: flag.off},
            "restartedAt": stamp,
        },
        sort_keys=True,
    )
    rec = ChaosRec(
        kind=FLAG_FAULT_KIND,
        name=spec.name,
        namespace=namespace,
        labels=labels,
        annotations=annotations,
        spec=dict(obj.get("spec") or {}),
        created_at=now,
        applied_at=now,
        pods=[],
        containers=[],
        heal_s=0.0,
    )
    state.chaos.append(rec)
    return rec


def remove(state: SimState, topology: Topology, rec: ChaosRec, by: str = "api") -> None:
    """Restore the original variant and roll the flag service (only if the mark names it)."""
    rec.deleted_at, rec.removed_by = state.now, rec.removed_by or by
    deployment = str(rec.spec.get("deployment"))
    book = bookkeeping(state, deployment)
    if book is None or book.get("name") != rec.name:
        return
    del state.deployments[deployment].annotations[FLAG_FAULT_ANNOTATION]
    _restart(state, topology, deployment)


def revert_flag(state: SimState, topology: Topology, target: str, flag: str, by: str) -> bool:
    """Revert the live FlagFault on ``flag`` when ``target`` is the flag's fault service or
    one of its readers (a plan ``rollback_config(target, flag)``); True when one was."""
    known = system_of(topology).flags.get(flag)
    if known is None or target not in (known.service, *known.readers):
        return False
    for rec in state.chaos:
        if rec.kind == FLAG_FAULT_KIND and rec.deleted_at is None and rec.spec.get("flag") == flag:
            remove(state, topology, rec, by)
            return True
    return False


def status(state: SimState, rec: ChaosRec) -> ChaosStatus:
    """Exists while the annotation names it; a flag-service pod is Injected once it was created
    from the template the injection restarted (it read the faulted file)."""
    deployment = str(rec.spec.get("deployment"))
    book = bookkeeping(state, deployment)
    if rec.deleted_at is not None or book is None or book.get("name") != rec.name:
        return ChaosStatus(kind=rec.kind, name=rec.name, exists=False)
    now = state.now
    records = [
        ChaosRecord(
            id=f"{rec.namespace}/{pod.name}",
            phase="Injected" if pod.created_at >= rec.applied_at else "Not Injected",
            injected_count=int(pod.created_at >= rec.applied_at),
        )
        for pod in state.pods_of(deployment, now)
        if pod.deleted_at is None
    ]
    done = bool(records) and all(r.phase == "Injected" for r in records)
    return ChaosStatus(
        kind=rec.kind,
        name=rec.name,
        conditions={"Selected": bool(records), "AllInjected": done, "AllRecovered": False},
        desired_phase="Run",
        records=records,
    )


def leftovers(state: SimState) -> list[ChaosRef]:
    """FlagFaults found through the flag-serving Deployments' annotations."""
    return bookkept.leftovers(state, FLAG_FAULT_KIND, FLAG_FAULT_ANNOTATION)


def _served_from(state: SimState, deployment: str, since: float) -> float | None:
    """When the first flag-service pod created at or after ``since`` is ready (None: none is)."""
    ready = [p.ready_at for p in state.pods if p.app == deployment and p.created_at >= since]
    return min(ready) if ready else None


def acting(state: SimState, topology: Topology) -> list[Acting]:
    """Every flag fault's effect on its reader, with the stretch of time it acts."""
    found: list[Acting] = []
    flags = system_of(topology).flags
    for rec in state.chaos:
        if rec.kind != FLAG_FAULT_KIND:
            continue
        flag = flags.get(str(rec.spec.get("flag")))
        deployment = str(rec.spec.get("deployment"))
        start = _served_from(state, deployment, rec.applied_at)
        if flag is None or start is None:
            continue
        stop = float("inf")
        if rec.deleted_at is not None:
            stop = _served_from(state, deployment, rec.deleted_at) or rec.deleted_at
        value = next(v.value for v in flag.variants if v.name == rec.spec.get("variant"))
        fault = effect_fault(topology, flag, value)
        if fault is not None and start < stop:
            found.append(Acting(flag.service, fault, rec, start, stop))
    return found


def call_share(flag: FeatureFlag, value: FlagValue) -> float:
    """Share of the operation's calls a CALL_ERRORS flag fails: the variant's value when the
    flag is a probability (a number in [0, 1] and no fixed share), else the code's share,
    else every call."""
    if flag.share is not None:
        return flag.share if value else 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    return min(1.0, max(0.0, float(value)))


def _calls_of(calls: tuple[Call, ...], service: str, op: str) -> list[Call]:
    found: list[Call] = []
    for call in calls:
        if call.callee == service and call.op == op:
            found.append(call)
        found.extend(_calls_of(call.children, service, op))
    return found


def op_rate(topology: Topology, service: str, op: str, users: int = LEAK_USERS) -> float:
    """Calls per second of ``service``'s ``op`` under the shipped load (every route's tree)."""
    rates = route_rates(topology, users)
    total = 0.0
    for scope, rate in rates.items():
        total += rate * sum(c.count for c in _calls_of(route_calls(topology, scope), service, op))
    return total


def caught(topology: Topology, flag: FeatureFlag) -> bool:
    """The reader catches the failed calls itself: the flag is not user-visible, yet a user
    request's handler would fail on ``operation`` (a fatal call in some route)."""
    if flag.user_visible or flag.operation is None:
        return False
    for route in topology.routes:
        for call in _calls_of(route_calls(topology, route.scope), flag.service, flag.operation):
            if call.fatal:
                return True
    return False


def effect_fault(topology: Topology, flag: FeatureFlag, value: FlagValue) -> Fault | None:
    """The engine fault a flag's variant amounts to on its reader (None: no effect).

    - CALL_ERRORS: ``flag_errors``, a failure share on the reader's ``operation`` that the
      scene adds to the callee's own failure (so callers fail, log it and the load
      generator counts it as it does for any failing callee); the failure kind names the
      flag (``systems.flags.flag_error_kind``), so the system's renderers print the
      status the flag's declaration gives (``FeatureFlag.status``) where its callers print
      an error, not the text of a refused connection. When the reader catches the
      failure (``caught``) the caller sees success and the reader's own failed calls are
      logged as its call errors.
    - DIAL_FAILURE: ``flag_dial``, the reader's edge to ``callee`` fails as a dial to a
      name that does not resolve (the scene's ``dns_error`` edge kind).
    - CPU_BURN and GC_PAUSES: ``cpu``, the queueing model of a CPU stressor on the reader
      (``CPU_BURN_CORES``, ``GC_PAUSE_CORES``), since both burn the reader's CPU on its
      call path.
    - MEMORY_LEAK: ``memory_leak``, the reader's working set grows at the operation's call
      rate times ``LEAK_UNIT_BYTES`` times the variant until the limit kills it
      (``timeline``'s OOM restarts, again after every restart).
    - UNREADY, REQUEST_DELAY, LOAD_SURGE, QUEUE_FLOOD and NONE: no mechanism yet; none of the
      shipped realizable flags has them (they are marked unrealizable), so None.
    """
    apps = (flag.service,)
    on = bool(value) if isinstance(value, bool) else float(value) > 0
    if not on:
        return None
    if flag.effect is FlagEffect.CALL_ERRORS and flag.operation is not None:
        share = call_share(flag, value)
        kind = "flag_caught" if caught(topology, flag) else flag_error_kind(flag.key)
        return Fault("flag_errors", apps, flag_op=flag.operation, flag_share=share, flag_kind=kind)
    if flag.effect is FlagEffect.DIAL_FAILURE and flag.callee is not None:
        return Fault("flag_dial", apps, flag_callee=flag.callee, flag_kind="dns_error")
    if flag.effect is FlagEffect.CPU_BURN:
        return Fault("cpu", apps, cpu_cores=CPU_BURN_CORES)
    if flag.effect is FlagEffect.GC_PAUSES:
        return Fault("cpu", apps, cpu_cores=GC_PAUSE_CORES)
    if flag.effect is FlagEffect.MEMORY_LEAK and flag.operation is not None:
        rate = op_rate(topology, flag.service, flag.operation) * LEAK_UNIT_BYTES * float(value)
        return Fault("memory_leak", apps, leak_bytes_per_s=rate) if rate > 0 else None
    return None
