"""Creating and deleting chaos objects: the records, the controller's events, the finalizer.

Kept apart from the port so that ``cluster`` reads as the protocol and this module as the
Chaos Mesh controller: selection once at creation, ``FinalizerInited`` / ``Started`` /
``Applied`` (or ``Failed``) events, and on deletion ``Recovered`` per record, then
``Deleted``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from r2act.cluster.base import INCIDENT_LABEL
from r2act.cluster.sim.chaos import (
    CONTAINER_LEVEL,
    Fault,
    apply_error,
    duration_s,
    parse_chaos,
    select_pods,
)
from r2act.cluster.sim.events import CHAOS_SOURCE, event
from r2act.cluster.sim.state import ChaosRec, SimState
from r2act.cluster.sim.texts import T
from r2act.errors import ConflictError, PermanentClusterError
from r2act.schema import Topology
from r2act.systems import system_of

SOURCE = CHAOS_SOURCE
"""Stored under the controller-manager; ``events`` renders each with its controller's
source and the ``Updated`` events that follow it."""
FINALIZERS = DESIRED_PHASE = SOURCE
APPLY_DELAY_S = 1.0
"""Seconds between creation and the daemon applying the records."""
RETRIES_S = (0.0, 1.0, 3.0, 7.0, 15.0, 31.0, 63.0, 127.0, 255.0)
"""When a failing apply is tried again (the controller's exponential requeue, inferred)."""


def incident_of(chaos: Mapping[str, Any]) -> str | None:
    """The incident id an object carries (annotation, else label)."""
    metadata = chaos.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    labels = metadata.get("labels") or {}
    found = annotations.get("r2act.io/incident-id") or labels.get(INCIDENT_LABEL)
    return None if found is None else str(found)


def create(state: SimState, topology: Topology, chaos: Mapping[str, Any]) -> tuple[ChaosRec, Fault]:
    """Validate ``chaos``, select its pods now and append its record (no glitches yet)."""
    kind, name, fault = parse_chaos(chaos, system_of(topology).workload_label)
    metadata = chaos.get("metadata") or {}
    namespace = str(metadata.get("namespace") or state.namespace)
    if namespace != state.namespace:
        raise PermanentClusterError(f"chaos object {name!r} is for namespace {namespace!r}")
    if state.live_chaos(kind, name) is not None:
        raise ConflictError(f"{kind} {name!r} already exists in namespace {namespace}")
    spec = dict(chaos.get("spec") or {})
    now = state.now
    rec = ChaosRec(
        kind=kind,
        name=name,
        namespace=namespace,
        labels={str(k): str(v) for k, v in (metadata.get("labels") or {}).items()},
        annotations={str(k): str(v) for k, v in (metadata.get("annotations") or {}).items()},
        spec=spec,
        created_at=now,
        applied_at=now + APPLY_DELAY_S,
        duration_s=duration_s(str(spec["duration"]), name) if spec.get("duration") else None,
        pods=select_pods(spec, fault.apps, state.pods_of_apps(fault.apps, now)),
        containers=_containers(topology, kind, spec, fault.apps),
        heal_s=0.0,
    )
    state.chaos.append(rec)
    return rec, fault


def _containers(
    topology: Topology, kind: str, spec: Mapping[str, Any], apps: tuple[str, ...]
) -> list[str]:
    """containerNames, or the first container as Chaos Mesh defaults for container kinds."""
    names = spec.get("containerNames")
    if isinstance(names, list) and names:
        return [str(c) for c in names]
    if kind in CONTAINER_LEVEL and apps and apps[0] in topology.names:
        return [topology.deployment(apps[0]).main.name]
    return []


def creation_events(
    state: SimState, rec: ChaosRec, no_shell: Mapping[str, str], label: str
) -> None:
    """What the controller reports after creating ``rec`` (glitch decisions taken;
    ``no_shell``: the system's shell-less deployments, where DNSChaos fails to apply;
    ``label``: the system's workload label)."""
    about = (rec.kind, rec.name)
    event(
        state,
        rec.created_at + 0.05,
        "FinalizerInited",
        about,
        "Finalizer has been inited",
        source=FINALIZERS,
    )
    if not rec.pods:
        event(
            state,
            rec.created_at + 0.1,
            "Failed",
            about,
            "Failed to select targets: no target has been selected",
            source=SOURCE,
            warning=True,
        )
        return
    event(
        state,
        rec.created_at + 0.2,
        "Started",
        about,
        "Experiment has started",
        source=DESIRED_PHASE,
    )
    for pod in rec.pods:
        if rec.injection_failed:
            # The records controller requeues a failed apply (needRetry) and fails again:
            # the recorder folds the repeats into one event with a count.
            retries = RETRIES_S if rec.kind == "DNSChaos" else (0.0,)
            last = rec.created_at + (rec.duration_s or max(RETRIES_S))
            for delay in retries:
                if rec.applied_at + delay > last:
                    break
                event(
                    state,
                    rec.applied_at + delay,
                    "Failed",
                    about,
                    T("cm.failed")("apply chaos", apply_error(rec, pod, no_shell, label)),
                    source=SOURCE,
                    warning=True,
                )
        else:
            event(
                state,
                rec.applied_at,
                "Applied",
                about,
                T("cm.applied")(f"{rec.namespace}/{pod}"),
                source=SOURCE,
            )


def delete(state: SimState, rec: ChaosRec, removed_by: str) -> None:
    """Delete ``rec`` now: records recover (unless never applied or expired), then it goes."""
    now = state.now
    rec.deleted_at, rec.removed_by = now, removed_by
    about = (rec.kind, rec.name)
    if not rec.injection_failed and not rec.expired(now):
        for pod in rec.pods:
            event(
                state,
                now + 0.5,
                "Recovered",
                about,
                T("cm.recovered")(f"{rec.namespace}/{pod}"),
                source=SOURCE,
            )
    event(state, now + 0.8, "Deleted", about, "Experiment has been deleted", source=SOURCE)
