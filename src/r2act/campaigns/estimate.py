"""How long a campaign takes on a real cluster, computed from the manifest before it starts.

On a real cluster the collector mostly waits: the phase windows run on the wall clock,
and around them the lifecycle confirms the injection, waits for the chaos object's
finalizer, probes health until recovery is verified, and reads telemetry. None of that
depends on r2act's speed, so the estimate is a pure function of the manifest's numbers.

Each incident gets a range, not a point: the shortest path (injection confirmed at the
first poll, the system healthy at the first probe after removal) and the longest the
lifecycle allows (every timeout spent). Lanes run one incident each at a time and take the
next planned incident when they free up, so the campaign's duration is the makespan of
that list schedule; with equal incidents it is ``ceil(incidents / lanes)`` incidents long.

Spares are collected only while their cell lacks clean incidents (``collector.rounds``), so
the estimate counts every quota repetition plus the spares expected at a gate rejection
rate ``p``: a cell of quota ``q`` loses about ``q * p`` incidents, and each replacement
costs ``1 / (1 - p)`` spares on average (a negative binomial), so it takes about
``min(spares, q * p / (1 - p))`` spares (the total is rounded, not each cell). The rate is
an assumption, not a measurement of the cluster at hand (``REJECTION_RATE``); ``estimate``
takes another.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from r2act.campaigns.manifest import Manifest
from r2act.campaigns.quotas import CellKey, cell_of, is_spare
from r2act.schema import PlannedIncident

CONFIRM_TIMEOUT_S = 30.0
"""Longest wait for an injection to be confirmed (the collector's default). The fault window
starts at injection, so confirming costs extra time only when it outlasts the window."""
REMOVE_MIN_S = 1.0
"""A finalizer that clears at once still costs one status round trip."""
REMOVE_TIMEOUT_S = 60.0
"""Longest wait for a removed object's finalizer (the collector's default)."""
REJECTION_RATE = 0.05
"""Share of incidents the quality gate is assumed to reject (failed injection, no visible
effect, slow recovery, metric gaps). The simulator's default glitch rates give a few
percent on the paper campaign (``bench/collect.py`` prints the share it measured)."""
READ_S_PER_PHASE = 2.0
"""Reading one phase's logs, events and metrics from the API and Prometheus, then writing
them. An assumption for an Online Boutique namespace (about 14k log lines per phase),
not a measurement; ``estimate`` takes another value."""


@dataclass(frozen=True)
class IncidentTime:
    """Wall-clock seconds one incident occupies its lane, split by where the time goes."""

    windows_s: float
    """pre + during + post: fixed by the manifest, the data the incident is for."""
    low_s: float
    """Everything else on the shortest path (remove, verify, telemetry reads)."""
    high_s: float
    """Everything else when every wait runs to its timeout."""

    @property
    def total_low_s(self) -> float:
        """Shortest time the lane is busy with this incident."""
        return self.windows_s + self.low_s

    @property
    def total_high_s(self) -> float:
        """Longest time the lane is busy with this incident (preflight waits aside)."""
        return self.windows_s + self.high_s


@dataclass(frozen=True)
class CampaignEstimate:
    """The expected wall-clock of a campaign on ``lanes`` lanes."""

    incidents: int
    """Quota repetitions plus the spares expected to be collected."""
    lanes: int
    spares_expected: int = 0
    """Spares among ``incidents`` (expected at ``rejection``)."""
    spares_planned: int = 0
    """Spares the plan holds: the most that could be collected."""
    rejection: float = REJECTION_RATE
    """The gate rejection rate the expected spares assume."""
    windows_s: float = 0.0
    """Sum of every incident's windows (the single-lane floor)."""
    low_s: float = 0.0
    """Makespan when every incident takes its shortest path."""
    high_s: float = 0.0
    """Makespan when every wait runs to its timeout."""
    overhead_low: float = 0.0
    """Time outside the windows on the shortest path, as a share of the windows."""

    @property
    def per_lane(self) -> int:
        """Incidents of the busiest lane."""
        return -(-self.incidents // self.lanes) if self.incidents else 0


def incident_time(
    incident: PlannedIncident,
    manifest: Manifest,
    *,
    read_s_per_phase: float = READ_S_PER_PHASE,
) -> IncidentTime:
    """Shortest and longest lane time of one incident under the manifest's health settings.

    Verification needs ``consecutive`` healthy probes ``interval`` apart, so even a system
    that never noticed the fault costs ``(consecutive - 1) * interval``; the longest wait is
    the incident's recovery timeout plus one interval (the probe that runs past it).
    Confirming the injection happens inside the fault window, which starts at injection."""
    phases = incident.phases
    health = manifest.health
    reads = 3 * read_s_per_phase
    verify_low = (health.consecutive - 1) * health.interval_s
    verify_high = phases.recovery_timeout_s + health.interval_s
    return IncidentTime(
        windows_s=float(phases.pre_s + phases.during_s + phases.post_s),
        low_s=REMOVE_MIN_S + verify_low + reads,
        high_s=max(0.0, CONFIRM_TIMEOUT_S - phases.during_s)
        + REMOVE_TIMEOUT_S
        + verify_high
        + reads,
    )


def makespan(durations: Sequence[float], lanes: int) -> float:
    """Finish time of ``durations`` in plan order, each to the lane that frees up first."""
    if lanes < 1:
        raise ValueError("lanes must be at least 1")
    free = [0.0] * min(lanes, max(len(durations), 1))
    for duration in durations:
        heapq.heapreplace(free, free[0] + duration)
    return max(free)


def collected(incidents: Sequence[PlannedIncident], rejection: float) -> list[PlannedIncident]:
    """The incidents expected to be collected: quota repetitions in plan order, then the
    expected number of spares (each cell's lowest repetitions, as the top-up rounds take).

    A cell's expectation ``q * p / (1 - p)`` is fractional; the campaign's total is rounded
    and shared by the largest remainders, so many small cells do not each round up."""
    if not 0.0 <= rejection < 1.0:
        raise ValueError("rejection must be in [0, 1)")
    quota = Counter(cell_of(i) for i in incidents if i.quota is not None and not is_spare(i))
    planned = Counter(cell_of(i) for i in incidents if is_spare(i))
    share = {
        cell: min(float(count), quota[cell] * rejection / (1.0 - rejection))
        for cell, count in sorted(planned.items())
    }
    want = {cell: math.floor(value) for cell, value in share.items()}
    left = round(sum(share.values())) - sum(want.values())
    for cell in sorted(share, key=lambda c: want[c] - share[c])[: max(0, left)]:
        want[cell] += 1
    taken: Counter[CellKey] = Counter()
    spares: list[PlannedIncident] = []
    for incident in sorted((i for i in incidents if is_spare(i)), key=lambda i: i.repetition):
        cell = cell_of(incident)
        if taken[cell] < want.get(cell, 0):
            taken[cell] += 1
            spares.append(incident)
    return [i for i in incidents if not is_spare(i)] + spares


def estimate(
    manifest: Manifest,
    incidents: Sequence[PlannedIncident],
    lanes: int,
    *,
    read_s_per_phase: float = READ_S_PER_PHASE,
    rejection: float = REJECTION_RATE,
) -> CampaignEstimate:
    """The campaign's real-cluster wall-clock on ``lanes`` lanes, as a range, for its quota
    repetitions plus the spares expected at gate rejection rate ``rejection``."""
    chosen = collected(incidents, rejection)
    times = [incident_time(i, manifest, read_s_per_phase=read_s_per_phase) for i in chosen]
    windows = sum(t.windows_s for t in times)
    outside = sum(t.low_s for t in times)
    return CampaignEstimate(
        incidents=len(times),
        lanes=lanes,
        spares_expected=sum(is_spare(i) for i in chosen),
        spares_planned=sum(is_spare(i) for i in incidents),
        rejection=rejection,
        windows_s=windows,
        low_s=makespan([t.total_low_s for t in times], lanes),
        high_s=makespan([t.total_high_s for t in times], lanes),
        overhead_low=outside / windows if windows else 0.0,
    )


def format_duration(seconds: float) -> str:
    """``2d 03h 10m``, ``3h 05m`` or ``12m 30s``: the units a person plans a run in."""
    total = round(seconds)
    days, rest = divmod(total, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h {minutes:02d}m"
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s"
