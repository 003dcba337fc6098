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
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from r2act.campaigns.manifest import Manifest
from r2act.schema import PlannedIncident

CONFIRM_TIMEOUT_S = 30.0
"""Longest wait for an injection to be confirmed (the collector's default). The fault window
starts at injection, so confirming costs extra time only when it outlasts the window."""
REMOVE_MIN_S = 1.0
"""A finalizer that clears at once still costs one status round trip."""
REMOVE_TIMEOUT_S = 60.0
"""Longest wait for a removed object's finalizer (the collector's default)."""
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
    lanes: int
    windows_s: float
    """Sum of every incident's windows (the single-lane floor)."""
    low_s: float
    """Makespan when every incident takes its shortest path."""
    high_s: float
    """Makespan when every wait runs to its timeout."""
    overhead_low: float
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


def estimate(
    manifest: Manifest,
    incidents: Sequence[PlannedIncident],
    lanes: int,
    *,
    read_s_per_phase: float = READ_S_PER_PHASE,
) -> CampaignEstimate:
    """The campaign's real-cluster wall-clock on ``lanes`` lanes, as a range."""
    times = [incident_time(i, manifest, read_s_per_phase=read_s_per_phase) for i in incidents]
    windows = sum(t.windows_s for t in times)
    outside = sum(t.low_s for t in times)
    return CampaignEstimate(
        incidents=len(times),
        lanes=lanes,
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
