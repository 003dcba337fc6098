"""The lane process: take the next pending incident, collect it on this lane, publish it.

Started by ``collector.lanes`` (spawned, so it shares nothing with the parent but what it is
given). Each incident goes through the ordinary ``collect`` into the lane's own directory
``RUN/lanes/<lane>/`` (its lock, ledger, journal and cluster), then the complete incident
directory is renamed into ``RUN/raw/``. Progress goes to the parent through a pipe of its own.

Signals: the process leaves the parent's process group, so a terminal's Ctrl-C reaches the
parent, which forwards it once. Between incidents a signal only stops the loop; inside one,
``collect``'s cleanup guard removes the fault first. A lane whose parent disappeared
finishes its incident and takes no other.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from types import FrameType
from typing import Any

from r2act.campaigns import Manifest, SimTarget
from r2act.cluster.base import Cluster
from r2act.collector import layout, resume
from r2act.collector.campaign import CollectionPlan, collect, open_target
from r2act.collector.context import CollectSettings, IncidentResult
from r2act.errors import R2actError

LANES_DIR = "lanes"
"""``RUN/lanes/<lane>/``: each lane's own run directory (its lock, journal and cluster)."""
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Signals the parent forwards to every lane and a lane stops on."""


def lane_dir(run_dir: Path, lane: str) -> Path:
    """Where ``lane`` keeps its own run directory."""
    return run_dir / LANES_DIR / lane


def lane_dirs(run_dir: Path) -> list[Path]:
    """The lane directories of a lanes run, lane 1 first; empty for any other run."""
    root = run_dir / LANES_DIR
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if p.is_dir() and p.name.removeprefix("lane-").isdigit()]
    return sorted(found, key=lambda p: int(p.name.removeprefix("lane-")))


class LaneChannel:
    """A lane's own end of its pipe to the parent: ``put`` sends one event.

    One pipe per lane, never a queue the lanes share (see ``lanes._await_lanes``): the
    parent reads each lane's events in the order sent and sees the end of the pipe when
    the lane ends, however it ends."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def put(self, event: tuple[Any, ...]) -> None:
        """Send ``event``; a parent that is gone is no reason to stop cleaning up."""
        with suppress(OSError):  # BrokenPipeError among them
            self._connection.send(event)


class _QueueObserver:
    """The ``CollectionObserver`` a lane process hands to ``collect``: forwards to the parent."""

    def __init__(self, events: Any, lane: str) -> None:
        self._events = events
        self._lane = lane

    def campaign_started(self, pending: int, skipped: int) -> None:
        """Not forwarded: the parent knows the whole campaign."""

    def round_started(self, incidents: int) -> None:
        """Not forwarded: the parent chooses the rounds."""

    def incident_started(self, incident_id: str) -> None:
        """Forward."""
        self._events.put(("started", self._lane, incident_id))

    def step_started(self, incident_id: str, step: str) -> None:
        """Forward."""
        self._events.put(("step", self._lane, incident_id, step))

    def retried(self, incident_id: str, step: str, attempt: int, error: str) -> None:
        """Forward as a step label."""
        self._events.put(("step", self._lane, incident_id, f"{step} (retry {attempt})"))

    def incident_finished(self, result: IncidentResult) -> None:
        """Sent with the incident's cluster time by the lane loop instead."""

    def message(self, text: str) -> None:
        """Forward, naming the lane."""
        self._events.put(("message", self._lane, text))


@dataclass(frozen=True)
class LaneJob:
    """Everything a lane process needs (pickled to a spawned process)."""

    plan: CollectionPlan
    lane: str
    run_dir: Path
    pending: tuple[str, ...]
    """Incident ids of this round still to collect, in plan order; shared by every lane."""
    positions: dict[str, int]
    """Incident id -> position in the whole plan (fixes its simulated start time)."""
    parent: int
    settings: CollectSettings | None = None
    """Lifecycle settings; None derives them from the lane's manifest."""


def lane_main(job: LaneJob, counter: Any, events: Any) -> None:
    """Entry point of a lane process."""
    os.setpgrp()  # a terminal's Ctrl-C goes to the parent, which forwards it exactly once
    stopped: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stopped.append(signum)

    for signum in FORWARDED:
        signal.signal(signum, on_signal)
    # started with them blocked (collector.lanes): one sent meanwhile is delivered now
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    try:
        _lane_loop(job, counter, events, stopped)
    except R2actError as error:
        events.put(("error", job.lane, type(error).__name__, str(error)))
    finally:
        events.put(("done", job.lane))


def _lane_loop(job: LaneJob, counter: Any, events: Any, stopped: list[int]) -> None:
    while not stopped and os.getppid() == job.parent:
        with counter.get_lock():
            index = counter.value
            counter.value += 1
        if index >= len(job.pending) or stopped:  # a stop never starts another incident
            break
        if collect_one(job, job.pending[index], events, open_target):
            return
    if stopped:
        events.put(("interrupted", job.lane, stopped[0]))


def collect_one(
    job: LaneJob,
    incident_id: str,
    events: Any,
    cluster_factory: Callable[[Manifest, Path], Cluster],
) -> bool:
    """Collect one incident on the job's lane and publish it; True when a signal stopped it."""
    directory = lane_dir(job.run_dir, job.lane)
    item = next(i for i in job.plan.items if i.incident.id == incident_id)
    wall = time.perf_counter()
    summary = collect(  # on the simulator, a fresh system at the incident's own start time
        replace(job.plan, items=[item], stop_full_cells=False, positions=job.positions),
        directory,
        settings=job.settings,
        observer=_QueueObserver(events, job.lane),
        cluster_factory=cluster_factory,
    )
    publish(directory, job.run_dir, [incident_id])
    spent = _cluster_seconds(job, directory, incident_id, time.perf_counter() - wall)
    for result in summary.results:
        events.put(("finished", job.lane, result, spent))
    if summary.interrupted_by is not None:
        events.put(("interrupted", job.lane, summary.interrupted_by))
        return True
    return False


def _cluster_seconds(job: LaneJob, directory: Path, incident_id: str, wall_s: float) -> float:
    """Seconds the incident took on the cluster's clock (virtual on the simulator, where
    ``collect`` started it on a fresh system at its own start time)."""
    target = job.plan.manifest.target
    if isinstance(target, SimTarget):
        from r2act.cluster.sim.lanes import incident_start, virtual_now

        now = virtual_now(directory, target.name)
        start = incident_start(job.positions[incident_id], target.seed)
        return 0.0 if now is None else now - start
    return wall_s


def publish(directory: Path, run_dir: Path, incident_ids: Sequence[str] | None = None) -> int:
    """Rename complete incidents of a lane directory into ``RUN/raw``; returns how many.

    An incident already complete in ``RUN/raw`` stays where it is (never overwritten)."""
    source_raw, raw = layout.raw_dir(directory), layout.raw_dir(run_dir)
    if not source_raw.is_dir():
        return 0
    ids = incident_ids if incident_ids is not None else resume.scan(source_raw).complete
    moved = 0
    for incident_id in sorted(ids):
        source = source_raw / incident_id
        if layout.is_complete(source) and not (raw / incident_id).exists():
            raw.mkdir(parents=True, exist_ok=True)
            os.replace(source, raw / incident_id)
            moved += 1
    return moved
