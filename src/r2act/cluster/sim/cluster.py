"""``SimulatedCluster``: the Cluster port over a seeded twin of a system (``r2act.systems``).

The object is a thin shell: state lives on disk (``state``), dynamics are derived from it
(``timeline``, ``scene``), telemetry is rendered from scenes (``logs``, ``metrics``), and
plans are carried out by ``plans``. Every mutating call saves the state, so a second
process (or a new instance after a crash) sees the same cluster, leftovers included.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from r2act.campaigns import GlitchRates
from r2act.cluster.base import (
    INCIDENT_LABEL,
    MANAGED_BY,
    MANAGED_BY_LABEL,
    RUN_LABEL,
    ChaosObject,
    Cluster,
    TraceSource,
    foreign_reason,
)
from r2act.cluster.sim import configfault, flagfault, loadgen
from r2act.cluster.sim.chaos import chaos_status
from r2act.cluster.sim.events import window_events
from r2act.cluster.sim.glitches import Glitches
from r2act.cluster.sim.identity import pod_facts
from r2act.cluster.sim.lifecycle import create, creation_events, delete, incident_of
from r2act.cluster.sim.logs import LogSource, piece_mid
from r2act.cluster.sim.metric_noise import background_for
from r2act.cluster.sim.metrics import MetricSource
from r2act.cluster.sim.plans import apply, preimage, undo
from r2act.cluster.sim.scene import Scene, build_scene
from r2act.cluster.sim.spans import SpanSource
from r2act.cluster.sim.state import (
    ChaosRec,
    Checkpoint,
    SimState,
    checkpoint_path,
    fresh_state,
    load_checkpoint,
    load_state,
    save_checkpoint,
    save_clock,
    save_state,
    state_path,
)
from r2act.cluster.sim.timeline import (
    PastReads,
    PodTimeline,
    build_timelines,
    change_points,
    collectable_from,
    fold_history,
    history_before,
)
from r2act.cluster.sim.tracebook import TraceBook
from r2act.cluster.sim.view import cluster_state, health_report
from r2act.errors import DataError, ForeignObjectError
from r2act.schema import (
    CONFIG_FAULT_KIND,
    FLAG_FAULT_KIND,
    Change,
    ChaosRef,
    ChaosStatus,
    ClusterState,
    HealthReport,
    KubeEvent,
    LogLine,
    MetricSeries,
    NoiseLevel,
    PlanEffect,
    PreflightReport,
    RecoveryPlan,
    RollbackConfig,
    TimeWindow,
    Topology,
    memory_bytes,
)
from r2act.schema.traces import Span
from r2act.systems import DEFAULT_SYSTEM, SYSTEMS, system_of

Reads = tuple[PastReads, ...]
"""What a stretch's scene reads of the history (``timeline.history_before``)."""
TELEMETRY_RETENTION_S = 6 * 3600.0
"""Logs and metrics older than this are gone (kubelet log rotation, a short TSDB)."""
REMOVE_WAIT_S = 1.0
"""Virtual seconds ``remove`` waits for the finalizer (records recover at once)."""


class SimClock:
    """The virtual clock: ``sleep`` advances simulated time at once and persists it."""

    def __init__(self, cluster: SimulatedCluster) -> None:
        self._cluster = cluster

    def now(self) -> float:
        """Simulated seconds since the epoch."""
        return self._cluster._state.now

    def sleep(self, seconds: float) -> None:
        """Advance simulated time by ``seconds`` (never backwards)."""
        self._cluster._advance(max(0.0, float(seconds)))


class SimulatedCluster:
    """A simulated system (``topology``'s; the saved one's, else the default) on Kubernetes with
    Chaos Mesh and Prometheus.

    ``seed`` and ``namespace`` shape a *new* cluster; an existing one (same workspace and
    name) keeps its own seed, like a real cluster outliving a changed manifest, and refuses
    another namespace. ``users``, ``volume``, ``noise`` (the background it shows besides a
    fault) and ``error_rate_threshold`` are per process. ``trace_sample`` is the rate the
    campaign's traces are kept at (None: no traces collected): the log lines that carry a
    trace context then name the kept spans (``tracebook``).
    """

    def __init__(
        self,
        workspace: Path,
        *,
        name: str = "default",
        seed: int = 0,
        namespace: str = "default",
        glitches: GlitchRates | None = None,
        users: int = 10,
        volume: float = 1.0,
        error_rate_threshold: float = 0.05,
        topology: Topology | None = None,
        noise: NoiseLevel = NoiseLevel.REALISTIC,
        trace_sample: float | None = None,
    ) -> None:
        self.path = state_path(workspace, name)
        loaded = load_state(self.path)
        if topology is None:  # the saved cluster's own system, else the default one
            topology = SYSTEMS[loaded.system if loaded is not None else DEFAULT_SYSTEM]
        self.topology = topology
        if loaded is not None and loaded.namespace != namespace:
            raise DataError(
                f"{self.path}: simulated cluster {name!r} runs namespace {loaded.namespace!r}, "
                f"not {namespace!r} (use another target name, or delete the directory)"
            )
        if loaded is None:
            loaded = fresh_state(topology, name=name, seed=seed, namespace=namespace)
            save_state(self.path, loaded)
        self._state: SimState = loaded
        self._facts = pod_facts(topology)
        self._no_shell = system_of(topology).no_shell
        self._label = system_of(topology).workload_label
        self.glitches = Glitches(glitches or GlitchRates(), loaded.seed, self._no_shell)
        self.users = users
        self.noise = noise
        self.error_rate_threshold = error_rate_threshold
        # Line rates follow from the users' requests and each handler's log calls; ``volume``
        # only thins or thickens them for a test's sake (1.0: as the load generates them).
        # With traces collected (``trace_sample``: the manifest's rate), the lines that carry
        # a trace context name the kept traces' spans (``tracebook``); without, their draws.
        self._book = TraceBook(topology, loaded.seed, users, trace_sample) if trace_sample else None
        traces = self._book.service if self._book is not None else None
        self._logs = LogSource(topology, loaded.seed, users, volume, traces)
        self._spans = SpanSource(topology, loaded.seed, users)
        self._metrics = MetricSource(topology, loaded.seed, loaded.namespace, background_for(noise))
        self._requests = {d.name: memory_bytes(d.main.memory_request) for d in topology.deployments}
        self._working_sets = {
            d.name: topology.working_set_bytes(d.name) for d in topology.deployments
        }
        self._timelines: dict[str, PodTimeline] | None = None
        self._cuts: list[float] = []
        self._scenes: dict[int, Scene] = {}
        self._read_scenes: dict[tuple[object, ...], Scene] = {}
        """Scenes by stretch end and what they read (``_stretch_scene``); kept across changes."""
        self._longer: dict[tuple[object, ...], list[tuple[float, Reads, Scene]]] = {}
        """The same scenes by stretch start: (end, what they read, scene)."""
        self._clock = SimClock(self)
        self._unsaved = False

    # --- bookkeeping -------------------------------------------------------------------

    def _changed(self) -> None:
        self._timelines = None
        self._scenes.clear()
        # What the users' requests met before now no longer changes: settle it before the
        # save prunes the history it came from (the load generator's counters read it).
        now = self._state.now
        self.timelines()
        loadgen.settle(self._state, now, self.scene_at, self._cuts, now - TELEMETRY_RETENTION_S)
        # Memory runs ahead of disk until the save completes; a save cut short (Ctrl-C, full
        # disk) is redone by the next call, so a cleanup never trusts a state it didn't write.
        self._unsaved = True
        save_state(self.path, self._state)
        self._unsaved = False

    def _advance(self, seconds: float) -> None:
        self._state.now += seconds
        save_clock(self.path, self._state)  # a tick rewrites the clock, not the history

    def _call(self, operation: str, incident: str | None = None) -> None:
        """Count the call and apply the configured API glitches to it."""
        if self._unsaved:
            self._changed()
        self._state.calls += 1
        self.glitches.check_call(operation, self._state.calls, incident)

    def timelines(self) -> dict[str, PodTimeline]:
        """Pod timelines of the current history (cached until the next change)."""
        if self._timelines is None:
            flags = [
                (a.app, a.fault, a.rec, a.start, a.stop)
                for a in flagfault.acting(self._state, self.topology)
            ]
            self._timelines = build_timelines(
                self._state,
                self._facts,
                self._requests,
                self._state.seed,
                self._working_sets,
                app_faults=flags,
                workload_label=self._label,
            )
            self._cuts = change_points(self._timelines)
        return self._timelines

    def scene_at(self, t: float) -> Scene:
        """The system's condition at ``t`` (cached per stretch between change points).

        Nothing a scene reads (pods existing and ready, faults acting) changes between two
        consecutive change points, so one scene serves the whole stretch; only ``t`` is set
        per instant, on a shallow copy."""
        timelines = self.timelines()
        stretch = bisect_right(self._cuts, t)
        scene = self._scenes.get(stretch)
        if scene is None:
            if len(self._scenes) > 512:
                self._scenes.clear()
            scene = self._stretch_scene(stretch, timelines, t)
            self._scenes[stretch] = scene
        return scene if scene.t == t else scene.at(t)

    def _stretch_scene(self, stretch: int, timelines: dict[str, PodTimeline], t: float) -> Scene:
        """The scene of the stretch holding ``t``: one an earlier history built, when what a
        scene reads before the stretch's end is the same in both, else a new one.

        A change of the history happens at the clock's now, so the stretches before it
        mostly read what they read before it (``timeline.history_before``), and the same
        users and noise give the same scene; the copy carries the current timelines. The
        stretch a change cuts short (it held the change point) keeps its scene too: that
        scene held over the whole of the older, longer stretch, and what the shorter one
        reads is what the older history read before the new end (``fold_history``)."""
        cuts = self._cuts
        end = cuts[stretch] if stretch < len(cuts) else math.inf
        start = cuts[stretch - 1] if stretch > 0 else -math.inf
        reads = history_before(timelines, end)
        key = (end, self.users, self.noise, reads)
        known = self._read_scenes.get(key)
        if known is not None:
            return known.at(t, timelines)
        where = (start, self.users, self.noise)
        longer = self._longer.get(where, [])
        cut = next((s for e, r, s in longer if e > end and fold_history(r, end) == reads), None)
        if cut is not None:
            scene = cut.at(t, timelines)
        else:
            scene = build_scene(self.topology, timelines, t, self.users, self.noise)
        if len(self._read_scenes) > 512:
            self._read_scenes.clear()
            self._longer.clear()
        kept = scene.at(t, {})  # no history kept alive by the memo
        self._read_scenes[key] = kept
        self._longer.setdefault(where, []).append((end, reads, kept))
        return scene

    def _bucket_scene(self, t: float) -> Scene:
        """The scene logs use for the bucket piece holding ``t`` (shared by metrics)."""
        self.timelines()
        return self.scene_at(piece_mid(t, self._cuts))

    def _clip(self, window: TimeWindow) -> TimeWindow:
        """The part of ``window`` the cluster still remembers: the last hours, up to now."""
        now = self._state.now
        return TimeWindow(max(window.start, now - TELEMETRY_RETENTION_S), min(window.end, now))

    # --- the Cluster protocol ----------------------------------------------------------

    @property
    def clock(self) -> SimClock:
        """The virtual clock."""
        return self._clock

    @property
    def namespace(self) -> str:
        """The namespace the simulated system runs in."""
        return self._state.namespace

    @cached_property
    def fingerprint(self) -> str:
        """``sim:<name>:seed=<seed>``."""
        return f"sim:{self._state.name}:seed={self._state.seed}"

    def preflight(self, metric_queries: Mapping[str, str]) -> PreflightReport:
        """Deployments ready, entry point healthy, leftovers, metrics reachable."""
        self._call("preflight")
        health = self.health_now()
        return PreflightReport(
            deployments_ready=not health.unavailable,
            not_ready=health.unavailable,
            frontend_healthy=health.frontend_ok,
            leftovers=self._leftovers(),
            metrics_reachable=True,
        )

    def inject(self, chaos: ChaosObject) -> ChaosRef:
        """Create the chaos object; its records select the pods that exist now."""
        incident = incident_of(chaos)
        self._call("inject", incident)
        if chaos.get("kind") == CONFIG_FAULT_KIND:
            rec = configfault.inject(self._state, self.topology, chaos)
        elif chaos.get("kind") == FLAG_FAULT_KIND:
            rec = flagfault.inject(self._state, self.topology, chaos)
        else:
            rec, fault = create(self._state, self.topology, chaos)
            self.glitches.decide(rec, fault)
            creation_events(self._state, rec, self._no_shell, self._label)
        self._changed()
        return ChaosRef(
            kind=rec.kind,
            name=rec.name,
            namespace=rec.namespace,
            incident_id=incident,
            run_id=rec.labels.get(RUN_LABEL),
        )

    def chaos_status(self, ref: ChaosRef) -> ChaosStatus:
        """The object's status now; ``exists=False`` once it is gone."""
        self._call("chaos_status", ref.incident_id)
        rec = self._find(ref)
        if rec is None:
            return ChaosStatus(kind=ref.kind, name=ref.name, exists=False)
        if rec.kind == CONFIG_FAULT_KIND:
            return configfault.status(self._state, rec)
        if rec.kind == FLAG_FAULT_KIND:
            return flagfault.status(self._state, rec)
        return chaos_status(rec, self._state.now, self._no_shell, self._label)

    def _find(self, ref: ChaosRef) -> ChaosRec | None:
        return self._state.live_chaos(ref.kind, ref.name)

    def remove(self, ref: ChaosRef, timeout_s: float = 60.0) -> None:
        """Delete the object (records recover, finalizer clears); no-op when already gone."""
        self._call("remove", ref.incident_id)
        rec = self._find(ref)
        if rec is None:
            return
        if (reason := foreign_reason(rec.labels, ref)) is not None:
            raise ForeignObjectError(f"{reason}; r2act leaves it alone")
        if rec.kind == CONFIG_FAULT_KIND:
            configfault.remove(self._state, self.topology, rec)
            self._changed()
            return
        if rec.kind == FLAG_FAULT_KIND:
            flagfault.remove(self._state, self.topology, rec)
            self._changed()
            return
        delete(self._state, rec, "api")
        self._state.now += min(REMOVE_WAIT_S, max(0.0, timeout_s))
        self._changed()

    def _leftovers(self) -> list[ChaosRef]:
        found = [
            ChaosRef(
                kind=r.kind,
                name=r.name,
                namespace=r.namespace,
                incident_id=r.labels.get(INCIDENT_LABEL),
                run_id=r.labels.get(RUN_LABEL),
            )
            for r in self._state.chaos
            if r.deleted_at is None
            and r.kind not in (CONFIG_FAULT_KIND, FLAG_FAULT_KIND)
            and r.labels.get(MANAGED_BY_LABEL) == MANAGED_BY
        ]
        return found + configfault.leftovers(self._state) + flagfault.leftovers(self._state)

    def leftovers(self) -> list[ChaosRef]:
        """Every chaos object labelled as managed by r2act that still exists."""
        self._call("leftovers")
        return self._leftovers()

    def pod_names(self) -> set[str]:
        """Names of the pods that exist now."""
        self._call("pod_names")
        now = self._state.now
        return {p.name for p in self._state.pods if p.exists(now)}

    def logs(self, window: TimeWindow) -> Iterator[Sequence[LogLine]]:
        """Every container's lines in the window (up to now), in batches."""
        self._call("logs")
        timelines = self.timelines()
        cut = collectable_from(timelines, self._state.now)
        gone = {name for name, t in cut.items() if t == math.inf}
        cut = {name: t for name, t in cut.items() if name not in gone}
        readable = {n: line for n, line in timelines.items() if n not in gone}
        clipped = self._clip(window)
        if self._book is not None:  # the spans' own timelines: gone pods included
            self._book.use(timelines, self.scene_at, self._cuts, clipped)
        # every line served is at or after the window's start: a cut before it drops nothing
        cut = {name: t for name, t in cut.items() if t > clipped.start}
        failed = loadgen.FailedSince(self._state, self.scene_at, self._cuts)
        for batch in self._logs.window(clipped, readable, self.scene_at, self._cuts, failed):
            if cut:
                batch = [x for x in batch if x.ts >= cut.get(x.pod, -math.inf)]
            if batch:
                yield batch

    def traces(self, window: TimeWindow, sample: float) -> Iterator[Sequence[Span]]:
        """Every kept span that started in the window (up to now), in batches.

        Not counted as an API call: the API glitch schedule of a run (``_call``) must not
        move when a campaign adds traces, so every other file stays byte-identical. The
        trace store keeps spans of pods gone since (unlike the kubelet's logs)."""
        timelines = self.timelines()
        yield from self._spans.window(
            self._clip(window), timelines, self.scene_at, self._cuts, sample
        )

    def events(self, window: TimeWindow) -> list[KubeEvent]:
        """Events of the namespace in the window (up to now), chaos-object events included."""
        self._call("events")
        end = min(window.end, self._state.now)
        background = (self.topology, self.noise)
        return window_events(
            self._state, self.timelines(), TimeWindow(window.start, end), background
        )

    def state(self) -> ClusterState:
        """Deployments and pods now."""
        self._call("state")
        return cluster_state(self._state, self.timelines(), self.topology)

    def metrics(
        self, window: TimeWindow, queries: Mapping[str, str], step_s: float
    ) -> Iterator[MetricSeries]:
        """Range-query each named query over the window (up to now)."""
        self._call("metrics")
        gaps = [r.metric_gap for r in self._state.chaos if r.metric_gap is not None]
        replicas = {name: d.replicas for name, d in self._state.deployments.items()}
        yield from self._metrics.series(
            self._clip(window),
            queries,
            step_s,
            scene_at=self._bucket_scene,
            gaps=gaps,
            replicas=replicas,
        )

    def health(self) -> HealthReport:
        """Probe the entry point, deployments and the users' error rate now."""
        self._call("health")
        return self.health_now()

    def health_now(self) -> HealthReport:
        """The health probe without counting an API call."""
        scene = self.scene_at(self._state.now)
        replicas = {name: d.replicas for name, d in self._state.deployments.items()}
        return health_report(scene, self.topology, replicas, self.error_rate_threshold)

    def apply_plan(self, plan: RecoveryPlan) -> PlanEffect:
        """Carry out a typed plan; the effect lists what changed."""
        self._call("apply_plan")
        changes = apply(self._state, self.topology, plan, self._state.now)
        if isinstance(plan, RollbackConfig) and flagfault.revert_flag(
            self._state, self.topology, plan.target, plan.scope, plan.operation
        ):
            changes.append(Change(kind="chaos_removed", before={"kind": FLAG_FAULT_KIND}))
        self._changed()
        return PlanEffect(operation=plan.operation, changes=changes)

    def rewind_to(self, scope: str, key: str) -> bool:
        """Start ``key`` from the state the cluster had when ``key`` last started in ``scope``.

        The first time a key starts (or after another key started in the same scope) the
        state is saved; when the same key starts again, the cluster goes back to that state.
        Collection keys it by incident: an incident redone after an interruption (its fault
        already removed) runs from the very state an uninterrupted run had, so its
        telemetry is byte-identical. Replay uses one key ('baseline') so every prediction
        starts from the same cluster whatever ran before it. Never rewinds over a live
        chaos object (that is for cleanup). True when it rewound.
        """
        path = checkpoint_path(self.path, scope)
        saved = load_checkpoint(path)
        if saved is not None and saved.key == key and not self._leftovers():
            self._state = saved.state.model_copy(deep=True)
            self._changed()
            return True
        save_checkpoint(path, Checkpoint(key=key, state=self._state))
        return False

    def preimage(self, plan: RecoveryPlan) -> PlanEffect:
        """What the plan may change, as it is now (a read: nothing changes; not counted as
        an API call, so the glitch schedule of a run does not move)."""
        return PlanEffect(operation=plan.operation, changes=preimage(self._state, plan))

    def undo(self, effect: PlanEffect) -> None:
        """Revert replicas and templates a plan changed."""
        self._call("undo")
        undo(self._state, self.topology, list(effect.changes), self._state.now)
        self._changed()


if TYPE_CHECKING:

    def _conforms(cluster: SimulatedCluster) -> Cluster:
        """mypy proves SimulatedCluster implements the Cluster protocol."""
        return cluster

    def _traces(cluster: SimulatedCluster) -> TraceSource:
        """... and the TraceSource protocol."""
        return cluster
