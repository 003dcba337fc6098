"""A whole campaign: plan, validate the target, resume, run the incidents, summarise.

Incidents are collected in rounds (``collector.rounds``): every quota repetition first,
then only the spares that cells still short of clean incidents need. On the simulator each
incident runs on a fresh system (``collector.fresh``), so its observations do not depend on
the schedule: one run, lanes and shards collect the same bytes.

Order matters for safety: the plan and the resume scan only read; the target is validated
(``connect`` runs the adapter's safety check) and the run directory checked for
writability before anything is written; leftovers refuse the campaign before the first
incident directory exists. A failed incident is counted and the campaign goes on; a signal
stops it after the fault is removed, and the summary says what remains.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from r2act import __version__
from r2act.campaigns import (
    Manifest,
    SimTarget,
    load_manifest,
    manifest_sha256,
    plan_incidents,
    render_chaos,
)
from r2act.campaigns.quotas import SpareCount, is_spare
from r2act.cluster.base import Cluster
from r2act.collector import layout, resume
from r2act.collector import ledger as ledger_module
from r2act.collector.cleanup import describe_target, notices
from r2act.collector.context import (
    CollectionObserver,
    CollectSettings,
    IncidentResult,
    NullObserver,
    Provenance,
)
from r2act.collector.fresh import IncidentCluster, positions_of
from r2act.collector.gc_passes import fewer_gc_passes
from r2act.collector.guard import CleanupGuard, Interrupted
from r2act.collector.lifecycle import Collector, IncidentRun, leftovers_message
from r2act.collector.retrying import call_with_retry
from r2act.collector.rounds import VERDICTS, Rounds, VerdictCache, judged
from r2act.errors import DataError, SafetyError
from r2act.schema import PlannedIncident
from r2act.systems import SYSTEMS

DEFAULT_RUNS = Path("r2act-runs")


@dataclass(frozen=True)
class PlannedChaos:
    """One incident and the Chaos Mesh object that injects it."""

    incident: PlannedIncident
    chaos: dict[str, Any]


@dataclass(frozen=True)
class CollectionPlan:
    """Everything a collection needs from the manifest, computed without a cluster."""

    manifest_path: Path
    manifest: Manifest
    manifest_sha256: str
    items: list[PlannedChaos]
    lane: Mapping[str, Any] | None = None
    """The lane collecting it (``collector.lanes``), recorded in every ``incident.json``."""
    stop_full_cells: bool = True
    """Collect a spare only while its cell is short (``collector.rounds``); False collects
    every item (``--only``, ``--all-spares``)."""
    judge: bool = False
    """Judge each incident as it completes (the plan has spares whose need depends on it)."""
    positions: Mapping[str, int] | None = None
    """Incident id -> place in the campaign's whole plan (``collector.fresh``), which fixes
    a simulated incident's start time; None computes it from the manifest."""


@dataclass
class CampaignSummary:
    """What a ``collect`` run did."""

    campaign: str
    run_dir: Path
    planned: int
    """Incidents selected, spares included."""
    skipped: int = 0
    """Already complete before this run."""
    remaining: int = 0
    """Incidents a rerun would collect first: failed ones, spares still needed."""
    spares: SpareCount | None = None
    """What the stopping rule did with the spares (None: the selection plans none)."""
    judge_cpu_s: float = 0.0
    """CPU seconds spent judging incidents (``quality_gate.verdict``)."""
    results: list[IncidentResult] = field(default_factory=list)
    moved_aside: list[Path] = field(default_factory=list)
    interrupted_by: int | None = None
    """Signal number that stopped the run, if any."""
    notices: list[str] = field(default_factory=list)
    """What the adapter did that the user must hear (a removal without the opt-in)."""
    wall_s: float = 0.0

    @property
    def completed(self) -> int:
        """Incidents completed by this run."""
        return sum(r.status == "completed" for r in self.results)

    @property
    def failed(self) -> int:
        """Incidents that failed in this run."""
        return sum(r.status == "failed" for r in self.results)

    @property
    def log_records(self) -> int:
        """Log records written by this run."""
        return sum(r.log_records for r in self.results)

    @property
    def generation_s(self) -> float:
        """Real seconds spent inside cluster reads."""
        return sum(r.generation_s for r in self.results)

    @property
    def generation_cpu_s(self) -> float:
        """CPU seconds spent inside cluster reads."""
        return sum(r.generation_cpu_s for r in self.results)

    def finish(self, rounds: Rounds) -> None:
        """Fill in what the rounds say is left, and what happened to the spares."""
        self.remaining = rounds.remaining()
        self.spares = rounds.spares() if rounds.stop and rounds.has_spares else None
        self.judge_cpu_s = rounds.judge_cpu_s + sum(r.judge_cpu_s for r in self.results)


def plan_collection(manifest_path: Path, only: Sequence[str] = ()) -> CollectionPlan:
    """Load, plan and render; ``only`` restricts to the given ids (unknown ids are an error)."""
    manifest = load_manifest(manifest_path)
    incidents = plan_incidents(manifest)
    positions = positions_of(incidents)  # before --only
    judge = any(is_spare(i) for i in incidents) and not only
    if only:
        known = {i.id for i in incidents}
        if unknown := [i for i in only if i not in known]:
            raise DataError(
                f"--only {unknown[0]}: no such incident in {manifest_path} "
                f"(list them with `r2act campaign plan {manifest_path}`)"
            )
        wanted = set(only)
        incidents = [i for i in incidents if i.id in wanted]
    topology = SYSTEMS[manifest.system]
    items = [PlannedChaos(i, render_chaos(i, manifest.namespace, topology)) for i in incidents]
    return CollectionPlan(
        manifest_path,
        manifest,
        manifest_sha256(manifest_path),
        items,
        stop_full_cells=not only,  # ids asked for by name are collected whatever their cell
        judge=judge,
        positions=positions,
    )


def default_run_dir(manifest: Manifest) -> Path:
    """``./r2act-runs/<campaign name>``."""
    return DEFAULT_RUNS / manifest.name


def settings_for(manifest: Manifest) -> CollectSettings:
    """Lifecycle settings from the manifest's metrics, health and phase sections."""
    return CollectSettings(
        metric_queries=dict(manifest.metrics.queries),
        metric_step_s=manifest.metrics.step_s,
        health_interval_s=manifest.health.interval_s,
        health_consecutive=manifest.health.consecutive,
        preflight_timeout_s=max(600.0, 2.0 * manifest.phases.recovery_timeout_s),
        trace_sample=manifest.traces.sample if manifest.traces is not None else None,
    )


def open_target(manifest: Manifest, run_dir: Path, *, reverting: bool = False) -> Cluster:
    """Connect to the campaign's target; a Kubernetes target passes the safety check here.

    Imported lazily: planning and dry runs must not pay for loading the adapters.
    ``reverting`` (cleanup) accepts a namespace whose opt-in was withdrawn.
    """
    from r2act.cluster.connect import connect

    return connect(
        manifest.target,
        namespace=manifest.namespace,
        workspace=run_dir,
        metric_queries=manifest.metrics.queries,
        users=manifest.load.users,
        error_rate_threshold=manifest.health.error_rate_threshold,
        reverting=reverting,
        noise=manifest.noise,
        topology=manifest.topology,
        traces=manifest.traces,
    )


def cleanup_command(plan_path: Path, run_dir: Path, manifest: Manifest) -> str:
    """The command a user types to sweep this campaign's target."""
    out = "" if run_dir == default_run_dir(manifest) else f" --out {run_dir}"
    return f"r2act cleanup {plan_path}{out}"


def collect(
    plan: CollectionPlan,
    run_dir: Path,
    *,
    resume_run: bool = True,
    force: bool = False,
    settings: CollectSettings | None = None,
    observer: CollectionObserver | None = None,
    cluster_factory: Callable[[Manifest, Path], Cluster] = open_target,
) -> CampaignSummary:
    """Collect every planned incident not yet complete into ``run_dir/raw``."""
    observer = observer or NullObserver()
    wall = time.perf_counter()
    raw = layout.raw_dir(run_dir)
    found = resume.scan(raw)
    ids = [item.incident.id for item in plan.items]
    if not resume_run:
        resume.refuse_unless_forced(run_dir, found, force)
    done = set() if not resume_run else found.complete & set(ids)
    rounds = plan_rounds(plan, raw, done)
    first = rounds.next()
    summary = CampaignSummary(plan.manifest.name, run_dir, len(ids), skipped=len(done))
    observer.campaign_started(len(first), len(done))
    if first:
        ledger_module.check_out_dir(run_dir)
        resume.check_writable(run_dir)
        cleanup = cleanup_command(plan.manifest_path, run_dir, plan.manifest)
        with ledger_module.run_lock(run_dir, "collect"), fewer_gc_passes():
            ledger_module.refuse_if_pending(run_dir, cleanup)
            run_id = ledger_module.run_id(run_dir, "collect")
            _collect_locked(
                plan,
                run_dir,
                rounds=rounds,
                first=first,
                found=found,
                summary=summary,
                run_id=run_id,
                resume_run=resume_run,
                settings=settings,
                observer=observer,
                cluster_factory=cluster_factory,
            )
    summary.finish(rounds)
    summary.wall_s = time.perf_counter() - wall
    return summary


def plan_rounds(plan: CollectionPlan, raw: Path, done: Collection[str]) -> Rounds:
    """The rounds of ``plan`` given the incidents already complete in ``raw``; the verdicts
    they reach are kept beside the run's ledger (``RUN/.r2act``) for a resume."""
    run_dir = raw.parent
    cache = (
        VerdictCache(ledger_module.state_dir(run_dir) / VERDICTS) if plan.stop_full_cells else None
    )
    selection = [item.incident for item in plan.items]
    return Rounds(selection, raw, done, stop=plan.stop_full_cells, cache=cache)


def _collect_locked(
    plan: CollectionPlan,
    run_dir: Path,
    *,
    rounds: Rounds,
    first: list[str],
    found: resume.RunScan,
    summary: CampaignSummary,
    run_id: str,
    resume_run: bool,
    settings: CollectSettings | None,
    observer: CollectionObserver,
    cluster_factory: Callable[[Manifest, Path], Cluster],
) -> None:
    raw = layout.raw_dir(run_dir)
    settings = settings or settings_for(plan.manifest)
    target = IncidentCluster(plan.manifest, run_dir, cluster_factory, settings, plan.positions)
    cluster = target.cluster
    provenance = _provenance(plan, run_dir, cluster)
    ledger = ledger_module.Ledger(
        run_dir, "collect", describe_target(plan.manifest.target, cluster, run_dir), run_id
    )
    items = {item.incident.id: item for item in plan.items}
    try:
        with CleanupGuard(
            target.remove, observer.message, on_arm=ledger.fault, on_disarm=ledger.fault_removed
        ) as guard:
            _refuse_leftovers(cluster, settings, provenance)
            # any selected incident may be (re)done by a later round: none may be in the way
            summary.moved_aside += resume.move_aside(raw, found.partial & items.keys())
            if not resume_run:
                summary.moved_aside += resume.move_aside(
                    raw, found.complete & items.keys(), layout.SUPERSEDED_DIR
                )
            for path in summary.moved_aside:
                observer.message(f"moved unfinished {path.name} aside to {path.parent}")
            collector = Collector(cluster, settings, provenance, guard, observer, run_id)
            batch = first
            while batch:
                for incident_id in batch:
                    item = items[incident_id]
                    if target.for_incident(incident_id):  # a fresh simulated system
                        # its first call, as in every run since lanes reset: the glitches
                        # are drawn by call number, so this keeps recorded lane runs' bytes
                        _refuse_leftovers(target.cluster, settings, provenance)
                        collector = replace(collector, cluster=target.cluster)
                    observer.incident_started(incident_id)
                    directory = raw / incident_id
                    run = IncidentRun(
                        collector, item.incident, item.chaos, directory, keep_logs=plan.judge
                    )
                    result = run.run()
                    if plan.judge:
                        result = judged(result, directory, run.written)
                    run.written.clear()  # one incident's lines, never a campaign's
                    rounds.record(result)
                    summary.results.append(result)
                    observer.incident_finished(result)
                    guard.raise_if_interrupted()
                if batch := rounds.next():
                    observer.round_started(len(batch))
    except Interrupted as signal_error:
        summary.interrupted_by = signal_error.signum
    finally:
        ledger.close()
        summary.notices += notices(target.cluster)


def _provenance(plan: CollectionPlan, run_dir: Path, cluster: Cluster) -> Provenance:
    manifest = plan.manifest
    return Provenance(
        tool_version=__version__,
        manifest_sha256=plan.manifest_sha256,
        campaign=manifest.name,
        cleanup_command=cleanup_command(plan.manifest_path, run_dir, manifest),
        load=manifest.load.model_dump(mode="json"),
        target_kind=manifest.target.kind,
        fingerprint=cluster.fingerprint,
        namespace=cluster.namespace,
        target_seed=manifest.target.seed if isinstance(manifest.target, SimTarget) else None,
        lane=plan.lane,
        noise=manifest.noise.value,
    )


def _refuse_leftovers(cluster: Cluster, settings: CollectSettings, provenance: Provenance) -> None:
    found = call_with_retry(
        cluster.leftovers,
        policy=settings.retry,
        sleep=settings.backoff_sleep or cluster.clock.sleep,
        on_retry=lambda _attempt, _error: None,
    )
    if found:
        raise SafetyError(leftovers_message(found, provenance))
