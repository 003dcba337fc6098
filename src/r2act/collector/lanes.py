"""Lanes: one incident per lane at a time, every lane at once, each in its own process.

The parent plans, resumes and checks every lane's target (the opt-in check of a Kubernetes
lane runs here, before any lane writes anything), then starts one process per lane. A lane
process takes the next pending incident (a shared counter over one fixed list, so no
incident is taken twice) and collects it with the ordinary ``collect`` into its own lane
directory ``RUN/lanes/<lane>/`` — same lifecycle, journal, retries, cleanup guard, lock and
leftover checks as a single-lane run — then renames the complete incident directory into
``RUN/raw/``. Rounds (``collector.rounds``) run one after the other: every lane finishes its
incidents of a round before the next round (the spares short cells need) is chosen from
the verdicts the lanes sent back, so the incidents collected do not depend on how many lanes
there are. The raw store therefore looks the same whatever the number of lanes; an
incident records its lane in its target fingerprint (``sim:<name>-lane-2:...`` or the lane's
context and namespace).

Signals: lane processes run in their own process groups, so a terminal's Ctrl-C reaches the
parent only; the parent forwards SIGINT, SIGTERM and SIGHUP to every lane once, and each
lane's cleanup guard removes its fault before the lane exits. The parent never dies first:
it waits for every lane, then reports 128+N. A lane whose parent disappeared (SIGKILL)
finishes its incident (removing the fault) and takes no other.

Processes, not threads: on the simulator each lane burns a core generating telemetry, and
the GIL would serialise threads. The lane process itself is ``collector.lane_worker``.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

import yaml

from r2act.campaigns import Manifest, SimTarget, plan_incidents, render_chaos
from r2act.campaigns.estimate import makespan
from r2act.campaigns.lanes import Lane, lane_targets, shared_nodes
from r2act.cluster.base import Cluster
from r2act.collector import layout, ledger, resume
from r2act.collector.campaign import (
    CampaignSummary,
    CollectionPlan,
    PlannedChaos,
    cleanup_command,
    open_target,
    plan_rounds,
)
from r2act.collector.context import CollectSettings, IncidentResult
from r2act.collector.fresh import plan_positions
from r2act.collector.lane_worker import (
    FORWARDED,
    LANES_DIR,
    LaneChannel,
    LaneJob,
    collect_one,
    lane_dir,
    lane_dirs,
    lane_main,
    publish,
)
from r2act.collector.rounds import Rounds
from r2act.errors import DataError, SafetyError
from r2act.systems import SYSTEMS

__all__ = [
    "LANES_DIR",
    "LaneStats",
    "LanesObserver",
    "LanesSummary",
    "NullLanesObserver",
    "collect_lanes",
    "lane_dir",
    "lane_dirs",
    "lane_manifest",
    "lane_plan",
    "publish",
]

_POLL_S = 0.2
_LOST_JOIN_S = 5.0
"""How long the parent waits for a lane whose channel closed unannounced to be reaped (its
exit code goes into the error); the channel closes as the process ends."""


def lane_manifest(manifest_path: Path, lane: Lane) -> Manifest:
    """The campaign as one lane runs it: the same plan, on the lane's own single target.

    Validated again from the file (already checked by ``load_manifest``) so that the metric
    queries get the lane's namespace substituted, not lane 1's."""
    data: Any = yaml.safe_load(manifest_path.read_text(encoding="utf-8"))
    data["target"] = lane.target.model_dump(mode="json", exclude_none=True)
    return Manifest.model_validate(data)


def lane_plan(plan: CollectionPlan, lane: Lane) -> CollectionPlan:
    """``plan`` for one lane: the same incidents, chaos objects rendered into its namespace."""
    manifest = lane_manifest(plan.manifest_path, lane)
    topology = SYSTEMS[manifest.system]
    wanted = {item.incident.id for item in plan.items}
    items = [
        PlannedChaos(i, render_chaos(i, manifest.namespace, topology))
        for i in plan_incidents(manifest)
        if i.id in wanted
    ]
    return replace(plan, manifest=manifest, items=items)


# --- progress ----------------------------------------------------------------------------


class LanesObserver(Protocol):
    """Progress of a lanes run; the CLI draws one line per lane from it."""

    def campaign_started(self, pending: int, skipped: int, lanes: Sequence[str]) -> None:
        """Collection of ``pending`` incidents on ``lanes`` begins."""

    def round_started(self, incidents: int) -> None:
        """A top-up round of ``incidents`` spares for cells still short begins."""

    def incident_started(self, lane: str, incident_id: str) -> None:
        """A lane took an incident."""

    def step_started(self, lane: str, incident_id: str, step: str) -> None:
        """A lane's incident entered a lifecycle step."""

    def incident_finished(self, lane: str, result: IncidentResult, cluster_s: float) -> None:
        """A lane finished an incident that took ``cluster_s`` seconds of cluster time."""

    def message(self, text: str) -> None:
        """Something the user should read."""


class NullLanesObserver:
    """Ignores everything."""

    def campaign_started(self, pending: int, skipped: int, lanes: Sequence[str]) -> None:
        """Ignored."""

    def round_started(self, incidents: int) -> None:
        """Ignored."""

    def incident_started(self, lane: str, incident_id: str) -> None:
        """Ignored."""

    def step_started(self, lane: str, incident_id: str, step: str) -> None:
        """Ignored."""

    def incident_finished(self, lane: str, result: IncidentResult, cluster_s: float) -> None:
        """Ignored."""

    def message(self, text: str) -> None:
        """Ignored."""


class _ListQueue(list[tuple[Any, ...]]):
    """The events queue of an inline run: the parent reads what the lanes appended."""

    def put(self, event: tuple[Any, ...]) -> None:
        self.append(event)


def _run_inline(
    jobs: list[LaneJob],
    cluster_factory: Callable[[Manifest, Path], Cluster],
    observer: LanesObserver,
    out: LanesSummary,
) -> None:
    """Lanes in turn in this process, one incident each per round (tests, debugging).

    Same lane directories, lane plans and publishing as the process runner, with a given
    ``cluster_factory`` (e.g. an API emulator) that a spawned process could not receive."""
    events = _ListQueue()
    for index, incident_id in enumerate(jobs[0].pending):
        job = jobs[index % len(jobs)]
        stopped = collect_one(job, incident_id, events, cluster_factory)
        for event in events:
            _dispatch(event, observer, out)
        events.clear()
        if stopped:
            return


# --- the parent ----------------------------------------------------------------------------


@dataclass
class LaneStats:
    """What one lane did in this run."""

    incidents: int = 0
    cluster_s: float = 0.0
    """Cluster seconds its incidents took: virtual on the simulator, real on Kubernetes."""


@dataclass
class LanesSummary:
    """A lanes run: the usual campaign summary plus what each lane did."""

    summary: CampaignSummary
    lanes: dict[str, LaneStats] = field(default_factory=dict)
    errors: list[tuple[str, str, str]] = field(default_factory=list)
    """(lane, error type, message) of lanes that stopped on an error."""
    spans: dict[str, float] = field(default_factory=dict)
    """Incident id -> cluster seconds it took."""
    order: list[str] = field(default_factory=list)
    """Incident ids in plan order."""
    rounds: list[tuple[str, ...]] = field(default_factory=list)
    """Incident ids of each round this run collected, in plan order."""
    virtual: bool = False
    """Cluster seconds are the simulator's, not real ones."""
    cleanup: str = "r2act cleanup"
    """The command that cleans this run's lanes, for messages."""

    @property
    def cluster_s(self) -> float:
        """The run's length on the cluster's clock.

        On Kubernetes, the busiest lane's real seconds. On the simulator, which lane takes
        which incident depends on how fast each process generates telemetry, not on the
        virtual durations; a real run's lanes free up after the real durations, so the
        wall-clock a real run would take is the list schedule of the virtual spans in plan
        order over the lanes (``campaigns.estimate.makespan``), round after round (a round
        starts when the previous one ended on every lane)."""
        if self.virtual:
            lanes = max(len(self.lanes), 1)
            rounds = self.rounds or [tuple(self.order)]
            return sum(
                makespan([self.spans[i] for i in ids if i in self.spans], lanes) for ids in rounds
            )
        return max((s.cluster_s for s in self.lanes.values()), default=0.0)


def collect_lanes(
    plan: CollectionPlan,
    run_dir: Path,
    *,
    resume_run: bool = True,
    force: bool = False,
    observer: LanesObserver | None = None,
    cluster_factory: Callable[[Manifest, Path], Cluster] = open_target,
    inline: bool = False,
    settings: CollectSettings | None = None,
) -> LanesSummary:
    """Collect ``plan`` on every lane of its target at once into ``run_dir/raw``.

    ``cluster_factory`` connects to a lane (its target, its lane directory); the lane
    processes always use ``open_target``, so another factory needs ``inline=True``."""
    observer = observer or NullLanesObserver()
    ledger.check_out_dir(run_dir)
    with ledger.run_lock(run_dir, "collect (lanes)"):
        ledger.run_id(run_dir, "collect")  # marks the directory as r2act's
        return _collect_lanes_locked(
            plan, run_dir, resume_run=resume_run, force=force, observer=observer,
            cluster_factory=cluster_factory, inline=inline, settings=settings,
        )  # fmt: skip


def _collect_lanes_locked(
    plan: CollectionPlan,
    run_dir: Path,
    *,
    resume_run: bool,
    force: bool,
    observer: LanesObserver,
    cluster_factory: Callable[[Manifest, Path], Cluster],
    inline: bool,
    settings: CollectSettings | None,
) -> LanesSummary:
    wall = time.perf_counter()
    lanes = lane_targets(plan.manifest.target)
    raw = layout.raw_dir(run_dir)
    cleanup = cleanup_command(plan.manifest_path, run_dir, plan.manifest)
    for lane in lanes:  # a lane stopped hard (SIGKILL) left its fault: no lane may start
        ledger.refuse_if_pending(lane_dir(run_dir, lane.name), cleanup)
    for lane in lanes:  # incidents a stopped run completed but had not moved yet
        publish(lane_dir(run_dir, lane.name), run_dir)
    found = resume.scan(raw)
    ids = [item.incident.id for item in plan.items]
    if not resume_run:
        resume.refuse_unless_forced(run_dir, found, force)
    done = set() if not resume_run else found.complete & set(ids)
    rounds = plan_rounds(plan, raw, done)
    pending = tuple(rounds.next())
    summary = CampaignSummary(plan.manifest.name, run_dir, len(ids), skipped=len(done))
    out = LanesSummary(
        summary,
        {lane.name: LaneStats() for lane in lanes},
        order=ids,
        virtual=isinstance(plan.manifest.target, SimTarget),
        cleanup=cleanup,
    )
    # later rounds may need more lanes than the first (a resume retrying one failed incident)
    active = lanes[: len(set(ids) - done)] if pending else []
    observer.campaign_started(len(pending), len(done), [lane.name for lane in active])
    if pending:
        resume.check_writable(run_dir)
        plans = _checked_plans(plan, active, run_dir, cluster_factory)
        if not resume_run:
            summary.moved_aside += resume.move_aside(
                raw, found.complete & set(ids), layout.SUPERSEDED_DIR
            )
        positions = dict(plan.positions or plan_positions(plan.manifest))
        with _held_between_rounds() as held:
            _run_rounds(
                rounds, pending, plans, run_dir, positions, held,
                inline=inline, cluster_factory=cluster_factory, settings=settings,
                observer=observer, out=out,
            )  # fmt: skip
    summary.finish(rounds)
    summary.wall_s = time.perf_counter() - wall
    return out


def _run_rounds(  # noqa: PLR0917 - private, called once
    rounds: Rounds,
    pending: tuple[str, ...],
    plans: dict[str, CollectionPlan],
    run_dir: Path,
    positions: dict[str, int],
    held: list[int],
    *,
    inline: bool,
    cluster_factory: Callable[[Manifest, Path], Cluster],
    settings: CollectSettings | None,
    observer: LanesObserver,
    out: LanesSummary,
) -> None:
    """Round after round until no cell is short; a signal between rounds ends it there."""
    summary = out.summary
    while pending:
        if held:  # arrived while no lane ran and no fault was live
            summary.interrupted_by = held[0]
            break
        before = len(summary.results)
        out.rounds.append(pending)
        some = dict(list(plans.items())[: len(pending)])  # a small round needs few lanes
        if inline:
            jobs = [
                LaneJob(p, name, run_dir, pending, positions, os.getpid(), settings)
                for name, p in some.items()
            ]
            _run_inline(jobs, cluster_factory, observer, out)
        else:
            _run_lanes(some, run_dir, pending, positions, observer, out)
        for result in summary.results[before:]:
            rounds.record(result)
        if summary.interrupted_by is not None:
            break
        if pending := tuple(rounds.next()):
            observer.round_started(len(pending))


def _checked_plans(
    plan: CollectionPlan,
    lanes: Sequence[Lane],
    run_dir: Path,
    cluster_factory: Callable[[Manifest, Path], Cluster],
) -> dict[str, CollectionPlan]:
    """Each lane's plan, after every lane passed its safety check and none shares a node.

    Connecting runs the adapter's safety check (context, opt-in label), so a lane that is
    not opted in stops the whole run before any lane writes anything. Kubernetes lanes on
    one cluster must run on separate nodes (one lane's CPU stress or pod failure would
    disturb the other's baseline) unless the target says ``allow_shared_nodes``; then the
    quality gate flags incidents whose windows overlap a disturbance on a shared node."""
    placement: dict[str, tuple[str, list[str]]] = {}
    plans: dict[str, CollectionPlan] = {}
    for lane in lanes:
        own = lane_plan(plan, lane)
        cluster = cluster_factory(own.manifest, lane_dir(run_dir, lane.name))
        try:
            pod_nodes = getattr(cluster, "pod_nodes", None)
            nodes = sorted(set(pod_nodes().values())) if pod_nodes is not None else []
        finally:
            if (close := getattr(cluster, "close", None)) is not None:
                close()
        where = getattr(lane.target, "context", None) or f"sim:{getattr(lane.target, 'name', '')}"
        placement[lane.name] = (where, nodes)
        info = {"name": lane.name, "cluster": where, "nodes": nodes}
        plans[lane.name] = replace(own, lane=info)
    allowed = bool(getattr(plan.manifest.target, "allow_shared_nodes", False))
    if (shared := shared_nodes(placement)) and not allowed:
        first, other, node = shared[0]
        raise SafetyError(
            f"{first} and {other} both run on node {node}: concurrent faults would disturb "
            "each other (pin each lane to its own nodes, see deploy/kind/lanes, or set "
            "target.allow_shared_nodes: true to accept it; the audit then flags overlaps)"
        )
    return plans


def _run_lanes(  # noqa: PLR0917 - private, called once
    plans: dict[str, CollectionPlan],
    run_dir: Path,
    pending: tuple[str, ...],
    positions: dict[str, int],
    observer: LanesObserver,
    out: LanesSummary,
) -> None:
    context = multiprocessing.get_context("spawn")
    counter = context.Value("i", 0)
    channels = {name: context.Pipe(duplex=False) for name in plans}
    processes = {
        name: context.Process(
            target=lane_main,
            args=(
                LaneJob(plan, name, run_dir, pending, positions, os.getpid()),
                counter,
                LaneChannel(channels[name][1]),
            ),
            name=f"r2act-{name}",
            daemon=False,
        )
        for name, plan in plans.items()
    }
    with _forwarding(processes) as signals:
        with _blocked():  # a lane inherits the mask: no signal reaches it before its handlers
            for process in processes.values():
                process.start()
        for _, sender in channels.values():
            sender.close()  # each lane holds its own end now: it closes when the lane ends
        for signum in dict.fromkeys(signals):  # arrived before every lane had a pid
            _send(processes, signum)
        _await_lanes(processes, {n: c[0] for n, c in channels.items()}, observer, out)
        for process in processes.values():
            process.join()
    if signals and out.summary.interrupted_by is None:
        out.summary.interrupted_by = signals[0]
    if out.errors:
        lane, kind, message = out.errors[0]
        error = SafetyError if kind == "SafetyError" else DataError
        raise error(f"{lane}: {message}")


def _await_lanes(
    processes: dict[str, Any],
    readers: dict[str, Connection],
    observer: LanesObserver,
    out: LanesSummary,
) -> None:
    """Dispatch each lane's events until it said it is done, or its channel closed without
    that (``_lost``: the process ended, killed or crashed).

    Every lane has a pipe of its own. A queue shared by the lanes has one write lock for
    all of them: a lane killed while holding it (SIGKILL, the OOM killer) leaves the lock
    taken, every other lane's next event blocks for ever, and the run hangs with their
    faults injected. A lane's own pipe only ever holds its own events, in order, so its
    ``done`` is always read before the end of its channel, and a message cut short by a
    kill ends in EOF, never in a wait."""
    open_ = {reader: name for name, reader in readers.items()}

    def closed(reader: Connection, *, lost: bool) -> None:
        name = open_.pop(reader)
        reader.close()
        if lost:
            processes[name].join(timeout=_LOST_JOIN_S)
            _lost(name, processes[name], observer, out)

    while open_:
        ready = wait(list(open_), timeout=_POLL_S)
        if not ready:  # a pipe another process still holds open never ends: ask the lane
            for reader, name in list(open_.items()):
                if not processes[name].is_alive() and not reader.poll():
                    closed(reader, lost=True)
        for reader in (r for r in ready if isinstance(r, Connection)):
            try:
                event = reader.recv()
            except (EOFError, OSError):
                closed(reader, lost=True)
                continue
            if event[0] == "done":
                closed(reader, lost=False)
            else:
                _dispatch(event, observer, out)


def _dispatch(event: tuple[Any, ...], observer: LanesObserver, out: LanesSummary) -> None:
    kind, lane = event[0], event[1]
    if kind == "started":
        observer.incident_started(lane, event[2])
    elif kind == "step":
        observer.step_started(lane, event[2], event[3])
    elif kind == "finished":
        result, spent = event[2], event[3]
        out.summary.results.append(result)
        stats = out.lanes[lane]
        stats.incidents += 1
        stats.cluster_s += spent
        out.spans[result.incident_id] = spent
        observer.incident_finished(lane, result, spent)
    elif kind == "interrupted":
        if out.summary.interrupted_by is None:
            out.summary.interrupted_by = event[2]
    elif kind == "message":
        observer.message(f"{lane}: {event[2]}")
    elif kind == "error":
        out.errors.append((lane, event[2], event[3]))
        observer.message(f"{lane} stopped: {event[3]}")


def _lost(name: str, process: Any, observer: LanesObserver, out: LanesSummary) -> None:
    """A lane process ended without saying so (killed): its fault may be left."""
    code = process.exitcode
    message = (
        f"the lane process ended unexpectedly (exit code {code}); its fault may still be "
        f"injected: run `{out.cleanup}` before collecting again"
    )
    observer.message(f"{name}: {message}")
    out.errors.append((name, "SafetyError", message))


def _send(processes: dict[str, Any], signum: int) -> None:
    for process in processes.values():
        if process.pid is not None and process.is_alive():
            with suppress(ProcessLookupError):
                os.kill(process.pid, signum)


@contextmanager
def _blocked() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP wait (pending) until the block ends.

    Held while the lanes are spawned: a new process starts with its parent's signal mask,
    so a Ctrl-C to the terminal's group while a lane is still importing (before it left the
    group and installed its handlers) waits in the lane instead of killing it with a
    KeyboardInterrupt (a lane lost, its run refused). The lane unblocks them once its
    handlers are in place (``lane_worker.lane_main``); the parent, after starting them.
    multiprocessing's resource tracker unblocks SIGINT and SIGTERM when it starts, so it is
    started first."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def _signals_noted(also: Callable[[int], None]) -> Iterator[list[int]]:
    """SIGINT, SIGTERM and SIGHUP are appended to the yielded list (and passed to ``also``)
    instead of stopping the process; the previous handlers come back on exit."""
    received: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        also(signum)

    previous = {signum: signal.signal(signum, note) for signum in FORWARDED}
    try:
        yield received
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _held_between_rounds() -> AbstractContextManager[list[int]]:
    """Between two rounds no lane runs and no fault is live: a signal is noted and ends the
    campaign before the next round (exit 128+N, as during a round), never with Python's
    default KeyboardInterrupt. During a round ``_forwarding`` (or, inline, each lane's
    cleanup guard) takes the signals over and gives them back afterwards."""
    return _signals_noted(lambda _signum: None)


def _forwarding(processes: dict[str, Any]) -> AbstractContextManager[list[int]]:
    """While lanes run: SIGINT/SIGTERM/SIGHUP go to every live lane once, never kill us."""
    sent: set[int] = set()

    def forward(signum: int) -> None:
        if signum not in sent:
            sent.add(signum)
            _send(processes, signum)

    return _signals_noted(forward)
