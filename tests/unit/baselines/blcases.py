"""Hand-built incidents (one ``Case`` each) with exactly the symptoms a test needs."""

from __future__ import annotations

import json

import pandas as pd

from r2act.actions import system_action_space
from r2act.baselines import Case
from r2act.schema import ClusterState, ContainerState, PodState
from r2act.systems import ONLINE_BOUTIQUE as OB

PRE, DURING = (0.0, 60.0), (60.0, 120.0)


def go_error(message: str, error: str) -> str:
    """A Go service's logrus error line."""
    return json.dumps({"error": error, "message": message, "severity": "error"}, sort_keys=True)


def access(method: str, path: str, status: int, took_ms: int = 40, error: str = "") -> list[str]:
    """The frontend's lines for one request (an error line first when ``error``)."""
    base = {"http.req.method": method, "http.req.path": path}
    lines = []
    if error:
        lines.append(json.dumps({**base, "error": error, "message": "request error"}))
    done = {**base, "http.resp.status": status, "http.resp.took_ms": took_ms}
    lines.append(json.dumps({**done, "message": "request complete", "severity": "debug"}))
    return lines


def locust_row(method: str, name: str, rps: float, fps: float) -> str:
    """A Locust 2.43 stats row (``StatsEntry.to_string``, stats.py L562-579)."""
    kind = f"{method} " if method else ""
    counts = f"{100:>7d} {'0(0.00%)':>12}"
    times = f"|{41:>7d} {12:>7d} {160:>7d}{41:>7d} |"
    return f"{kind:<8} {name:<76} {counts} {times} {rps:>7.2f} {fps:>11.2f}"


def logs(rows: dict[str, dict[str, list[str]]]) -> pd.DataFrame:
    """phase -> service -> lines, spread evenly over the phase's window."""
    out = []
    for phase, by_service in rows.items():
        start, end = PRE if phase == "pre" else DURING
        for service, lines in by_service.items():
            for i, line in enumerate(lines):
                ts = start + (end - start) * i / max(1, len(lines))
                out.append((phase, ts, f"{service}-abcdef1234-x1y2z", service, line))
            out.append((phase, end, f"{service}-abcdef1234-x1y2z", service, "ok"))
        out.append((phase, start, "loadgenerator-1-2", "loadgenerator", "ok"))
    return pd.DataFrame(out, columns=["phase", "ts", "pod", "service", "line"])


def events(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    """(phase, reason, object name, message) -> the events table."""
    return pd.DataFrame(
        [
            (phase, 70.0, "Warning", reason, "Pod", name, message, 1)
            for phase, reason, name, message in rows
        ],
        columns=["phase", "ts", "type", "reason", "object_kind", "object_name", "message", "count"],
    )


def metrics(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    """(phase, query, pod, value) -> the metrics table: the value held for the whole phase,
    scraped every 10 s (a symptom that persists, as a fault's does)."""
    out = []
    for phase, query, pod, value in rows:
        start, end = PRE if phase == "pre" else DURING
        labels = json.dumps({"container": "server", "pod": pod}, sort_keys=True)
        steps = int((end - start) // 10) + 1
        out += [(phase, start + 10 * i, query, labels, value) for i in range(steps)]
    return pd.DataFrame(out, columns=["phase", "ts", "query", "labels", "value"])


def state(ts: float, pods: dict[str, tuple[int, str | None, str]]) -> ClusterState:
    """pod -> (restarts, last terminated reason, image)."""
    return ClusterState(
        ts=ts,
        namespace="default",
        deployments=[],
        pods=[
            PodState(
                name=name,
                app=name.rsplit("-", 2)[0],
                phase="Running",
                ready=True,
                created_at=0.0,
                containers=[
                    ContainerState(
                        name="server",
                        ready=True,
                        restart_count=restarts,
                        state="running",
                        last_terminated_reason=reason,
                        image=image,
                    )
                ],
            )
            for name, (restarts, reason, image) in pods.items()
        ],
    )


def case(
    log_rows: pd.DataFrame,
    event_rows: pd.DataFrame | None = None,
    metric_rows: pd.DataFrame | None = None,
    states: dict[str, ClusterState] | None = None,
) -> Case:
    """One incident on Online Boutique with the given observations."""
    full = metric_rows is not None or bool(states)
    return Case(
        case_id="case-0123456789ab",
        view="full" if full else "logs+events" if event_rows is not None else "logs",
        action_space=system_action_space(OB),
        topology=OB,
        logs=log_rows,
        events=event_rows,
        metrics=metric_rows,
        states=states or {},
    )
