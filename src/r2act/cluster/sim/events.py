"""Kubernetes events of a window: the recorded ones plus those the pod dynamics imply.

Discrete events (scheduling, rollouts, chaos-object events) are stored when they happen;
kubelet events of faulty pods (Unhealthy, Killing, BackOff, OOMKilling, restarts) are
derived from the pod timelines, so they are the same whenever the window is read.
"""

from __future__ import annotations

from r2act.cluster.sim.state import SimState
from r2act.cluster.sim.timeline import PodTimeline
from r2act.schema import KubeEvent, TimeWindow


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
    state: SimState, timelines: dict[str, PodTimeline], window: TimeWindow
) -> list[KubeEvent]:
    """Events last seen in ``start <= ts <= end``, repeats merged, oldest first."""
    start, end = window
    out = [e for e in state.events if start <= e.ts <= end]
    for line in timelines.values():
        for ts, kind, reason, message in line.events:
            if start <= ts <= end:
                out.append(
                    KubeEvent(
                        ts=ts,
                        type="Warning" if kind == "Warning" else "Normal",
                        reason=reason,
                        object_kind="Pod",
                        object_name=line.pod.name,
                        message=message,
                        source="kernel-monitor" if reason == "OOMKilling" else "kubelet",
                    )
                )
    out.extend(_expiries(state, start, end))
    return aggregate(out)


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
        source = "chaos-controller-manager"
        out.append(
            KubeEvent(
                ts=expiry,
                type="Normal",
                reason="TimeUp",
                object_kind=rec.kind,
                object_name=rec.name,
                message="Time up according to the duration",
                source=source,
            )
        )
        if rec.injection_failed:
            continue
        out.extend(
            KubeEvent(
                ts=expiry + 0.5,
                type="Normal",
                reason="Recovered",
                object_kind=rec.kind,
                object_name=rec.name,
                message=f"Successfully recover chaos for {rec.namespace}/{pod}",
                source=source,
            )
            for pod in rec.pods
        )
    return out
