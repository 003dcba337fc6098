"""Feature-flag evaluations in the simulated request trees: the calls a handler makes to the
flag service, and the variant that service serves at the time.

A system declares, per (deployment, operation), the flags its handler evaluates over the
network on every request (``Tracing.evaluations``); a provider that caches its answers makes
no call after the first and declares none. The walk (``cluster/sim/spans._handle``) makes
each evaluation a call of its own to the flag service (``Tracing.flag_service``) at the start
of the handler, before its other calls and whatever its outcome: the evaluation is what
decides it. The call is never fatal (an OpenFeature SDK returns the default value when its
provider fails), so a flag service that is down or unreachable shows as the evaluating
service's failed client span and no span of the flag service, while the handler goes on.

The call's operation names the variant the flag service serves (``evaluation_op``): the
one a flag fault flipped it to while that fault acts on the flag's reader (the same
interval its effect acts in, ``timeline.PodTimeline.active``), else the flag's own. Which
attributes carry it is the system's declaration (its flag service's instrumentation); this
module names no flag, no service and no attribute.

An evaluation whose client injects no trace context (``FlagEvaluation.propagated`` false:
its gRPC library is not instrumented) opens no span of the caller's; the flag service's
spans of it root a trace of their own (``detached_calls``, walked by ``spans._detached``),
while the caller still waits for the answer.

A handler's other calls that only traces show (``Tracing.handler_calls``: a database write
the load model leaves out) are walked the same way, after the evaluations.
"""

from __future__ import annotations

from collections.abc import Mapping

from r2act.cluster.sim.timeline import PodTimeline
from r2act.schema.faults import FLAG_FAULT_KIND
from r2act.systems.base import Call
from r2act.systems.tracing import FlagEvaluation, HandlerCall, Tracing, evaluation_op


def flipped_flags(timelines: Mapping[str, PodTimeline], t: float) -> dict[str, str]:
    """Flag key -> the variant a flag fault makes the flag service serve at ``t``: read from
    the faults acting on the pods of the flag's readers (a flag fault acts on every pod of
    its reader from the moment the flag service serves the flipped variant)."""
    flipped: dict[str, str] = {}
    for timeline in timelines.values():
        for active in timeline.faults:
            rec = active.rec
            if rec.kind != FLAG_FAULT_KIND or not active.start <= t < active.end:
                continue
            flag, variant = rec.spec.get("flag"), rec.spec.get("variant")
            if isinstance(flag, str) and isinstance(variant, str):
                flipped[flag] = variant
    return flipped


_CALLS: dict[tuple[int, str, str, tuple[tuple[str, str], ...]], tuple[Tracing, tuple[Call, ...]]]
_CALLS = {}
"""The evaluation calls per (declaration, deployment, operation, flipped flags it reads):
a handful of combinations, asked for once per handler walked. Each entry keeps its
declaration alive, so no id is reused."""


def flag_calls(
    tracing: Tracing, service: str, op: str, flipped: Mapping[str, str]
) -> tuple[Call, ...]:
    """The calls ``service``'s handler of ``op`` makes to the flag service, in order, then
    the calls only its spans show (``Tracing.handler_calls``); empty when it makes none."""
    evaluations = tuple(e for e in tracing.evaluations.get((service, op), ()) if e.propagated)
    own = tracing.handler_calls.get((service, op), ())
    return _cached(tracing, service, op, flipped, evaluations, own)


def detached_calls(
    tracing: Tracing, service: str, op: str, flipped: Mapping[str, str]
) -> tuple[Call, ...]:
    """The evaluations ``service``'s handler of ``op`` makes through a client that injects
    no trace context (``FlagEvaluation.propagated`` false): each is walked as the root of
    a trace of its own (``spans._detached``), while its time still counts in the handler."""
    evaluations = tracing.evaluations.get((service, op), ())
    if all(e.propagated for e in evaluations):
        return ()
    detached = tuple(e for e in evaluations if not e.propagated)
    return _cached(tracing, service, f"{op}\x00detached", flipped, detached, ())


def _cached(  # noqa: PLR0917 - flag_calls' arguments and what they select
    tracing: Tracing,
    service: str,
    op: str,
    flipped: Mapping[str, str],
    evaluations: tuple[FlagEvaluation, ...],
    own: tuple[HandlerCall, ...],
) -> tuple[Call, ...]:
    if not evaluations and not own:
        return ()
    read = tuple((e.flag, flipped[e.flag]) for e in evaluations if e.flag in flipped)
    key = (id(tracing), service, op, read)
    found = _CALLS.get(key)
    if found is None:
        served = dict(read)
        calls = tuple(
            Call(
                tracing.flag_service,
                evaluation_op(e.resolve, e.flag, served.get(e.flag, e.off)),
                fatal=False,
            )
            for e in evaluations
        )
        calls += tuple(Call(c.callee, c.op, fatal=False) for c in own)
        found = _CALLS[key] = (tracing, calls)
    return found[1]
