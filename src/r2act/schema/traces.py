"""Spans: the fourth modality's record, shared by both cluster adapters and the dataset.

A span is a NamedTuple for the same reason a log line is: a paper-scale campaign has
millions of them and they are only written, never validated one by one. Its fields are
what trace-based methods read (RCAEval's ``traces.csv``, Jaeger's JSON, RCABench's span
files): ids, parent, service, operation, kind, start, duration, status and attributes.

Sampling keeps or drops whole traces, decided from the trace id alone, so every adapter
and every span of one trace agree without coordination (the rule of OpenTelemetry's
``TraceIdRatioBased`` sampler: the id's lower 64 bits against the rate's bound).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

SpanKind = Literal["server", "client", "internal", "producer", "consumer"]
SPAN_KINDS: tuple[SpanKind, ...] = ("server", "client", "internal", "producer", "consumer")
SpanStatus = Literal["unset", "ok", "error"]
SPAN_STATUSES: tuple[SpanStatus, ...] = ("unset", "ok", "error")

AttributeValue = str | int | float | bool


class Span(NamedTuple):
    """One finished span, as a trace store returns it."""

    trace_id: str
    """32 lower-case hex digits."""
    span_id: str
    """16 lower-case hex digits."""
    parent_id: str
    """The parent span's id; empty for a trace's root."""
    service: str
    """The ``service.name`` resource attribute of the process that emitted it."""
    operation: str
    """The span name, as the instrumentation sets it."""
    kind: SpanKind
    """The OpenTelemetry span kind, lower case."""
    start: float
    """Start, seconds since the epoch (UTC)."""
    duration_s: float
    """End minus start, seconds."""
    status: SpanStatus
    """The span status code, lower case."""
    attributes: dict[str, AttributeValue]
    """The span's attributes, as the instrumentation sets them."""


_LOW_64 = (1 << 64) - 1


def kept_bound(rate: float) -> int:
    """The bound a kept trace id's lower 64 bits lie below at sampling ``rate``: 0 keeps
    none, ``2**64`` all (``TraceIdRatioBased`` compares against ``rate * 2**64``)."""
    if rate >= 1.0:
        return 1 << 64
    if rate <= 0.0:
        return 0
    return int(rate * (1 << 64))


def keeps_trace(trace_id: str, rate: float) -> bool:
    """Whether a whole trace is kept at sampling ``rate`` (0 keeps none, 1 keeps all).

    The decision reads only the id's lower 64 bits, so it is the same on every span of the
    trace, in every adapter and in every run.
    """
    return int(trace_id[-16:], 16) & _LOW_64 < kept_bound(rate)
