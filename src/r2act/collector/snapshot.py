"""One phase snapshot: logs, events, metrics, state and chaos status of a time window.

Each file is a separate retry unit: a transient error while streaming logs rewrites the log
file from the start (the temporary file is discarded), without re-reading what already
landed. Time spent *inside* cluster reads is measured apart from encoding and writing, so
the bench can say how much of a campaign is telemetry generation and how much is ours.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from r2act.cluster.base import Cluster, TraceSource
from r2act.collector import layout, store
from r2act.collector.context import CollectSettings
from r2act.errors import NotFoundError, PermanentClusterError
from r2act.quality_gate.evidence import WrittenLogs
from r2act.schema import ChaosRef, ChaosStatus, TimeWindow
from r2act.schema.rawstore import TRACES

T = TypeVar("T")
Call = Callable[[str, Callable[[], T]], T]


@dataclass
class Timer:
    """Accumulates time spent in cluster reads: wall seconds and this thread's CPU seconds.

    Both, because on a shared machine wall time inflates with other processes' load while
    CPU time does not.
    """

    seconds: float = 0.0
    cpu_seconds: float = 0.0

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` and add its duration."""
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return fn()
        finally:
            self.seconds += time.perf_counter() - wall
            self.cpu_seconds += time.thread_time() - cpu

    def iterate(self, items: Iterable[T]) -> Iterator[T]:
        """Yield from ``items``, timing only the production of each item."""
        iterator = iter(items)
        clock, cpu_clock = time.perf_counter, time.thread_time
        while True:
            wall, cpu = clock(), cpu_clock()
            try:
                item = next(iterator)
            except StopIteration:
                return
            finally:
                self.seconds += clock() - wall
                self.cpu_seconds += cpu_clock() - cpu
            yield item
            del item  # not kept alive while the next one is produced (fewer full GC passes)


def take(
    cluster: Cluster,
    *,
    directory: Path,
    window: TimeWindow,
    ref: ChaosRef,
    settings: CollectSettings,
    call: Call[int],
    timer: Timer,
    keep: Callable[[WrittenLogs], None] | None = None,
) -> int:
    """Write the five phase files into ``directory``; returns the number of log records.

    With ``settings.trace_sample`` set, a sixth: the phase's kept spans (written last, so
    the other files are read exactly as without traces). ``keep`` is handed the log lines
    of the attempt that wrote the log file."""
    with store.writing(directory):
        directory.mkdir(parents=True, exist_ok=True)
    records = call(
        "logs",
        lambda: store.write_logs(
            directory / layout.LOGS,
            timer.iterate(cluster.logs(window)),
            settings.log_level,
            keep,
        ),
    )
    call(
        "events",
        lambda: store.write_events(
            directory / layout.EVENTS, timer.call(lambda: cluster.events(window))
        ),
    )
    call(
        "metrics",
        lambda: store.write_metrics(
            directory / layout.METRICS,
            timer.iterate(cluster.metrics(window, settings.metric_queries, settings.metric_step_s)),
        ),
    )

    def state() -> int:
        store.write_json(directory / layout.STATE, timer.call(cluster.state))
        return 1

    def chaos_status() -> int:
        store.write_json(
            directory / layout.CHAOS_STATUS, timer.call(lambda: read_status(cluster, ref))
        )
        return 1

    call("state", state)
    call("chaos_status", chaos_status)
    if settings.trace_sample is not None:
        sample = settings.trace_sample
        source = traces_of(cluster)
        call(
            "traces",
            lambda: store.write_traces(
                directory / TRACES,
                timer.iterate(source.traces(window, sample)),
                settings.log_level,
            ),
        )
    return records


def traces_of(cluster: Cluster) -> TraceSource:
    """The cluster as a trace source; a target without a trace store cannot collect the
    campaign's ``traces`` section."""
    if not isinstance(cluster, TraceSource):
        raise PermanentClusterError(
            f"{type(cluster).__name__}: this target has no trace store to read spans from "
            "(remove the manifest's traces: section, or deploy one)"
        )
    return cluster


def read_status(cluster: Cluster, ref: ChaosRef) -> ChaosStatus:
    """The object's status; an object that does not exist (yet) reads as ``exists=False``."""
    try:
        return cluster.chaos_status(ref)
    except NotFoundError:
        return ChaosStatus(kind=ref.kind, name=ref.name, exists=False)
