"""Traces the traced client opens outside the entry point's routes (``Tracing.side_traces``).

A load generator whose task asks the flag service for a value before (or instead of)
sending any request makes that call outside any span of its own, so its HTTP library's
client span is the root of a trace of its own and the flag service's spans are its
children. The routes' walk (``spans.SpanSource.walks``) never meets these calls: they are
drawn here per bucket piece, at the client's task rate (users over think time, as
``traffic.user_rate`` counts them) times the declared share of task runs that make one,
and walked through the same call model (``spans._call``): a flag service that is down or
unreachable fails the client span and opens no span of its own; the variant it serves is
the flipped one while a flag fault acts (``flagspans.flipped_flags``).

Draws are keyed by ``("spans", "side", <task>, bucket, piece)``, apart from the routes'
``("spans", "requests", ...)``, so these traces shift no other stream, and only the kept
ones cost anything (``spans._kept_ids`` below ``kept_bound``). No log line names them (the
call is made outside every span, and neither the client nor the flag service logs it at
the level the collector keeps), so the ``tracebook`` does not walk them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from r2act.cluster.sim.scene import Scene
from r2act.cluster.sim.seeding import key_int
from r2act.cluster.sim.spans import SpanSource, _call, _kept_ids, _Walk
from r2act.schema.traces import Span, kept_bound
from r2act.systems import system_of
from r2act.systems.base import Call
from r2act.systems.tracing import SideTrace, evaluation_op


def side_call(source: SpanSource, side: SideTrace, flipped: dict[str, str]) -> Call:
    """The call ``side`` makes: to the flag service, for the variant it serves now."""
    tracing, e = source.tracing, side.evaluation
    op = evaluation_op(e.resolve, e.flag, flipped.get(e.flag, e.off))
    return Call(tracing.flag_service, op, fatal=False, deadline_ms=side.timeout_ms)


def side_spans(  # noqa: PLR0917 - a piece's arguments, as SpanSource._piece takes them
    source: SpanSource,
    scene: Scene,
    edges: dict[tuple[str, str], tuple[float, str]],
    key: tuple[int, int],
    bounds: tuple[float, float],
    sample: float,
    flipped: dict[str, str],
) -> Iterator[list[Span]]:
    """The kept side traces that started in one bucket piece (``bounds``), one list each."""
    tracing = source.tracing
    origin = tracing.origin
    if origin is None or not tracing.side_traces:
        return
    view = scene.services.get(origin.deployment)
    if view is not None and not view.ready:  # a client that is down runs no task
        return
    runs = source.users / system_of(source.topology).think_s
    a, b = bounds
    bound = kept_bound(sample)
    draws = random.Random()
    for side in tracing.side_traces:
        draws.seed(key_int(source.seed, "spans", "side", side.task, *key))
        call = side_call(source, side, flipped)
        for high, low in _kept_ids(draws, runs * side.share * (b - a), bound):
            trace_id = f"{high:016x}{low:016x}"
            r = random.Random(high << 64 | low)
            walk = _Walk(trace_id, scene, edges, tracing, r, source._shapes)
            walk.flipped = flipped
            _call(walk, origin.deployment, call, "", a + (b - a) * r.random())
            if walk.spans:
                walk.spans.sort(key=lambda s: s.start)
                yield walk.spans
