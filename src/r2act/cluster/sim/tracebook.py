"""The trace context of log lines: the ids of the kept traces' spans the lines are written in.

Logs are drawn as a rate mixture per pod and bucket piece (``logs``), spans one kept
request at a time (``spans``); a line that carries a trace context must still name a
span that exists when its request is one the trace store keeps. The book answers, for a
line of a service in the current bucket piece, which (trace id, span id) it carries:

- The line's renderer draws ids per occurrence anyway (its own generator, so nothing else
  it draws moves). The sampler's rule on that draw (its lower 64 bits below
  ``schema.traces.kept_bound``) decides whether the line belongs to a kept request, so
  the kept share of lines is the sample rate, as on a real cluster, where sampling only
  decides which traces are stored, not which requests log.
- A kept line takes the ids of a kept trace whose span in the line's service is the one
  the line asks for (``systems.render.SpanAsk``: the handler span of an operation, the
  handler span whose call to a callee failed, a client's task span) with a consistent
  status: of those in the line's bucket, the one starting nearest the line; if the bucket
  has none, the nearest in the closest buckets around it, up to ``SEARCH_BUCKETS`` away
  (at a low rate, or a low sample rate, a bucket often holds no kept request of a kind,
  while its lines still need one for the kept share to be the sample rate). If none
  matches, the line keeps its draw with the lower half moved above the bound: a request
  the store does not hold.
- Any other line keeps its draw: an id the sampler drops, never one of a stored trace.

The kept traces are those ``SpanSource`` walks for the spans (the same pieces, keys and
walks: ``SpanSource.walks`` with marks), computed once per bucket on the first line that
asks (a few buckets stay cached, as lines come in time order), so a bucket no traced line
asks about costs nothing, and no request the store does not keep is ever walked. Lines
rarely match spans one to one: a bucket's lines and its kept traces are independent
draws of the same rates, so a span may be named by two lines or by none, and a line may
name a span up to ``SEARCH_BUCKETS`` buckets away from it.

The book names no service: which lines carry a context, and which span they ask for, is
the system's (its renderers call ``TraceIds.ids``).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable

from r2act.cluster.sim.flagspans import flipped_flags
from r2act.cluster.sim.logs import BUCKET_S, pieces
from r2act.cluster.sim.scene import Scene
from r2act.cluster.sim.spans import Mark, SpanSource
from r2act.cluster.sim.timeline import PodTimeline
from r2act.schema import TimeWindow, Topology
from r2act.schema.traces import kept_bound
from r2act.systems.render import SpanAsk, TraceIds

SEARCH_BUCKETS = 6
"""How many buckets (10 s each) away from its line a kept line's span may start, when its
own bucket has none that matches. A parameter of the simulation, not of a cluster: one
minute keeps the kept share of lines near the sample rate for any operation served about
once a minute or more at the campaigns' rates, while a line stays within a minute of the
request it names."""
_CACHED = 2 * SEARCH_BUCKETS + 2
"""Buckets whose index is kept (the search's reach on both sides of the current one)."""
_Key = tuple[str, str, str, bool | None]
"""(deployment, what, name, error) of a ``SpanAsk`` asked by a deployment's line."""
_Found = tuple[list[float], list[tuple[str, str]]]
"""The starts (sorted) and (trace id, span id) of the spans answering one key."""
_FULL = 1 << 64


class TraceBook:
    """The kept traces around the lines being rendered, indexed by the spans lines ask for."""

    def __init__(self, topology: Topology, seed: int, users: int, sample: float) -> None:
        self.sample = sample
        self.bound = kept_bound(sample)
        self._spans = SpanSource(topology, seed, users)
        """A source of its own: its generator and caches never touch the span window's."""
        self._timelines: dict[str, PodTimeline] = {}
        self._scene_at: Callable[[float], Scene] | None = None
        self._cuts: list[float] = []
        self._window = TimeWindow(0.0, 0.0)
        self._buckets: dict[int, dict[_Key, _Found]] = {}
        self._services: dict[str, ServiceTraces] = {}

    def use(
        self,
        timelines: dict[str, PodTimeline],
        scene_at: Callable[[float], Scene],
        cuts: list[float],
        window: TimeWindow,
    ) -> None:
        """What the spans are walked on: every pod's timeline (as for the spans: a pod
        whose logs are gone still shaped the calls), the scenes and the change points; and
        the window whose lines are rendered next: a line names only a span that starts in
        it, as the trace store's copy of the window holds only those."""
        self._timelines, self._scene_at, self._cuts = timelines, scene_at, cuts
        self._window = window
        self._buckets.clear()

    def service(self, deployment: str) -> ServiceTraces:
        """The trace context of ``deployment``'s lines (one object per deployment)."""
        found = self._services.get(deployment)
        if found is None:
            found = self._services[deployment] = ServiceTraces(self, deployment)
        return found

    def ids(
        self, deployment: str, ask: SpanAsk, ts: float, drawn: tuple[str, str]
    ) -> tuple[str, str]:
        """(trace id, span id) of ``deployment``'s line at ``ts`` (see the module)."""
        trace_id = drawn[0]
        low = int(trace_id[16:], 16)
        if low >= self.bound:
            return drawn
        key = (deployment, *ask)
        bucket = math.floor(ts / BUCKET_S)
        window = self._window
        first, last = math.floor(window.start / BUCKET_S), math.floor(window.end / BUCKET_S)
        for away in range(SEARCH_BUCKETS + 1):
            best: tuple[float, tuple[str, str]] | None = None
            for near in (bucket - away, bucket + away) if away else (bucket,):
                found = self._indexed(near).get(key) if first <= near <= last else None
                if found is not None:
                    made = _nearest(found, ts, window)
                    if made is not None and (best is None or made[0] < best[0]):
                        best = made
            if best is not None:
                return best[1]
        if self.bound >= _FULL:
            return drawn  # everything is kept: no id is outside the store's
        moved = self.bound + low % (_FULL - self.bound)
        return f"{trace_id[:16]}{moved:016x}", drawn[1]

    def _indexed(self, bucket: int) -> dict[_Key, _Found]:
        found = self._buckets.get(bucket)
        if found is None:
            found = self._buckets[bucket] = self._index(bucket)
            while len(self._buckets) > _CACHED:
                del self._buckets[next(iter(self._buckets))]
        return found

    def _index(self, bucket: int) -> dict[_Key, _Found]:
        """The bucket's kept traces' marked spans, by every key that asks for them."""
        if self._scene_at is None:
            return {}
        source, marks = self._spans, list[Mark]()
        spans: dict[str, tuple[float, bool]] = {}
        lo = bucket * BUCKET_S
        for index, (a, b) in enumerate(pieces(lo, lo + BUCKET_S, self._cuts)):
            scene = self._scene_at((a + b) / 2)
            edges = source.edges_of(scene, self._timelines)
            flipped = flipped_flags(self._timelines, (a + b) / 2)
            key, bounds = (bucket, index), (a, b)
            walks = source.walks(scene, edges, key, bounds, self.sample, marks, flipped=flipped)
            for walk in walks:
                for span in walk.spans:
                    spans[span.span_id] = (span.start, span.status == "error")
        return _by_key(marks, spans)


def _by_key(marks: list[Mark], spans: dict[str, tuple[float, bool]]) -> dict[_Key, _Found]:
    """The marked spans (start, error) by every key that asks for them."""
    found: dict[_Key, list[tuple[float, str, str]]] = {}
    for trace_id, deployment, what, name, span_id in marks:
        known = spans.get(span_id)
        if known is None:
            continue
        start, error = known
        for named in (name, "*") if what == "op" else (name,):
            for status in (error, None):
                found.setdefault((deployment, what, named, status), []).append(
                    (start, trace_id, span_id)
                )
    index: dict[_Key, _Found] = {}
    for k, rows in found.items():
        rows.sort()
        index[k] = ([row[0] for row in rows], [(row[1], row[2]) for row in rows])
    return index


def _nearest(found: _Found, ts: float, window: TimeWindow) -> tuple[float, tuple[str, str]] | None:
    """(how far, ids) of the span starting nearest ``ts`` in ``window`` (None: none)."""
    starts, ids = found
    lo, hi = bisect_left(starts, window.start), bisect_right(starts, window.end)
    if lo >= hi:
        return None
    at = min(max(bisect_left(starts, ts, lo, hi), lo), hi)
    if at == hi or (at > lo and ts - starts[at - 1] <= starts[at] - ts):
        at -= 1
    return abs(starts[at] - ts), ids[at]


class ServiceTraces(TraceIds):
    """One deployment's view of the book (what its pods' loggers hold)."""

    def __init__(self, book: TraceBook, deployment: str) -> None:
        self.book, self.deployment = book, deployment

    def ids(self, ask: SpanAsk, ts: float, drawn: tuple[str, str]) -> tuple[str, str]:
        return self.book.ids(self.deployment, ask, ts, drawn)
