"""What a collection run is configured with, and what it reports back.

Kept apart from ``campaigns.Manifest`` on purpose: the lifecycle needs a handful of numbers,
and tests and the bench can build them directly without a manifest file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from r2act.collector.retrying import RetryPolicy


@dataclass(frozen=True)
class CollectSettings:
    """Knobs of the per-incident lifecycle."""

    metric_queries: Mapping[str, str]
    """Named PromQL queries read for every phase."""
    metric_step_s: float = 15.0
    """Range-query resolution."""
    health_interval_s: float = 5.0
    """Seconds between health probes while verifying recovery (and waiting in preflight)."""
    health_consecutive: int = 3
    """Healthy probes in a row that count as recovered."""
    confirm_timeout_s: float = 30.0
    """Longest wait for the chaos status to show every target injected."""
    confirm_interval_s: float = 1.0
    """Seconds between chaos-status polls while confirming."""
    preflight_timeout_s: float = 600.0
    """Longest wait for a not-yet-ready system before the incident fails.

    Generous on purpose: a previous incident whose recovery outlived its verify timeout
    should delay the next one, not fail it.
    """
    remove_timeout_s: float = 60.0
    """Bound on waiting for a removed object's finalizer."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Retries of transient cluster errors."""
    backoff_sleep: Callable[[float], None] | None = None
    """Sleep used between retries; ``None`` sleeps on the cluster's clock."""
    trace_sample: float | None = None
    """Share of whole traces written to each phase's ``traces.jsonl.zst`` (the manifest's
    ``traces.sample``); None: the campaign collects no traces and writes no such file."""
    log_level: int = 1
    """zstd level of the log files (1: the fastest standard level; 3 costs ~70% more CPU
    for 2% fewer bytes on these logs, ``bench/collect.py --codecs``)."""


@dataclass(frozen=True)
class Provenance:
    """Where an incident came from; copied into every ``incident.json``."""

    tool_version: str
    manifest_sha256: str
    campaign: str
    cleanup_command: str
    """The exact command that sweeps this campaign's target, for error messages."""
    load: Mapping[str, Any]
    target_kind: str
    fingerprint: str
    namespace: str
    target_seed: int | None = None
    """Seed of a simulated target (None on Kubernetes), so replay can rebuild the same cluster."""
    lane: Mapping[str, Any] | None = None
    """Lane name, cluster and nodes when collected by lanes (None otherwise)."""
    noise: str = "realistic"
    """The manifest's noise level (``NoiseLevel`` value): the background a simulated target
    showed besides the fault; on a real cluster always ``realistic`` (its own)."""


@dataclass(frozen=True)
class IncidentResult:
    """How one incident ended."""

    incident_id: str
    status: Literal["completed", "failed"]
    error: str | None = None
    log_records: int = 0
    wall_s: float = 0.0
    generation_s: float = 0.0
    """Real seconds spent inside cluster reads (telemetry generation on the sim)."""
    generation_cpu_s: float = 0.0
    """CPU seconds of the collecting thread spent inside cluster reads."""
    clean: bool | None = None
    """The quality gate's per-incident verdict: would pass the audit (None: not judged)."""
    reasons: tuple[str, ...] = ()
    """The gate's problem codes when judged, e.g. ``("INJECTION_FAILED",)``."""
    judge_cpu_s: float = 0.0
    """CPU seconds spent judging it (``quality_gate.verdict``)."""


class CollectionObserver(Protocol):
    """Receives progress; the CLI draws a progress bar from it, tests ignore it."""

    def campaign_started(self, pending: int, skipped: int) -> None:
        """Collection of ``pending`` incidents begins; ``skipped`` are already complete."""

    def round_started(self, incidents: int) -> None:
        """A top-up round of ``incidents`` spares for cells still short begins."""

    def incident_started(self, incident_id: str) -> None:
        """An incident begins."""

    def step_started(self, incident_id: str, step: str) -> None:
        """A lifecycle step begins."""

    def retried(self, incident_id: str, step: str, attempt: int, error: str) -> None:
        """A transient cluster error is being retried."""

    def incident_finished(self, result: IncidentResult) -> None:
        """An incident ended (completed or failed)."""

    def message(self, text: str) -> None:
        """Something the user should read (moved partial directories, signals)."""


class NullObserver:
    """Ignores everything."""

    def campaign_started(self, pending: int, skipped: int) -> None:
        """Ignored."""

    def round_started(self, incidents: int) -> None:
        """Ignored."""

    def incident_started(self, incident_id: str) -> None:
        """Ignored."""

    def step_started(self, incident_id: str, step: str) -> None:
        """Ignored."""

    def retried(self, incident_id: str, step: str, attempt: int, error: str) -> None:
        """Ignored."""

    def incident_finished(self, result: IncidentResult) -> None:
        """Ignored."""

    def message(self, text: str) -> None:
        """Ignored."""
