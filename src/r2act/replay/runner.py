"""Replaying one prediction on a live cluster: the validity gate and the health window.

Order matters for safety: the plan is parsed and checked against the incident's action space
and replay's own safety envelope before anything touches the cluster, and once the fault is
injected a ``finally`` undoes the plan's side effects and then removes the fault, whatever
happens in between. Each step is written to the run's ledger first, so a SIGKILL leaves a
list that ``r2act cleanup`` reverts. On the simulator each prediction starts from the same
baseline state, so verdicts never depend on what was replayed before.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Literal, TypeVar

from r2act.actions import is_valid
from r2act.campaigns import render_chaos
from r2act.cluster.base import INCIDENT_LABEL, RUN_LABEL, Cluster, Rewindable
from r2act.collector.guard import CleanupGuard
from r2act.collector.ledger import Ledger, stamp
from r2act.errors import ClusterError, ConflictError, ForeignObjectError, NotFoundError
from r2act.replay.envelope import envelope_problem
from r2act.replay.outcomes import ClusterCall, HealthProbe, ReplayOutcome
from r2act.schema import (
    BenchmarkRecord,
    ChaosRef,
    HealthReport,
    PhaseDurations,
    PlanEffect,
    PlannedIncident,
    Prediction,
    RecoveryPlan,
)
from r2act.systems import SYSTEMS

T = TypeVar("T")

NO_EFFECT_REASON = (
    "the re-injected fault was in place but the system stayed healthy, so no plan can be "
    "judged by recovery; the plan was not applied"
)


@dataclass(frozen=True)
class ReplaySettings:
    """How long and how often replay looks at the system."""

    window_s: float = 75.0
    """Longest time a plan gets to restore health."""
    probe_interval_s: float = 5.0
    """Seconds between health probes."""
    consecutive: int = 3
    """Healthy probes in a row that count as recovered."""
    confirm_timeout_s: float = 60.0
    """Longest wait for the re-injected fault to make the system unhealthy."""
    baseline_timeout_s: float = 180.0
    """Longest wait for a healthy system before and after each prediction."""


def planned_incident(record: BenchmarkRecord, settings: ReplaySettings) -> PlannedIncident:
    """The incident a record came from, enough to render its chaos object again.

    The fault must outlast confirmation plus the whole health window: a Chaos Mesh object
    stops injecting when its duration runs out, and a fault that expires by itself would
    make any plan (``no_action`` included) look like a recovery.
    """
    meta = record.metadata
    needed = int(settings.confirm_timeout_s + settings.window_s + settings.baseline_timeout_s)
    fault = record.fault.model_copy(update={"duration_s": max(record.fault.duration_s, needed)})
    return PlannedIncident(
        id=record.incident_id,
        campaign=meta.campaign,
        system=meta.system,
        service=record.fault.service,
        fault=fault,
        repetition=meta.repetition,
        phases=PhaseDurations(),
        seed=meta.seed,
    )


class _Calls:
    """Records every cluster call of one replay, successful or not."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.log: list[ClusterCall] = []
        self.probes: list[HealthProbe] = []

    def probe(self, phase: Literal["confirm", "window"]) -> HealthReport:
        """Probe health once and keep the probe as a point of the health series."""
        report = self.cluster.health()
        self.probes.append(
            HealthProbe(
                ts=report.ts,
                phase=phase,
                healthy=report.healthy,
                error_rate=report.error_rate,
                unavailable=list(report.unavailable),
            )
        )
        return report

    def note(self, name: str, ok: bool, detail: float | None = None) -> None:
        """Record a probing step (a series of read calls) and its verdict."""
        self.log.append(ClusterCall(ts=self.cluster.clock.now(), call=name, ok=ok, detail=detail))

    def run(self, name: str, action: Callable[[], T], detail: Callable[[T], object]) -> T:
        try:
            result = action()
        except ClusterError as error:
            self.log.append(
                ClusterCall(ts=self.cluster.clock.now(), call=name, ok=False, detail=str(error))
            )
            raise
        shown = detail(result)
        self.log.append(
            ClusterCall(
                ts=self.cluster.clock.now(),
                call=name,
                ok=True,
                detail=shown if isinstance(shown, (str, int, float, bool, dict, list)) else None,
            )
        )
        return result


def _ref_of(chaos: Mapping[str, object]) -> ChaosRef:
    meta = chaos["metadata"]
    assert isinstance(meta, Mapping)
    labels = meta.get("labels") or {}
    assert isinstance(labels, Mapping)
    run = labels.get(RUN_LABEL)
    return ChaosRef(
        kind=str(chaos["kind"]),
        name=str(meta["name"]),
        namespace=str(meta["namespace"]),
        incident_id=record_incident(labels),
        run_id=None if run is None else str(run),
    )


def record_incident(labels: Mapping[object, object]) -> str | None:
    """The incident label of a rendered object, if any."""
    found = labels.get(INCIDENT_LABEL)
    return None if found is None else str(found)


def wait_healthy(cluster: Cluster, timeout_s: float, interval_s: float) -> bool:
    """Probe until healthy or until the timeout; True when healthy."""
    deadline = cluster.clock.now() + timeout_s
    while True:
        if cluster.health().healthy:
            return True
        if cluster.clock.now() >= deadline:
            return False
        cluster.clock.sleep(interval_s)


def _confirm_effect(
    cluster: Cluster, injected: Callable[[], bool], settings: ReplaySettings, calls: _Calls
) -> Literal["effect", "healthy", "not_injected"]:
    """Wait for the re-injected fault to hurt: 'effect'; in place but harmless: 'healthy'.

    'not_injected' when the chaos status never confirmed the fault: that is a failure of
    the cluster, not a finding about the label, and must not be reported as one.
    """
    deadline = cluster.clock.now() + settings.confirm_timeout_s
    in_place = False
    while cluster.clock.now() <= deadline:
        if injected():
            in_place = True
            if not calls.probe("confirm").healthy:
                return "effect"
        cluster.clock.sleep(settings.probe_interval_s)
    return "healthy" if in_place else "not_injected"


def _health_window(cluster: Cluster, settings: ReplaySettings, calls: _Calls) -> float | None:
    """Seconds from now to the start of the first run of N healthy probes, or None."""
    start = cluster.clock.now()
    streak_start: float | None = None
    streak = 0
    while True:
        report = calls.probe("window")
        if report.healthy:
            streak_start = report.ts if streak == 0 else streak_start
            streak += 1
            if streak >= settings.consecutive and streak_start is not None:
                return max(0.0, streak_start - start)
        else:
            streak, streak_start = 0, None
        if cluster.clock.now() - start + settings.probe_interval_s > settings.window_s:
            return None
        cluster.clock.sleep(settings.probe_interval_s)


@dataclass(frozen=True)
class ReplayRequest:
    """What replay needs of one prediction: its plan (if it parsed) and who made it."""

    plan: RecoveryPlan | None
    """The typed plan, or None when absent, null or unparsable."""
    plan_problem: str = ""
    """Why there is no typed plan, when one was given but did not parse."""
    method: str | None = None
    """Method name from the prediction line."""

    @classmethod
    def of(cls, prediction: Prediction) -> ReplayRequest:
        """From a strictly parsed prediction line."""
        return cls(plan=prediction.plan, method=prediction.method)


def _refused(record: BenchmarkRecord, request: ReplayRequest, reason: str) -> ReplayOutcome:
    plan = request.plan
    return ReplayOutcome(
        incident_id=record.incident_id,
        fault_type=record.labels.fault_type.value,
        service=record.labels.service,
        method=request.method,
        status="refused",
        reason=reason,
        plan=None if plan is None else plan.model_dump(mode="json"),
        offline_valid=is_valid(plan, record),
    )


def _restore(
    cluster: Cluster,
    calls: _Calls,
    ref: ChaosRef,
    effect: PlanEffect | None,
    *,
    guard: CleanupGuard | None,
    ledger: Ledger | None,
    incident: str,
    created: bool,
) -> list[str]:
    """Undo the plan's side effects, then remove the fault; the errors, if any.

    ``created`` is False when the inject was refused because the name is taken: that object
    is another's, and nothing is removed (the run label would refuse it too)."""
    errors: list[str] = []
    if effect is not None:
        undone = effect
        try:
            calls.run("undo", lambda: cluster.undo(undone), lambda _: len(undone.changes))
        except ClusterError as exc:
            errors.append(f"undo failed: {exc}")
        else:
            if ledger is not None:
                ledger.undone(incident)
    elif ledger is not None:
        ledger.undone(incident)  # no plan was sent
    if not created or (guard is not None and not guard.is_armed(ref)):
        return errors  # never created by this run (name conflict): nothing to remove
    try:
        calls.run("remove", lambda: cluster.remove(ref), lambda _: ref.name)
        gone = True
    except NotFoundError:
        gone = True  # the injection failed before the object existed
    except ForeignObjectError:
        gone = True  # ours is not there; a same-named object of another owner stays
    except ClusterError as exc:
        gone = False  # stays armed: the guard retries when the run ends
        errors.append(f"remove failed: {exc}")
    if gone and guard is not None:
        guard.disarm(ref)
    return errors


def new_run_id() -> str:
    """A run label for a replay that names none (the form the ledger's run ids take)."""
    return uuid.uuid4().hex[:12]


def replay_one(
    cluster: Cluster,
    record: BenchmarkRecord,
    request: ReplayRequest,
    settings: ReplaySettings,
    guard: CleanupGuard | None = None,
    *,
    ledger: Ledger | None = None,
    run_id: str | None = None,
) -> ReplayOutcome:
    """Gate, inject, apply, watch, restore; return the verdict for one prediction.

    With a ``guard``, the injected object is armed before it is sent and the restore runs
    shielded from a second Ctrl-C, so an interrupted replay leaves nothing behind. With a
    ``ledger``, the plan and its effect are written down before and after they are applied.

    The fault always carries a run label, and only an object with that label is ever
    removed: ``run_id`` when given, else the ledger's, else a fresh one for this call. So a
    same-named fault of another run (or of a user) is never deleted, whichever way the API
    is called.
    """
    plan = request.plan
    if plan is None:
        reason = request.plan_problem or "no plan: nothing to execute"
        return _refused(record, request, reason)
    if not record.action_space.contains(plan):
        return _refused(record, request, "outside the incident's action space; not executed")
    if (outside := envelope_problem(plan, record)) is not None:
        return _refused(record, request, f"outside replay's safety envelope: {outside}")
    offline_valid = is_valid(plan, record)
    base = _refused(record, request, "")
    if isinstance(cluster, Rewindable):
        cluster.rewind_to("replay", "baseline")
    calls = _Calls(cluster)
    healthy = wait_healthy(cluster, settings.baseline_timeout_s, settings.probe_interval_s)
    calls.note("preflight_healthy", healthy)
    if not healthy:
        return base.model_copy(
            update={"status": "error", "reason": "unhealthy before injection", "calls": calls.log}
        )
    topology = SYSTEMS[record.metadata.system]
    chaos = render_chaos(planned_incident(record, settings), cluster.namespace, topology)
    chaos = stamp(chaos, run_id or (ledger.run_id if ledger is not None else "") or new_run_id())
    incident = record.incident_id
    effect: PlanEffect | None = None
    confirmed = False
    ttr: float | None = None
    error = ""
    no_effect = False
    ref = _ref_of(chaos)
    created = True  # until the API says the name is taken: a failed send may have created it
    if guard is not None:
        guard.arm(ref)
    try:
        try:
            ref = calls.run("inject", lambda: cluster.inject(chaos), lambda r: r.name)
        except ConflictError:
            created = False  # the name is another's object: never remove it
            if guard is not None:
                guard.disarm(ref)
            raise
        seen = _confirm_effect(
            cluster,
            lambda: cluster.chaos_status(ref).injected(cluster.pod_names()),
            settings,
            calls,
        )
        confirmed = seen == "effect"
        calls.note("confirm_effect", confirmed)
        if seen == "not_injected":
            error = (
                f"the fault was never injected (its chaos status did not confirm it within "
                f"{settings.confirm_timeout_s:g} s); the plan was not applied"
            )
        elif confirmed:
            # What undoing needs is read and written down before the plan goes out: if its
            # answer never comes (an error, a kill), the target can still be put back.
            before = cluster.preimage(plan)
            if ledger is not None:
                ledger.plan(incident, plan.model_dump(mode="json"), before)
            effect = before  # until apply_plan answers, undo restores what was read
            effect = calls.run(
                "apply_plan",
                lambda: cluster.apply_plan(plan),
                lambda e: [c.model_dump(mode="json") for c in e.changes],
            )
            if ledger is not None:
                ledger.effect(incident, effect)
            ttr = _health_window(cluster, settings, calls)
            calls.note("health_window", ttr is not None, ttr)
        else:
            no_effect = True
    except ClusterError as exc:
        error = f"cluster error: {exc}"
    finally:
        with guard.shielded() if guard is not None else nullcontext():
            # Undo the plan first, then remove the fault (the contract's order); each step
            # runs even when the one before it failed: a fault that could not be removed
            # must not leave the plan's replicas or limits behind as well.
            cleanup_errors = _restore(
                cluster,
                calls,
                ref,
                effect,
                guard=guard,
                ledger=ledger,
                incident=incident,
                created=created,
            )
            if not cleanup_errors:
                calls.note(
                    "baseline_healthy",
                    wait_healthy(cluster, settings.baseline_timeout_s, settings.probe_interval_s),
                )
            error = "; ".join(filter(None, [error, *cleanup_errors]))
        if guard is not None:
            guard.raise_if_interrupted()
    recovered = ttr is not None
    return base.model_copy(
        update={
            "status": "error" if error else "no_effect" if no_effect else "executed",
            "reason": error or (NO_EFFECT_REASON if no_effect else ""),
            "offline_valid": offline_valid,
            "effect_confirmed": confirmed,
            "recovered": recovered,
            "time_to_recover_s": ttr,
            "gated_recovered": offline_valid and recovered,
            "calls": calls.log,
            "health": calls.probes,
        }
    )
