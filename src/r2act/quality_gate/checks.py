"""The audit's checks: small pure functions from incident evidence to Problems.

Each check looks at one property (the paper's admission rule, section III-B, plus the
signals that separate a broken harness from a real incident) and says nothing about the
others, so an incident's verdict lists every reason at once. A check that lacks its input
(a missing phase, an unreadable file) stays silent: the check that owns that input has
already reported it, and repeating it would only blur the reasons histogram.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from r2act.quality_gate.evidence import IncidentEvidence, PhaseEvidence, SeriesStats
from r2act.quality_gate.problems import Problem, error, warning
from r2act.quality_gate.rawstore import CHAOS_STATUS, EVENTS, LOGS, METRICS, STATE
from r2act.schema import PHASES, ChaosStatus

Check = Callable[[IncidentEvidence], list[Problem]]

GAP_STEPS = 3.0
"""A hole in a query's coverage longer than this many scrape steps is a metric gap."""
ERROR_RATE_FACTOR = 2.0
"""During-phase error lines per second must exceed this multiple of the baseline rate..."""
ERROR_RATE_FLOOR = 0.02
"""...plus this many lines per second, so a quiet baseline does not make noise an effect."""
LATENCY_FACTOR = 1.5
"""Mean logged request latency must exceed this multiple of the baseline mean..."""
LATENCY_FLOOR_MS = 20.0
"""...plus this many milliseconds."""
USER_FAILURE_FACTOR = 2.0
"""The load generator's failures per second must exceed this multiple of the baseline..."""
USER_FAILURE_FLOOR = 0.02
"""...plus this many per second (about 2 failed user requests in a 120 s window): users see
failures the baseline did not have. The least-used route of Online Boutique's locustfile
(about 0.26 requests/s from the campaigns' 27 users) failing outright clears it over tenfold."""
WARNING_FACTOR = 2.0
"""Warning events in the during window must exceed this multiple of what the pre window's
rate predicts for its length (a healthy cluster has its own: a probe answering late)..."""
WARNING_FLOOR = 2
"""...and by at least this many: one more warning than expected is no effect, while a
fault that fails a pod's probes or restarts it repeats its warnings."""
METRIC_SIGMAS = 4.0
"""A metric series deviates when its mean moves more than this many deviations (the
series' spread pooled over the pre and the during window, ``_pooled``)..."""
METRIC_RELATIVE = 0.25
"""...and more than this fraction of the baseline mean."""

_MISSING_CODES = {
    LOGS: "LOGS_MISSING",
    EVENTS: "EVENTS_MISSING",
    METRICS: "METRICS_MISSING",
    STATE: "STATE_MISSING",
    CHAOS_STATUS: "CHAOS_STATUS_MISSING",
}


def check_complete(ev: IncidentEvidence) -> list[Problem]:
    """The collector wrote COMPLETE; otherwise the incident stopped part-way."""
    if ev.complete:
        return []
    return [
        error(
            "INCOMPLETE",
            "no COMPLETE marker: collection stopped before the end",
            journal_failures=list(ev.journal_failures[:5]),
        )
    ]


def check_annotation(ev: IncidentEvidence) -> list[Problem]:
    """incident.json parses as the raw contract and agrees with its directory and chaos.yaml."""
    if ev.annotation is None:
        return [error("ANNOTATION_INVALID", f"incident.json: {ev.annotation_error}")]
    problems: list[Problem] = []
    if ev.chaos_yaml_error is not None:
        problems.append(error("ANNOTATION_INVALID", f"chaos.yaml: {ev.chaos_yaml_error}"))
    ann = ev.annotation
    if ann.incident.id != ev.incident_id:
        problems.append(
            error(
                "ANNOTATION_INVALID",
                f"incident.json names {ann.incident.id!r}, not its directory {ev.incident_id!r}",
            )
        )
    missing = [p for p in PHASES if p not in ann.windows and ev.phases[p].present]
    bounds = [ann.windows[p] for p in PHASES if p in ann.windows]
    ordered = all(s <= e for s, e in bounds) and all(
        a[1] <= b[0] + 1e-6 for a, b in itertools.pairwise(bounds)
    )
    if missing or not ordered:
        problems.append(
            error(
                "ANNOTATION_INVALID",
                "phase windows missing or out of order",
                missing=missing,
                windows={p: list(w) for p, w in ann.windows.items()},
            )
        )
    meta = ann.chaos.get("metadata")
    noted = (
        meta.get("annotations", {}).get("r2act.io/incident-id") if isinstance(meta, dict) else None
    )
    if noted is not None and noted != ev.incident_id:
        problems.append(error("ANNOTATION_INVALID", f"chaos object is annotated for {noted!r}"))
    return problems


def check_phases(ev: IncidentEvidence) -> list[Problem]:
    """All three phases exist, with every file, each readable."""
    problems: list[Problem] = []
    for phase in PHASES:
        evidence = ev.phases[phase]
        if not evidence.present:
            problems.append(error("PHASE_MISSING", f"no {phase}/ directory", where=phase))
            continue
        for name in evidence.missing:
            problems.append(error(_MISSING_CODES[name], f"{phase}/{name} is missing", where=phase))
        for name, why in sorted(evidence.unreadable.items()):
            problems.append(
                error("FILE_UNREADABLE", f"{phase}/{name} cannot be read: {why}", where=phase)
            )
    return problems


def check_logs(ev: IncidentEvidence) -> list[Problem]:
    """Every phase has at least one log record."""
    return [
        error("LOGS_EMPTY", f"{phase}/ logs have no records", where=phase)
        for phase, p in ev.phases.items()
        if p.logs is not None and p.logs.records == 0
    ]


def check_metrics(ev: IncidentEvidence) -> list[Problem]:
    """Every phase has metric samples, and no query's coverage has a large hole.

    The yardstick is the scrape step: the smallest per-phase estimate of the incident, since
    a gap that hits every query at once inflates the estimate of the phase it is in.
    """
    problems: list[Problem] = []
    steps = [p.metrics.step_s for p in ev.phases.values() if p.metrics and p.metrics.step_s > 0]
    step = min(steps, default=0.0)
    for phase, p in ev.phases.items():
        if p.metrics is None:
            continue
        if p.metrics.samples == 0:
            problems.append(
                error("METRICS_MISSING", f"{phase}/metrics.parquet has no samples", where=phase)
            )
            continue
        if step <= 0 or not p.metrics.holes:
            continue
        query, hole = max(p.metrics.holes.items(), key=lambda kv: (kv[1], kv[0]))
        if hole > GAP_STEPS * step:
            problems.append(
                warning(
                    "METRIC_GAPS",
                    f"query {query!r} has no samples for {hole:.0f} s (step {step:.0f} s)",
                    where=phase,
                    query=query,
                    gap_s=round(hole, 3),
                    step_s=round(step, 3),
                )
            )
    return problems


def _confirmed(status: ChaosStatus) -> bool:
    """Injected now, or (after the object's duration ran out) every record was applied."""
    if status.injected():
        return True
    applied = all(
        r.injected_count > 0
        or any(e.type == "Succeeded" and e.operation == "Apply" for e in r.events)
        for r in status.records
    )
    return bool(status.conditions.get("Selected")) and bool(status.records) and applied


def check_injection(ev: IncidentEvidence) -> list[Problem]:
    """The fault was applied: a timestamp, a confirming status, and no Failed apply."""
    if ev.annotation is None:
        return []
    problems: list[Problem] = []
    failures = [m for p in ev.phases.values() if p.events for m in p.events.chaos_failures]
    during = ev.phases["during"].chaos
    if ev.annotation.timestamps.injected_at is None:
        problems.append(error("NEVER_INJECTED", "incident.json has no injected_at"))
    if failures or (during is not None and during.failed()):
        problems.append(
            error(
                "INJECTION_FAILED",
                "Chaos Mesh reported a failed apply or selected nothing",
                chaos_events=failures[:3],
                conditions=dict(during.conditions) if during else {},
            )
        )
    elif during is not None and not _confirmed(during):
        problems.append(
            warning(
                "INJECTION_UNCONFIRMED",
                "the during-phase chaos status does not show every target injected",
                conditions=dict(during.conditions),
                records=[r.phase for r in during.records],
            )
        )
    return problems


def _pooled(before: SeriesStats, now: SeriesStats) -> float:
    """The series' spread over both windows (root mean square of the two deviations).

    The baseline's deviation alone is not enough on a noisy cluster: a sparse counter
    (throttled periods, a few per minute) can be zero throughout a short pre window and
    then count a few by chance; its during-window spread shows that such a shift is noise.
    A real effect moves the mean far beyond either window's spread (a stressed pod
    throttles nearly every period, steadily)."""
    return math.sqrt((before.std**2 + now.std**2) / 2)


def effect_signals(pre: PhaseEvidence, during: PhaseEvidence) -> list[str]:
    """Which observable signals deviate in ``during`` from the ``pre`` baseline."""
    signals: list[str] = []
    if pre.logs and during.logs:
        base = pre.logs.error_lines / pre.duration
        now = during.logs.error_lines / during.duration
        if during.logs.error_lines >= 5 and now > ERROR_RATE_FACTOR * base + ERROR_RATE_FLOOR:
            signals.append("error_lines")
        base_ms, now_ms = pre.logs.latency_ms, during.logs.latency_ms
        if (
            base_ms is not None
            and now_ms is not None
            and now_ms > LATENCY_FACTOR * base_ms + LATENCY_FLOOR_MS
        ):
            signals.append("latency")
        base_fps, now_fps = pre.logs.user_failures_per_s, during.logs.user_failures_per_s
        if now_fps is not None and now_fps > USER_FAILURE_FACTOR * (base_fps or 0.0) + (
            USER_FAILURE_FLOOR
        ):
            signals.append("user_failures")
    if pre.state and during.state:
        if during.state.restarts > pre.state.restarts:
            signals.append("restarts")
        if len(during.state.not_ready) + len(during.state.unavailable) > len(
            pre.state.not_ready
        ) + len(pre.state.unavailable):
            signals.append("readiness")
    if pre.events and during.events:
        expected = pre.events.visible_warnings / pre.duration * during.duration
        warnings = during.events.visible_warnings
        if warnings > WARNING_FACTOR * expected and warnings - expected >= WARNING_FLOOR:
            signals.append("warning_events")
    if pre.metrics and during.metrics:
        for key, now_stats in during.metrics.series.items():
            base_stats = pre.metrics.series.get(key)
            if base_stats is None or base_stats.count < 2 or now_stats.count < 2:
                continue
            shift = abs(now_stats.mean - base_stats.mean)
            if shift > METRIC_SIGMAS * _pooled(
                base_stats, now_stats
            ) and shift > METRIC_RELATIVE * max(abs(base_stats.mean), 1e-9):
                signals.append(f"metric:{key[0]}")
    return list(dict.fromkeys(signals))


def check_effect(ev: IncidentEvidence) -> list[Problem]:
    """At least one signal (errors, latency, users' failures, restarts, readiness, events,
    a metric) deviates."""
    pre, during = ev.phases["pre"], ev.phases["during"]
    if not (pre.present and during.present) or pre.logs is None or during.logs is None:
        return []
    if effect_signals(pre, during):
        return []
    return [
        warning(
            "NO_OBSERVABLE_EFFECT",
            "no signal in the during window deviates from the pre baseline",
            where="during",
            error_lines={"pre": pre.logs.error_lines, "during": during.logs.error_lines},
        )
    ]


def check_recovery(ev: IncidentEvidence) -> list[Problem]:
    """Recovery was observed within the timeout and the post window is healthy."""
    if ev.annotation is None:
        return []
    stamps = ev.annotation.timestamps
    timeout = ev.annotation.incident.phases.recovery_timeout_s
    reasons: list[str] = []
    if stamps.recovered_at is None:
        reasons.append("no recovered_at")
    elif stamps.removed_at is not None and stamps.recovered_at - stamps.removed_at > timeout:
        reasons.append(f"recovered {stamps.recovered_at - stamps.removed_at:.0f} s after removal")
    post = ev.phases["post"]
    if post.state is not None and (post.state.not_ready or post.state.unavailable):
        reasons.append(
            "post state unhealthy: " + ", ".join([*post.state.not_ready, *post.state.unavailable])
        )
    if post.chaos is not None and not post.chaos.recovered():
        reasons.append("chaos object still active in post")
    if not reasons:
        return []
    return [
        warning(
            "RECOVERY_NOT_VERIFIED",
            "; ".join(reasons),
            where="post",
            timeout_s=timeout,
        )
    ]


def check_baseline(ev: IncidentEvidence) -> list[Problem]:
    """The pre window shows a healthy system with no chaos object in force."""
    pre = ev.phases["pre"]
    reasons: list[str] = []
    if pre.state is not None and (pre.state.not_ready or pre.state.unavailable):
        reasons.append(
            "not ready: " + ", ".join(sorted({*pre.state.not_ready, *pre.state.unavailable}))
        )
    if pre.chaos is not None and pre.chaos.exists and pre.chaos.injected():
        reasons.append("a chaos object was already injected")
    if not reasons:
        return []
    return [warning("UNHEALTHY_BASELINE", "; ".join(reasons), where="pre")]


def check_leaks(ev: IncidentEvidence) -> list[Problem]:
    """No method-visible observation names the fault, the chaos object or the harness."""
    problems: list[Problem] = []
    for phase, p in ev.phases.items():
        for modality, summary in (
            ("logs", p.logs),
            ("events", p.events),
            ("metrics", p.metrics),
            ("state", p.state),
        ):
            if summary is not None and summary.leaks:
                problems.append(
                    error(
                        "GROUND_TRUTH_LEAK",
                        f"{summary.leaks} {modality} item(s) reveal the fault",
                        where=phase,
                        modality=modality,
                        example=summary.leak_example,
                    )
                )
    return problems


CHECKS: tuple[Check, ...] = (
    check_complete,
    check_annotation,
    check_phases,
    check_logs,
    check_metrics,
    check_injection,
    check_effect,
    check_recovery,
    check_baseline,
    check_leaks,
)
"""Every evidence check, in reporting order (record building is checked in ``records``)."""


def run_checks(ev: IncidentEvidence) -> list[Problem]:
    """All problems of one incident, errors first, each check's order kept."""
    problems = [p for check in CHECKS for p in check(ev)]
    return sorted(problems, key=lambda p: p.severity != "error")
