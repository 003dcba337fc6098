"""One incident, step by step, with guaranteed removal of the fault.

preflight -> pre -> inject -> confirm_injection -> during -> remove -> verify_recovery ->
post -> complete. Every step is journalled. The chaos object is armed in the cleanup guard
before it is sent, and a ``finally`` removes it whatever happened. A ``ClusterError`` fails
the incident (and the campaign goes on); an unconfirmed injection or an unverified recovery
only downgrades its step to ``warning`` — the quality gate, not the collector, decides what
such an incident is worth. Disk errors, safety refusals and signals end the campaign.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml

from r2act.cluster.base import INCIDENT_LABEL, RUN_LABEL, Cluster, Rewindable
from r2act.collector import layout, snapshot, store
from r2act.collector.context import (
    CollectionObserver,
    CollectSettings,
    IncidentResult,
    Provenance,
)
from r2act.collector.guard import CleanupGuard
from r2act.collector.journal import Journal, Step, describe
from r2act.collector.ledger import stamp
from r2act.collector.retrying import call_with_retry
from r2act.errors import (
    ClusterError,
    ConflictError,
    DataError,
    ForeignObjectError,
    PermanentClusterError,
    SafetyError,
)
from r2act.quality_gate.evidence import WrittenLogs
from r2act.schema import PHASES, ChaosRef, Phase, PlannedIncident, TimeWindow
from r2act.schema.rawstore import LOG_FORMATS, file_digests

TRACES_FORMAT = "jsonl+zstd"
"""How ``incident.json`` names the format of the phases' ``traces.jsonl.zst``."""

T = TypeVar("T")
TIMESTAMPS = (
    "pre_start",
    "injected_at",
    "effect_confirmed_at",
    "removed_at",
    "recovered_at",
    "post_end",
)


@dataclass(frozen=True)
class Collector:
    """What every incident of a campaign shares."""

    cluster: Cluster
    settings: CollectSettings
    provenance: Provenance
    guard: CleanupGuard
    observer: CollectionObserver
    run_id: str | None = None
    """The run label stamped on every object sent (None: unstamped, as in old tests)."""


def chaos_ref(chaos: Mapping[str, Any]) -> ChaosRef:
    """The reference of a rendered object, known before it is sent."""
    meta = chaos["metadata"]
    labels = meta.get("labels", {})
    return ChaosRef(
        kind=chaos["kind"],
        name=meta["name"],
        namespace=meta["namespace"],
        incident_id=labels.get(INCIDENT_LABEL),
        run_id=labels.get(RUN_LABEL),
    )


def leftovers_message(refs: list[ChaosRef], provenance: Provenance) -> str:
    """The refusal preflight gives when r2act objects are already on the target."""
    names = ", ".join(f"{r.kind}/{r.name}" for r in refs)
    return (
        f"preflight: leftover r2act chaos objects on {provenance.fingerprint}: {names} "
        f"(run `{provenance.cleanup_command}` first)"
    )


class IncidentRun:
    """Collects one incident into its directory under ``RUN/raw``."""

    def __init__(
        self,
        collector: Collector,
        incident: PlannedIncident,
        chaos: Mapping[str, Any],
        directory: Path,
        *,
        keep_logs: bool = False,
    ) -> None:
        self.c = collector
        self.cluster = collector.cluster
        self.clock = collector.cluster.clock
        self.incident = incident
        self.chaos = chaos
        run = collector.run_id
        self.sent = chaos if run is None else stamp(chaos, run)
        self.directory = directory
        self.ref = chaos_ref(self.sent)
        self.timestamps: dict[str, float | None] = dict.fromkeys(TIMESTAMPS)
        self.windows: dict[Phase, TimeWindow] = {}
        self.timer = snapshot.Timer()
        self.log_records = 0
        self.written: dict[Phase, WrittenLogs] = {}
        """With ``keep_logs``, each phase's log lines as written, for judging the incident
        without parsing them back."""
        self._keep_logs = keep_logs
        self._sleep = collector.settings.backoff_sleep or self.clock.sleep

    def run(self) -> IncidentResult:
        """Run every step; returns completed or failed, raises only what ends the campaign."""
        wall = time.perf_counter()
        with store.writing(self.directory):
            self.directory.mkdir(parents=True)
        self.journal = Journal(self.directory / layout.JOURNAL, self.clock)
        status: Literal["completed", "failed"] = "failed"
        error: str | None = None
        try:
            self._write_incident()
            chaos_text = yaml.safe_dump(dict(self.chaos), sort_keys=False)
            store.write_bytes(self.directory / layout.CHAOS_YAML, chaos_text.encode())
            self._steps()
            status = "completed"
        except ClusterError as failure:
            error = describe(failure)
        finally:
            try:
                if self.c.guard.is_armed(self.ref):
                    self._cleanup()
            finally:  # a signal or an adapter bug in the cleanup must not leak the file
                self.journal.close()
        return IncidentResult(
            incident_id=self.incident.id,
            status=status,
            error=error,
            log_records=self.log_records,
            wall_s=time.perf_counter() - wall,
            generation_s=self.timer.seconds,
            generation_cpu_s=self.timer.cpu_seconds,
        )

    def _steps(self) -> None:
        phases = self.incident.phases
        if isinstance(self.cluster, Rewindable):
            # a redone incident starts from the state its first attempt started from
            self.cluster.rewind_to("collect", self.incident.id)
        self._preflight()
        with self._step("pre") as step:
            start = self.clock.now()
            self.timestamps["pre_start"] = start
            self.clock.sleep(phases.pre_s)
            self._snapshot(step, "pre", TimeWindow(start, start + phases.pre_s))
        self._inject()
        self._confirm()
        with self._step("during") as step:
            start = self.timestamps["injected_at"] or self.clock.now()
            end = start + phases.during_s
            if (remaining := end - self.clock.now()) > 0:
                self.clock.sleep(remaining)
            self._snapshot(step, "during", TimeWindow(start, end))
        with self._step("remove") as step, self.c.guard.shielded():
            self._remove(step)  # shielded: a Ctrl-C now waits until the fault is gone
        self.c.guard.raise_if_interrupted()
        self._verify_recovery()
        with self._step("post") as step:
            start = self.clock.now()
            self.clock.sleep(phases.post_s)
            self._snapshot(step, "post", TimeWindow(start, start + phases.post_s))
            self.timestamps["post_end"] = start + phases.post_s
        with self._step("complete"):
            self._write_incident()
            done = {
                "completed_at": self.clock.now(),
                "log_records": self.log_records,
                "sha256": file_digests(self.directory),  # checked by the audit
            }
            text = json.dumps(done, sort_keys=True) + "\n"
            store.write_bytes(self.directory / layout.COMPLETE, text.encode())

    @contextmanager
    def _step(self, name: str) -> Iterator[Step]:
        self.c.observer.step_started(self.incident.id, name)
        with self.journal.step(name) as step:
            yield step

    def _call(self, step: Step, call: str, fn: Callable[[], T]) -> T:
        def on_retry(attempt: int, error: BaseException) -> None:
            self.journal.retry(step, call, attempt, error)
            self.c.observer.retried(self.incident.id, step.name, attempt, describe(error))

        return call_with_retry(
            fn, policy=self.c.settings.retry, sleep=self._sleep, on_retry=on_retry
        )

    def _preflight(self) -> None:
        settings = self.c.settings
        with self._step("preflight") as step:
            deadline = self.clock.now() + settings.preflight_timeout_s
            while True:
                report = self._call(
                    step, "preflight", lambda: self.cluster.preflight(settings.metric_queries)
                )
                if report.leftovers:
                    raise SafetyError(leftovers_message(report.leftovers, self.c.provenance))
                if report.ok:
                    return
                if self.clock.now() >= deadline:
                    raise PermanentClusterError("preflight: " + "; ".join(report.problems()))
                self.clock.sleep(settings.health_interval_s)

    def _snapshot(self, step: Step, phase: Phase, window: TimeWindow) -> None:
        self.windows[phase] = window

        def call(name: str, fn: Callable[[], int]) -> int:
            return self._call(step, name, fn)

        self.log_records += snapshot.take(
            self.cluster,
            directory=self.directory / phase,
            window=window,
            ref=self.ref,
            settings=self.c.settings,
            call=call,
            timer=self.timer,
            keep=functools.partial(self.written.__setitem__, phase) if self._keep_logs else None,
        )

    def _inject(self) -> None:
        with self._step("inject") as step:
            tried = False

            def inject() -> ChaosRef:
                nonlocal tried
                try:
                    return self.cluster.inject(self.sent)
                except ConflictError as error:
                    if tried:  # an earlier attempt reached the API before failing
                        return self.ref
                    # The name is taken by an object this run did not create: never
                    # remove it, stop this incident.
                    self.c.guard.disarm(self.ref)
                    raise ConflictError(
                        f"{error}; it was not created by this run, r2act leaves it alone "
                        "(find its owner with kubectl get -o yaml)"
                    ) from None
                finally:
                    tried = True

            self.c.guard.arm(self.ref)
            self.ref = self._call(step, "inject", inject)
            self.c.guard.arm(self.ref)
            self.timestamps["injected_at"] = self.clock.now()

    def _confirm(self) -> None:
        settings = self.c.settings
        with self._step("confirm_injection") as step:
            deadline = self.clock.now() + settings.confirm_timeout_s
            while True:
                status = self._call(
                    step, "chaos_status", lambda: snapshot.read_status(self.cluster, self.ref)
                )
                pods = self._call(step, "pod_names", self.cluster.pod_names)
                if status.injected(pods):
                    self.timestamps["effect_confirmed_at"] = self.clock.now()
                    return
                if status.failed():
                    step.warn("chaos status reports a failed injection")
                    return
                if self.clock.now() >= deadline:
                    step.warn(f"injection not confirmed within {settings.confirm_timeout_s:g}s")
                    return
                self.clock.sleep(settings.confirm_interval_s)

    def _remove(self, step: Step) -> None:
        timeout = self.c.settings.remove_timeout_s
        try:
            self._call(step, "remove", lambda: self.cluster.remove(self.ref, timeout))
        except ForeignObjectError as error:
            step.warn(str(error))  # ours is not there; the same-named object is not touched
        self.c.guard.disarm(self.ref)
        self.timestamps["removed_at"] = self.clock.now()

    def _cleanup(self) -> None:
        """Remove the fault after a failure or a signal; never raises a cluster error."""
        with self.c.guard.shielded():
            try:
                with self.journal.step("cleanup") as step:
                    self._remove(step)
            except ClusterError:
                self._forget_if_gone()
            except DataError:
                pass  # the journal is unwritable; the guard still holds the object if needed

    def _forget_if_gone(self) -> None:
        try:
            present = {(r.kind, r.name) for r in self.cluster.leftovers()}
        except ClusterError:
            return
        if (self.ref.kind, self.ref.name) not in present:
            self.c.guard.disarm(self.ref)

    def _verify_recovery(self) -> None:
        settings = self.c.settings
        timeout = self.incident.phases.recovery_timeout_s
        with self._step("verify_recovery") as step:
            deadline = self.clock.now() + timeout
            streak, first = 0, None
            while True:
                report = self._call(step, "health", self.cluster.health)
                if report.healthy:
                    streak, first = streak + 1, first if first is not None else report.ts
                    if streak >= settings.health_consecutive:
                        self.timestamps["recovered_at"] = first
                        return
                else:
                    streak, first = 0, None
                if self.clock.now() >= deadline:
                    step.warn(f"not healthy within {timeout}s: {report.detail or 'unhealthy'}")
                    return
                self.clock.sleep(settings.health_interval_s)

    def _write_incident(self) -> None:
        p = self.c.provenance
        formats = {"logs": LOG_FORMATS[layout.LOGS]}
        sample = self.c.settings.trace_sample
        if sample is not None:
            formats["traces"] = TRACES_FORMAT
        document = {
            "incident": self.incident.model_dump(mode="json"),
            "chaos": self.chaos,
            "tool_version": p.tool_version,
            "manifest_sha256": p.manifest_sha256,
            "target": {
                "kind": p.target_kind,
                "fingerprint": p.fingerprint,
                "namespace": p.namespace,
                "seed": p.target_seed,
                "noise": p.noise,
            },
            "campaign": p.campaign,
            "load": dict(p.load),
            "timestamps": self.timestamps,
            "windows": {ph: list(self.windows[ph]) for ph in PHASES if ph in self.windows},
            "formats": formats,
        }
        if sample is not None:  # absent without traces: such an incident.json is unchanged
            traces: dict[str, float | str] = {"sample": sample}
            store_at = getattr(self.cluster, "trace_store", None)
            if isinstance(store_at, str):  # a real cluster's store; the simulator has none
                traces["store"] = store_at
            document["traces"] = traces
        if p.lane is not None:
            document["lane"] = dict(p.lane)
        store.write_json(self.directory / layout.INCIDENT_JSON, document)
