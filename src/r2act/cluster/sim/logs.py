"""Streaming log generation: one pod, one 10-second bucket at a time.

Conditions are read off the scene at the midpoint of each bucket piece (buckets are split
at the history's change points), so the simulator's time resolution for gradual
conditions is one bucket while a fault never shows before it starts. Each (pod, bucket
piece) has its own seeded generator, so a window's lines do not depend on which windows
were read before, and memory holds one batch, never a whole incident.

When traces are collected, the pods' loggers take the trace context of their lines from
a ``tracebook.TraceBook`` (the cluster gives it the timelines and scenes, and this module
its ``service`` lookup: the book walks spans, which import this module's buckets).
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping
from itertools import accumulate, pairwise
from operator import itemgetter

from r2act.cluster.sim.loadgen import locust_table
from r2act.cluster.sim.podlogs import PodLogger
from r2act.cluster.sim.relaylogs import relay_of
from r2act.cluster.sim.scene import Scene
from r2act.cluster.sim.seeding import Reseeder
from r2act.cluster.sim.timeline import PodTimeline
from r2act.schema import LogLine, TimeWindow, Topology
from r2act.systems.render import NO_TRACES, Render, TraceIds

BUCKET_S = 10.0
LOCUST_PERIOD_S = 2.0
BATCH_LINES = 1000
_BY_TS = itemgetter(0)
Failed = Callable[[float, float], Mapping[str, float]]
"""(start, end) -> the users' failed requests per route scope in [start, end)."""


def poisson(r: random.Random, mean: float) -> int:
    """A Poisson draw (normal approximation above 30, Knuth's method below)."""
    if mean <= 0:
        return 0
    if mean > 30:
        return max(0, round(r.gauss(mean, math.sqrt(mean))))
    limit, k, p = math.exp(-mean), 0, r.random()
    while p > limit:
        k += 1
        p *= r.random()
    return k


class LogSource:
    """Builds and caches one ``PodLogger`` per pod; renders windows lazily."""

    def __init__(
        self,
        topology: Topology,
        seed: int,
        users: int,
        scale: float,
        traces: Callable[[str], TraceIds] | None = None,
    ) -> None:
        self.topology, self.seed, self.users, self.scale = topology, seed, users, scale
        self.traces = traces
        """Deployment -> where its lines take their trace context from (the cluster's
        ``tracebook.TraceBook.service``); None: traces are not collected, lines keep their
        draws."""
        self._loggers: dict[str, PodLogger] = {}
        self._reseed = Reseeder(seed, "logs")
        """Re-seeds one generator for every (pod, bucket piece): the same draws as a fresh
        generator of its key, without building one each time nor formatting the seed and
        the stream's name into every key (the renderers use it only while called)."""
        self._rates: dict[str, tuple[object, object, object, float, _Rates | None]] = {}
        """Per pod, its rates in the last scene it was rendered in, with what they came from."""
        self._relay = relay_of(topology, seed=seed, users=users, scale=scale, traces=self.traces_of)
        """The system's log relay (``relaylogs``), None for most systems."""

    def traces_of(self, app: str) -> TraceIds:
        """Where ``app``'s lines take their trace context from."""
        return self.traces(app) if self.traces is not None else NO_TRACES

    def logger(self, line: PodTimeline) -> PodLogger:
        """The pod's logger (templates filled once)."""
        pod = line.pod
        found = self._loggers.get(pod.name)
        if found is None:
            container = self.topology.deployment(pod.app).main.name
            found = PodLogger(
                self.topology,
                pod.name,
                pod.app,
                container,
                seed=self.seed,
                users=self.users,
                traces=self.traces_of(pod.app),
            )
            self._loggers[pod.name] = found
        return found

    def window(
        self,
        window: TimeWindow,
        timelines: dict[str, PodTimeline],
        scene_at: Callable[[float], Scene],
        cuts: list[float],
        failed: Failed,
    ) -> Iterator[list[LogLine]]:
        """Every pod's lines in ``window``, in batches of roughly ``BATCH_LINES``.

        A bucket is split at the history's change points (``cuts``: injections, removals,
        pod starts...), so a condition never leaks across its start or end. ``failed``
        gives the users' failed requests per route between two instants (the load
        generator's cumulative counters, ``loadgen.FailedSince``)."""
        start, end = window
        if end < start:
            return
        batch: list[LogLine] = []
        names = sorted(timelines)
        silent = {name: timelines[name].silent() for name in names}
        for bucket in range(math.floor(start / BUCKET_S), math.floor(end / BUCKET_S) + 1):
            lo = bucket * BUCKET_S
            hi = lo + BUCKET_S
            for index, (a, b) in enumerate(pieces(lo, hi, cuts)):
                scene = scene_at((a + b) / 2)
                for name in names:
                    line = timelines[name]
                    pod = line.pod
                    if pod.created_at >= b or (pod.deleted_at is not None and pod.deleted_at <= a):
                        continue
                    lines = self._piece(line, (bucket, index), (a, b), scene, failed)
                    if self._relay is not None and pod.app == self._relay.deployment:
                        span = ((bucket, index), (a, b))
                        lines = self._relayed(line, timelines, scene, lines, span)
                    if _clean(line, a, b) and start <= a and b + 5.0 <= end:
                        batch.extend(lines)
                    else:
                        _keep(batch, lines, start, end, silent[name])
            if len(batch) >= BATCH_LINES:
                yield batch
                batch = []
        if batch:
            yield batch

    def _relayed(
        self,
        line: PodTimeline,
        timelines: dict[str, PodTimeline],
        scene: Scene,
        own: list[LogLine],
        span: tuple[tuple[int, int], tuple[float, float]],
    ) -> list[LogLine]:
        """The relay pod's own lines and those its sources send it in the bucket piece
        ``span`` (its key, its bounds), sorted."""
        assert self._relay is not None
        to = self.logger(line)
        key, bounds = span
        relayed = self._relay.piece(
            to, timelines, scene, key=key, span=bounds, hooks=(_starts, poisson)
        )
        merged = own + relayed
        merged.sort(key=_BY_TS)
        return merged

    def _piece(
        self,
        line: PodTimeline,
        key: tuple[int, int],
        span: tuple[float, float],
        scene: Scene,
        failed: Failed,
    ) -> list[LogLine]:
        lo, hi = span
        logger = self.logger(line)
        bucket, index = key
        r = self._reseed(f"{line.pod.name}|{bucket}|{index}")  # key_int's text of the key
        out: list[LogLine] = []
        view = scene.services.get(line.pod.app)
        ready = view.ready if view is not None else []
        share = 1.0 / len(ready) if line.pod.name in ready else 0.0
        rates = self._rates_in(logger, scene, share)
        width = hi - lo
        if rates is not None and width > 0:
            cum, renders, total = rates
            n = poisson(r, total * width)
            rand = r.random
            times = [lo + width * rand() for _ in range(n)]
            times.sort()
            for ts in times:
                renders[bisect_right(cum, rand() * total)](ts, r, out)
        for ts in _starts(line, lo, hi):
            logger.startup(ts, out)
        if line.pod.app == self.topology.load_generator:
            first = math.ceil(lo / LOCUST_PERIOD_S)
            last = math.ceil(hi / LOCUST_PERIOD_S)
            ticks = [k * LOCUST_PERIOD_S for k in range(first, last)]
            locust_table(logger, scene, ticks, line.pod.created_at, out, failed=failed)
        out.sort(key=_BY_TS)
        return out

    def _rates_in(self, logger: PodLogger, scene: Scene, share: float) -> _Rates | None:
        """The pod's cumulative rates and renderers in ``scene`` (None: it writes nothing).

        A stretch between change points has one scene, shallow-copied per instant, so
        consecutive pieces of a pod mostly read the same traffic tables: what the pod
        writes is then what it wrote in the previous piece. The memo keeps the tables it
        was computed from (so they cannot be freed and their identity reused)."""
        known = self._rates.get(logger.pod)
        if (
            known is not None
            and known[0] is scene.served
            and known[1] is scene.call_errors
            and known[2] is scene.routes
            and known[3] == share
        ):
            return known[4]
        kinds = logger.kinds(scene, share, self.scale)
        rates: _Rates | None = None
        if kinds:
            cum = list(accumulate(k[0] for k in kinds))
            rates = (cum, [k[2] for k in kinds], cum[-1])
        self._rates[logger.pod] = (scene.served, scene.call_errors, scene.routes, share, rates)
        return rates


_Rates = tuple[list[float], list[Render], float]
"""Cumulative occurrence rates of a pod's kinds of line, their renderers, and the total."""


def pieces(lo: float, hi: float, cuts: list[float]) -> list[tuple[float, float]]:
    """[lo, hi) split at the change points strictly inside it."""
    inside = cuts[bisect_right(cuts, lo) : bisect_left(cuts, hi)]
    bounds = [lo, *inside, hi]
    return [(a, b) for a, b in pairwise(bounds) if b > a]


def piece_mid(t: float, cuts: list[float]) -> float:
    """Midpoint of the bucket piece holding ``t``: the instant whose scene stands for ``t``."""
    lo = math.floor(t / BUCKET_S) * BUCKET_S
    for a, b in pieces(lo, lo + BUCKET_S, cuts):
        if a <= t < b:
            return (a + b) / 2
    return lo + BUCKET_S / 2


def _starts(line: PodTimeline, lo: float, hi: float) -> list[float]:
    starts = [line.pod.created_at + 1.0] + [t for t, _ in line.restarts]
    return [t + 0.2 for t in starts if lo <= t + 0.2 < hi and not line.paused(t + 0.2)]


def _clean(line: PodTimeline, lo: float, hi: float) -> bool:
    """No fault, creation or deletion inside [lo, hi): every line may stay."""
    pod = line.pod
    if pod.created_at > lo or (pod.deleted_at is not None and pod.deleted_at < hi):
        return False
    return not any(a.start < hi and a.end > lo for a in line.faults)


def _keep(
    out: list[LogLine],
    lines: list[LogLine],
    start: float,
    end: float,
    silent: list[tuple[float, float]],
) -> None:
    """Append the ``lines`` (sorted by time) in [start, end] and outside ``silent``.

    Sorted lines make each bound a bisection and each kept run one slice, instead of a test
    per line."""
    lo = bisect_left(lines, start, key=_BY_TS)
    hi = bisect_right(lines, end, lo, key=_BY_TS)
    cuts = sorted(
        (bisect_left(lines, s, lo, hi, key=_BY_TS), bisect_left(lines, e, lo, hi, key=_BY_TS))
        for s, e in silent
    )
    for cut_lo, cut_hi in cuts:
        if cut_lo > lo:
            out += lines[lo:cut_lo]
        lo = max(lo, cut_hi)
    if hi > lo:
        out += lines[lo:hi]
