"""The collector's copy of what the Astronomy Shop's services log through OTLP.

For each service whose set-up exports log records (``logsinks.COLLECTOR``), the same log
calls ``render_speech`` decides become ``OtlpRecord``\\ s, framed as their SDK fills them
(instrumentation scope, severity text and number, body, attributes, trace context), and
are printed as the collector's debug exporter prints them, on the collector pod
(``render_collector.debug_lines``).

The engine's hooks (``systems.render.Renderers``) write to the pod they are called for;
these take the collector pod as a second identity (``systems.render.RelayIdentity``)
and are ``COLLECTOR_RENDERERS`` (a ``systems.render.RelayRenderers``), which the engine
calls through ``System.log_relay``: per serving pod of a service with a collector sink,
the same rates as its own lines, appended to the stream of the collector pod on its
node (``cluster/sim/relaylogs``).

Scopes and severities per runtime (assumptions where the SDK is not in the reference):
otelslog names the scope after ``NewLogger``'s argument and prints Go's level names;
OpenTelemetry .NET uses the logger's category and .NET's level names, and sends the
message template as the body with its values as attributes; the C++ SDK's scope is
``getLogger``'s library name (``logger_common.h`` L33); pino-opentelemetry-transport's is
its ``loggerName`` option (``payment/logger.js`` L21-L22); Ruby's ``on_emit`` sets only
the severity text (``email_server.rb`` L90); the Python handler's scope is the logger's
name; the Java agent's is the log4j logger's name.

A record's trace context is the span its log call runs in, as ``render_backend`` frames
it for stdout (``served_ask``, ``failed_ask``): from the source pod's
``PodIdentity.traces``, so the collector prints the ids of the kept span when traces are
collected.
"""

from __future__ import annotations

import random
from dataclasses import replace

from r2act.schema import LogLine
from r2act.systems.astronomyshop.errors import cart_storage_detail
from r2act.systems.astronomyshop.logsinks import STDOUT, to_collector
from r2act.systems.astronomyshop.render_backend import failed_ask, served_ask
from r2act.systems.astronomyshop.render_collector import (
    SEVERITY,
    OtlpRecord,
    debug_lines,
    i,
    s,
)
from r2act.systems.astronomyshop.render_draw import occurrence, sample
from r2act.systems.astronomyshop.render_formats import trace_ids
from r2act.systems.astronomyshop.render_speech import (
    Said,
    Speech,
    failed_speech,
    served_speech,
)
from r2act.systems.astronomyshop.texts import T
from r2act.systems.render import PodIdentity, RelayIdentity, Sized, SpanAsk

SCOPES: dict[str, tuple[str, str]] = {
    "checkout": ("checkout", ""),
    "product-catalog": ("product-catalog", ""),
    "cart": ("cart.cartstore.ValkeyCartStore", ""),
    "currency": ("currency", "1.23.0"),
    "payment": ("payment-logger", "1.0.0"),
    "email": ("email", ""),
    "shipping": ("opentelemetry-appender-tracing", "0.31.1"),
    "quote": ("monolog", ""),
    "recommendation": ("main", ""),
    "product-reviews": ("main", ""),
    "ad": ("oteldemo.AdService", ""),
    "accounting": ("Accounting.Consumer", ""),
    "fraud-detection": ("fraud-detection", ""),
}
"""InstrumentationScope (name, version) of each service's log records (see the module
docstring; the C++ SDK version is the one the currency Dockerfile builds, an assumption)."""
DOTNET_SEVERITY = {"INFO": "Information", "WARN": "Warning", "ERROR": "Error"}
PINO_SEVERITY = {"INFO": "info", "WARN": "warn", "ERROR": "error"}


def _severity(app: str, level: str) -> tuple[str, int]:
    """(SeverityText, SeverityNumber) the service's SDK sets for a call at ``level``."""
    if app in ("cart", "accounting"):
        return DOTNET_SEVERITY[level], SEVERITY[level]
    if app == "payment":
        return PINO_SEVERITY[level], SEVERITY[level]
    if app == "email":
        return level, 0
    return level, SEVERITY[level]


PYTHON_FUNCTIONS = {
    ("recommendation_server.py", 47): "ListRecommendations",
    ("recommendation_server.py", 172): "<module>",
    ("product_reviews_server.py", 92): "GetProductReviews",
    ("product_reviews_server.py", 104): "AskProductAIAssistant",
}
"""The function each Python log call is in (``record.funcName``)."""


def _code_attributes(said: Said) -> tuple[tuple[str, str], ...]:
    """What the Python SDK's LoggingHandler adds to a record: where the call is
    (``code.filepath``, ``code.function``, ``code.lineno``; the image's ``WORKDIR /app``,
    ``recommendation/Dockerfile`` L21)."""
    filename, line = said.where
    function = PYTHON_FUNCTIONS.get(said.where, "<module>")
    return (
        ("code.filepath", s("/app/" + filename)),
        ("code.function", s(function)),
        ("code.lineno", i(line)),
    )


def record_of(app: str, pod: str, said: Said, trace: tuple[str, str]) -> OtlpRecord:
    """The OTLP record ``app``'s SDK exports for one log call."""
    text, number = _severity(app, said.level)
    attributes = said.attributes
    if said.where[0].endswith(".py"):
        attributes = (*attributes, *_code_attributes(said))
    return OtlpRecord(
        service=app,
        pod=pod,
        scope=SCOPES.get(app, (app, "")),
        severity=text,
        level=number,
        body=said.template or said.message,
        attributes=attributes,
        trace=(*trace, 1 if trace[0] else 0),
    )


def collector_renderer(
    source: PodIdentity, collector: RelayIdentity, speech: Speech, ask: SpanAsk
) -> Sized:
    """(lines, renderer) of one occurrence of ``speech``'s exported records on the
    collector pod (the lines the renderer appends name the collector pod), logged in the
    span ``ask`` names."""
    pod, app = source.pod, source.app
    sampled = [x for x in speech(sample(pod)) if x.only != STDOUT]
    lines = sum(len(debug_lines(0.0, record_of(app, pod, x, ("", "")), collector)) for x in sampled)
    traces = source.traces

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        draw = occurrence(pod, ts)
        trace_id, span_id, ts = traces.placed(ask, ts, trace_ids(draw))
        trace = (trace_id, span_id)
        k = 0
        for said in speech(draw):
            if said.only == STDOUT:
                continue
            out.extend(debug_lines(ts + k * 0.0007, record_of(app, pod, said, trace), collector))
            k += 1

    return lines, render


def collector_served(source: PodIdentity, collector: RelayIdentity, op: str) -> Sized | None:
    """The collector's lines for one call ``source``'s service served."""
    if not to_collector(source.app):
        return None
    speech = served_speech(source.app, op, source.sessions)
    if speech is None:
        return None
    return collector_renderer(source, collector, speech, served_ask(source.app, op))


def collector_failed(
    source: PodIdentity, collector: RelayIdentity, callee: str, kind: str
) -> Sized | None:
    """The collector's lines for a failed call ``source``'s service logged (checkout's
    e-mail warning)."""
    if not to_collector(source.app):
        return None
    if source.app == "cart" and callee == "valkey-cart":
        return _cart_rpc_error(source, collector)
    speech = failed_speech(source.app, callee, kind)
    if speech is None:
        return None
    return collector_renderer(source, collector, speech, failed_ask(source.app, callee))


def _cart_rpc_error(source: PodIdentity, collector: RelayIdentity) -> Sized:
    """grpc-dotnet's ``ErrorStatusCodeRaised`` entry as cart's OTLP provider exports it: the
    message template as the body, its values as attributes, the category as the scope."""
    detail = cart_storage_detail()
    said = Said(
        "INFO",
        T("as.dotnet.rpc_error")("FailedPrecondition", detail),
        (("StatusCode", s("FailedPrecondition")), ("Detail", s(detail))),
        T("as.dotnet.rpc_error_format")(),
    )
    pod, traces = source.pod, source.traces
    ask = failed_ask("cart", "valkey-cart")

    def record(trace: tuple[str, str]) -> OtlpRecord:
        made = record_of("cart", pod, said, trace)
        return replace(made, scope=("Grpc.AspNetCore.Server.ServerCallHandler", ""))

    lines = len(debug_lines(0.0, record(("", "")), collector))

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        trace_id, span_id, ts = traces.placed(ask, ts, trace_ids(occurrence(pod, ts)))
        out.extend(debug_lines(ts, record((trace_id, span_id)), collector))

    return lines, render
