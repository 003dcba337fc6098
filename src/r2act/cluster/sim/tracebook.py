"""The trace context of log lines: the ids of the kept traces' spans the lines are written in.

Logs are drawn as a rate mixture per pod and bucket piece (``logs``), spans one kept
request at a time (``spans``); a line that carries a trace context must still name a
span that exists when its request is one the trace store keeps. The book answers, for a
line of a service in the current bucket piece, which (trace id, span id) it carries:

- The line's renderer draws ids per occurrence anyway (its own generator, so nothing else
  it draws moves). The sampler's rule on that draw (its lower 64 bits below
  ``schema.traces.kept_bound``) decides whether the line belongs to a kept request, as
  on a real cluster, where sampling only decides which traces are stored, not which
  requests log.
- A kept line takes the ids of a kept trace whose span in the line's service is the one
  the line asks for (``systems.render.SpanAsk``: the handler span of an operation, the
  handler span whose call to a callee failed, a client's task span) with a consistent
  status, of those starting in the line's own bucket piece, the one starting nearest the
  line; and the line moves into the middle half of that span (``placed``; where, its own
  draw says, so two lines of one span stay apart), so it is written while
  its span runs and stays in its piece (each piece's lines are sorted on their own, so the
  pod's stream stays in time order). If none matches, the line keeps its time and its draw
  with the lower half moved above the bound: a request the store does not hold. A rare
  kind's piece often holds no kept request of it, so its lines name stored traces less
  often than the sample rate says (measured: the catalog's lookups 0.75 of the rate, all
  lines 0.50, ``tests/unit/sim/test_sim_trace_log_ids.py``); a line far from its span, as
  a search of the buckets around it gave before, would be worse: no method could trust a
  line's time against its span's.
- Any other line keeps its draw: an id the sampler drops, never one of a stored trace.

The kept traces are those ``SpanSource`` walks for the spans (the same pieces, keys and
walks: ``SpanSource.walks`` with marks), computed once per bucket on the first line that
asks (a few buckets stay cached, as lines come in time order), so a bucket no traced line
asks about costs nothing, and no request the store does not keep is ever walked. Lines
rarely match spans one to one: a piece's lines and its kept traces are independent draws of
the same rates, so a span may be named by two lines or by none.

The book names no service: which lines carry a context, and which span they ask for, is
the system's (its renderers call ``TraceIds.placed``).
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

EDGE_S = 1.0
"""How far inside the window a line must be drawn, and its span start, for the line to
move to its span: the collector prints a record up to a fraction of a second after its
time, so a line moved near the edge could print in the next window, whose read leaves it
where it was drawn (a parameter of the simulation: no cluster has it)."""
_CACHED = 4
"""Buckets whose index is kept (lines come in time order, so the current one and a few
before it are all that is asked again)."""
_Key = tuple[str, str, str, bool | None]
"""(deployment, what, name, error) of a ``SpanAsk`` asked by a deployment's line."""
_Found = tuple[list[float], list[tuple[str, str, float]]]
"""The starts (sorted) and (trace id, span id, end) of the spans answering one key."""
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

    def placed(
        self, deployment: str, ask: SpanAsk, ts: float, drawn: tuple[str, str]
    ) -> tuple[str, str, float]:
        """(trace id, span id, time) of ``deployment``'s line drawn at ``ts`` (see the
        module): a kept line moves into the span it names, to a point of its middle half
        its own draw picks (two lines of one span are written apart)."""
        trace_id = drawn[0]
        low = int(trace_id[16:], 16)
        if low >= self.bound:
            return (*drawn, ts)
        window = self._window
        inner = TimeWindow(window.start + EDGE_S, window.end - EDGE_S)
        bucket = math.floor(ts / BUCKET_S)
        lo = bucket * BUCKET_S
        piece = next(
            ((a, b) for a, b in pieces(lo, lo + BUCKET_S, self._cuts) if a <= ts < b),
            (lo, lo + BUCKET_S),
        )
        reach = TimeWindow(max(piece[0], inner.start), min(piece[1], inner.end))
        found = None
        if inner.start <= ts <= inner.end:  # a line at a window's edge keeps its time
            found = self._indexed(bucket).get((deployment, *ask))
        made = _nearest(found, ts, reach) if found is not None else None
        if made is not None:
            span_start, (kept_trace, span_id, span_end) = made
            inside = 0.25 + 0.5 * int(drawn[1], 16) / _FULL  # the line's own draw: apart
            at = span_start + (span_end - span_start) * inside
            return kept_trace, span_id, min(at, math.nextafter(reach.end, -math.inf))
        if self.bound >= _FULL:
            return (*drawn, ts)  # everything is kept: no id is outside the store's
        moved = self.bound + low % (_FULL - self.bound)
        return f"{trace_id[:16]}{moved:016x}", drawn[1], ts

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
        spans: dict[str, tuple[float, bool, float]] = {}
        lo = bucket * BUCKET_S
        for index, (a, b) in enumerate(pieces(lo, lo + BUCKET_S, self._cuts)):
            scene = self._scene_at((a + b) / 2)
            edges = source.edges_of(scene, self._timelines)
            flipped = flipped_flags(self._timelines, (a + b) / 2)
            key, bounds = (bucket, index), (a, b)
            walks = source.walks(scene, edges, key, bounds, self.sample, marks, flipped=flipped)
            for walk in walks:
                for span in walk.spans:
                    end = span.start + span.duration_s
                    spans[span.span_id] = (span.start, span.status == "error", end)
        return _by_key(marks, spans)


def _by_key(marks: list[Mark], spans: dict[str, tuple[float, bool, float]]) -> dict[_Key, _Found]:
    """The marked spans (start, error, end) by every key that asks for them."""
    found: dict[_Key, list[tuple[float, str, str, float]]] = {}
    for trace_id, deployment, what, name, span_id in marks:
        known = spans.get(span_id)
        if known is None:
            continue
        start, error, end = known
        for named in (name, "*") if what == "op" else (name,):
            for status in (error, None):
                found.setdefault((deployment, what, named, status), []).append(
                    (start, trace_id, span_id, end)
                )
    index: dict[_Key, _Found] = {}
    for k, rows in found.items():
        rows.sort()
        index[k] = ([row[0] for row in rows], [(row[1], row[2], row[3]) for row in rows])
    return index


def _nearest(
    found: _Found, ts: float, window: TimeWindow
) -> tuple[float, tuple[str, str, float]] | None:
    """(start, (trace id, span id, end)) of the span starting nearest ``ts`` in ``window``
    (None: none starts in it)."""
    starts, ids = found
    lo, hi = bisect_left(starts, window.start), bisect_right(starts, window.end)
    if lo >= hi:
        return None
    at = min(max(bisect_left(starts, ts, lo, hi), lo), hi)
    if at == hi or (at > lo and ts - starts[at - 1] <= starts[at] - ts):
        at -= 1
    return starts[at], ids[at]


class ServiceTraces(TraceIds):
    """One deployment's view of the book (what its pods' loggers hold)."""

    def __init__(self, book: TraceBook, deployment: str) -> None:
        self.book, self.deployment = book, deployment

    def placed(self, ask: SpanAsk, ts: float, drawn: tuple[str, str]) -> tuple[str, str, float]:
        return self.book.placed(self.deployment, ask, ts, drawn)
