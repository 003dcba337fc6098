"""Traces the traced client opens outside the entry point's routes (``Tracing.side_traces``).

A load generator whose task asks the flag service for a value before (or instead of)
sending any request makes that call outside any span of its own, so its HTTP library's
client span is the root of a trace of its own and the flag service's spans are its
children. The routes' walk (``spans.SpanSource.walks``) never meets these calls: this
module says which calls a scene makes and how often, at the client's task rate (users over
think time, as ``traffic.user_rate`` counts them) times the declared share of task runs
that make one, and ``spans.SpanSource.window`` draws and walks them per bucket piece
through the same call model (``spans._call``): a flag service that is down or unreachable
fails the client span and opens no span of its own; the variant it serves is the flipped
one while a flag fault acts (``flagspans.flipped_flags``).

Their draws are keyed by ``("spans", "side", <task>, bucket, piece)``, apart from the
routes' ``("spans", "requests", ...)``, so these traces shift no other stream, and only the
kept ones cost anything (``spans._kept_ids`` below ``kept_bound``). No log line names them
(the call is made outside every span, and neither the client nor the flag service logs it
at the level the collector keeps), so the ``tracebook`` does not walk them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from r2act.cluster.sim.scene import Scene
from r2act.schema import Topology
from r2act.systems import system_of
from r2act.systems.base import Call
from r2act.systems.tracing import SideTrace, Tracing, evaluation_op


def side_call(tracing: Tracing, side: SideTrace, flipped: Mapping[str, str]) -> Call:
    """The call ``side`` makes: to the flag service, for the variant it serves now."""
    e = side.evaluation
    op = evaluation_op(e.resolve, e.flag, flipped.get(e.flag, e.off))
    return Call(tracing.flag_service, op, fatal=False, deadline_ms=side.timeout_ms)


def side_calls(
    tracing: Tracing, topology: Topology, users: int, scene: Scene, flipped: Mapping[str, str]
) -> Iterator[tuple[str, float, str, Call]]:
    """(task, calls per second, caller, call) of each side trace the scene's client makes:
    none while the client is down (it runs no task) or without a traced client."""
    origin = tracing.origin
    if origin is None or not tracing.side_traces:
        return
    view = scene.services.get(origin.deployment)
    if view is not None and not view.ready:
        return
    runs = users / system_of(topology).think_s
    for side in tracing.side_traces:
        yield side.task, runs * side.share, origin.deployment, side_call(tracing, side, flipped)
