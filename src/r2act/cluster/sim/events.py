"""Kubernetes events of a window: the recorded ones plus those the pod dynamics imply.

Discrete events (scheduling, rollouts, chaos-object events) are stored when they happen;
kubelet events of faulty pods (Unhealthy, Killing, BackOff, restarts) are derived from the
pod timelines, so they are the same whenever the window is read. Either way their texts,
sources and companions are rendered here as the recording component prints them
(``kubetexts``): kubelet messages with their real details, the replicaset-controller's
SuccessfulCreate/SuccessfulDelete beside each pod the deployment controller's rollouts
make, and Chaos Mesh's per-controller sources with the ``Updated`` events each controller
records after writing the object.
"""

from __future__ import annotations

from r2act.cluster.sim.background import probe_failures
from r2act.cluster.sim.identity import PodFacts
from r2act.cluster.sim.kubetexts import AFTER, SOURCES, kubelet_message, record_id, updated
from r2act.cluster.sim.state import ChaosRec, SimState
from r2act.cluster.sim.texts import T
from r2act.cluster.sim.timeline import PodTimeline
from r2act.schema import KubeEvent, NoiseLevel, TimeWindow, Topology

CHAOS_SOURCE = "chaos-controller-manager"
"""The source the mechanics (``lifecycle``) record chaos events under; rendered per controller."""


def event(
    state: SimState,
    ts: float,
    reason: str,
    about: tuple[str, str],
    message: str,
    *,
    warning: bool = False,
    source: str = "kubelet",
) -> None:
    """Record a discrete Kubernetes event about ``about`` = (kind, name)."""
    state.events.append(
        KubeEvent(
            ts=ts,
            type="Warning" if warning else "Normal",
            reason=reason,
            object_kind=about[0],
            object_name=about[1],
            message=message,
            source=source,
        )
    )


def window_events(
    state: SimState,
    timelines: dict[str, PodTimeline],
    window: TimeWindow,
    background: tuple[Topology, NoiseLevel] | None = None,
) -> list[KubeEvent]:
    """Events last seen in ``start <= ts <= end``, repeats merged, oldest first; with
    ``background`` (the topology and the noise level), also the probes a runtime pause
    times out (``background.probe_failures``)."""
    start, end = window
    chaos = {rec.name: rec for rec in state.chaos}
    facts = {line.pod.name: line.facts for line in timelines.values()}
    out: list[KubeEvent] = []
    for e in state.events:
        if start <= e.ts <= end:
            out.extend(_render(e, chaos, facts, state.namespace))
    for line in timelines.values():
        pod = line.pod.name
        implied = line.events
        if background is not None:
            paused = probe_failures(background[0], line, (start, end), state.seed, background[1])
            implied = [*implied, *((ts, "Warning", "Unhealthy", text) for ts, text in paused)]
        for ts, kind, reason, message in implied:
            if not start <= ts <= end:
                continue
            text = kubelet_message(
                reason, message, pod=pod, facts=line.facts, namespace=state.namespace
            )
            if text is None:
                continue
            out.append(
                KubeEvent(
                    ts=ts,
                    type="Warning" if kind == "Warning" else "Normal",
                    reason=reason,
                    object_kind="Pod",
                    object_name=pod,
                    message=text,
                    source="kubelet",
                )
            )
    out.extend(_expiries(state, start, end))
    return aggregate(_once(out))


def _render(
    e: KubeEvent, chaos: dict[str, ChaosRec], facts: dict[str, PodFacts], namespace: str
) -> list[KubeEvent]:
    """A stored event as its recorder prints it, with the events recorded beside it
    (``facts``: per pod, its deployment's)."""
    if e.source == CHAOS_SOURCE:
        return _chaos(e, chaos.get(e.object_name))
    out: list[KubeEvent] = []
    if e.object_kind == "Pod" and e.source == "kubelet" and e.object_name in facts:
        text = kubelet_message(
            e.reason, e.message, pod=e.object_name, facts=facts[e.object_name], namespace=namespace
        )
        if text is None:
            return []
        e = e.model_copy(update={"message": text})
        if e.reason == "Killing" and e.message.startswith("Stopping container"):
            out.append(_replicaset(e, "SuccessfulDelete", T("k8s.rs_delete")(e.object_name)))
    if e.reason == "Scheduled" and e.object_kind == "Pod":
        out.append(_replicaset(e, "SuccessfulCreate", T("k8s.rs_create")(e.object_name), -0.01))
    out.append(e)
    return out


def _replicaset(e: KubeEvent, reason: str, message: str, dt: float = 0.0) -> KubeEvent:
    """The replicaset-controller's event about the pod ``e`` is about (its owner)."""
    return KubeEvent(
        ts=e.ts + dt,
        type="Normal",
        reason=reason,
        object_kind="ReplicaSet",
        object_name=e.object_name.rsplit("-", 1)[0],
        message=message,
        source="replicaset-controller",
    )


def _chaos(e: KubeEvent, rec: ChaosRec | None) -> list[KubeEvent]:
    """A chaos-controller event from the controller that records it, plus its Updated."""
    message = e.message
    if rec is not None and e.reason in ("Applied", "Recovered"):
        pod = message.rsplit("/", 1)[-1]
        ident = record_id(rec.kind, rec.namespace, pod, rec.containers)
        key = "cm.applied" if e.reason == "Applied" else "cm.recovered"
        message = T(key)(ident)
    source = SOURCES.get(e.reason, "records")
    out = [e.model_copy(update={"message": message, "source": source})]
    field = AFTER.get(e.reason)
    if e.reason in ("Applied", "Recovered"):
        field = "records"
    if field is not None:
        reason, text, src = updated(field)
        out.append(_like(e, e.ts + 0.01, reason, text, src))
    if e.reason == "Deleted":
        removed = T("cm.finalizer_removed")()
        # recorder.FinalizerRemoved reports the reason "FinalizerInited" (finalizer.go L41)
        out.append(_like(e, e.ts + 0.05, "FinalizerInited", removed, "finalizers"))
        reason, text, src = updated("finalizer")
        out.append(_like(e, e.ts + 0.06, reason, text, src))
    return out


def _like(e: KubeEvent, ts: float, reason: str, message: str, source: str) -> KubeEvent:
    return KubeEvent(
        ts=ts,
        type="Normal",
        reason=reason,
        object_kind=e.object_kind,
        object_name=e.object_name,
        message=message,
        source=source,
    )


def _once(events: list[KubeEvent]) -> list[KubeEvent]:
    """One ``Updated records`` per reconcile: the records controller writes the object once
    after applying (or recovering) every record, not once per record."""
    seen: set[tuple[str, str, int]] = set()
    out: list[KubeEvent] = []
    for e in events:
        if e.reason == "Updated" and e.source == "records":
            key = (e.object_kind, e.object_name, round(e.ts * 10))
            if key in seen:
                continue
            seen.add(key)
        out.append(e)
    return out


def aggregate(events: list[KubeEvent]) -> list[KubeEvent]:
    """Merge repeats the way the event recorder does: one event, ``count``, last time seen."""
    merged: dict[tuple[str, ...], KubeEvent] = {}
    for e in sorted(events, key=lambda e: e.ts):
        key = (e.type, e.reason, e.object_kind, e.object_name, e.message, e.source)
        seen = merged.get(key)
        merged[key] = e if seen is None else e.model_copy(update={"count": seen.count + e.count})
    return sorted(merged.values(), key=lambda e: (e.ts, e.object_name, e.reason))


def _expiries(state: SimState, start: float, end: float) -> list[KubeEvent]:
    """TimeUp and Recovered events of chaos objects whose duration ran out in the window."""
    out: list[KubeEvent] = []
    for rec in state.chaos:
        if rec.duration_s is None:
            continue
        expiry = rec.created_at + rec.duration_s
        if not start <= expiry <= end or (rec.deleted_at is not None and rec.deleted_at <= expiry):
            continue
        timeup = KubeEvent(
            ts=expiry,
            type="Normal",
            reason="TimeUp",
            object_kind=rec.kind,
            object_name=rec.name,
            message=T("cm.timeup")(),
            source=CHAOS_SOURCE,
        )
        out.extend(_chaos(timeup, rec))
        if rec.injection_failed:
            continue
        for pod in rec.pods:
            recovered = KubeEvent(
                ts=expiry + 0.5,
                type="Normal",
                reason="Recovered",
                object_kind=rec.kind,
                object_name=rec.name,
                message=T("cm.recovered")(f"{rec.namespace}/{pod}"),
                source=CHAOS_SOURCE,
            )
            out.extend(_chaos(recovered, rec))
    return out
