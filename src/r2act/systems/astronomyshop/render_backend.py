"""What the Astronomy Shop's services print on their own stdout, per call and failed call.

Only services whose set-up writes to the container's stream print here (``logsinks``):
cart (the .NET console logger), ad and fraud-detection (log4j's console appender),
recommendation (the root handler of the logging instrumentation), email (its ``puts``)
and the frontend (Next.js' ``console.error`` of a failed API handler). checkout,
product-catalog, currency, shipping and quote log through OTLP only, so their pods print
nothing per call; their records are the collector's (``render_otlp``). What each call
says is ``render_speech``'s; this module frames it.

The formats that print a trace context (log4j's pattern, the Python root format) print
the span the call runs in: the handler's server span of the operation for a served call,
the handler span whose call failed for a failed call, and an error span of the service for
a failure of its own (a flag's). The ids come from the pod's ``PodIdentity.traces`` (the
kept traces' spans when traces are collected), given the occurrence's own draw.
"""

from __future__ import annotations

import random
from typing import Protocol

from r2act.schema import LogLine
from r2act.systems.astronomyshop.errors import (
    cart_storage_detail,
    flag_of,
    js_grpc_error,
    python_inactive,
)
from r2act.systems.astronomyshop.logsinks import COLLECTOR, to_stdout
from r2act.systems.astronomyshop.render_draw import occurrence, sample
from r2act.systems.astronomyshop.render_formats import (
    dotnet_console,
    log4j_line,
    python_root_line,
    rack_time,
    trace_ids,
)
from r2act.systems.astronomyshop.render_speech import (
    Said,
    Speech,
    failed_speech,
    served_speech,
)
from r2act.systems.astronomyshop.texts import T
from r2act.systems.render import NO_TRACES, PodIdentity, Render, Sized, SpanAsk

new = tuple.__new__
"""``tuple.__new__``: builds a ``LogLine`` without the NamedTuple constructor's extra frame."""
STEP_S = 0.0007
"""Seconds between two log calls of one occurrence (a parameter: no source states it)."""
CART_CATEGORY = "cart.cartstore.ValkeyCartStore"
"""The category of ``ILogger<ValkeyCartStore>`` (``cart/src/Program.cs`` L44; the class's
namespace, ``ValkeyCartStore.cs`` L13)."""
GRPC_CATEGORY = "Grpc.AspNetCore.Server.ServerCallHandler"
GRPC_ERROR_EVENT = 7
"""grpc-dotnet's ``ErrorStatusCodeRaised`` event (category and id, ``ServerCallHandlerLog.cs``)."""
AD_LOGGER = "oteldemo.AdService"
"""``LogManager.getLogger(AdService.class)`` (``AdService.java`` L53), as ``%logger{36}``."""
FRAUD_LOGGER = "fraud-detection"
"""``LogManager.getLogger(groupID)`` (``fraud-detection/.../main.kt`` L27, L29)."""
ACCOUNTING_CATEGORY = "Accounting.Consumer"
"""The category of ``ILogger<Consumer>`` (``accounting/Consumer.cs`` L37; namespace
``Accounting``)."""


def _logger_message_event_id(name: str) -> int:
    """The event id the ``[LoggerMessage]`` source generator gives a method that names none:
    a hash of its name (FNV-1a, made non-negative). An assumption: the generator is not in
    the reference (dotnet/runtime, ``LoggerMessageGenerator.Parser.cs``)."""
    h = 2166136261
    for ch in name:
        h = ((ord(ch) ^ h) * 16777619) & 0xFFFFFFFF
    signed = h - (1 << 32) if h >= 1 << 31 else h
    return abs(signed)


PRINTS_CONTEXT = frozenset({"recommendation", "product-reviews", "ad", "fraud-detection"})
"""The services whose stdout format prints the trace context (``_stdout_lines``)."""
OWN_FAILURE: SpanAsk = ("op", "*", True)
"""The span a service's own failure (a flag's error) is logged in: a failed handler's."""


INNER_SPAN = frozenset({"email", "accounting", "fraud-detection"})
"""Services whose code logs in the innermost of the spans around it: email's
``in_span("send_email")`` (``email/email_server.rb`` L64-L96); the Kafka consumers' record
spans, current while the record is handled (fraud-detection iterates the polled records,
which the Java agent wraps in the ``process`` span, ``main.kt`` L55-L65; accounting logs
after ``Consume()`` returns, ``Consumer.cs`` L65-L67, L91, the .NET instrumentation's
receive activity still current: an assumption, that instrumentation is not in the
reference). The others log in their server span: payment's and quote's manual spans are
started, not made current (``payment/charge.js`` L25, ``quote/app/routes.php`` L17-L21),
and the Python handlers log outside theirs (``recommendation_server.py`` L44-L47,
``product_reviews_server.py`` L91-L92)."""


def served_ask(app: str, op: str) -> SpanAsk:
    """The span a served call's lines are logged in: the handler's, which did not fail."""
    return ("op-inner" if app in INNER_SPAN else "op", op, False)


def failed_ask(app: str, callee: str) -> SpanAsk:
    """The span a failed call's lines are logged in: the handler span whose call to
    ``callee`` failed (its status follows what the handler did with the failure), or, for
    the service's own failure (``callee`` is ``app``), a failed handler's."""
    return OWN_FAILURE if callee == app else ("failed", callee, None)


ACCOUNTING_EVENT = _logger_message_event_id("OrderReceivedMessage")
"""``Log.OrderReceivedMessage``'s event id (``accounting/Log.cs`` L11-L14 sets none)."""
JS_FRAMES = (
    ("callErrorFromStatus", "/app/node_modules/@grpc/grpc-js/build/src/call.js:32:19"),
    ("Object.onReceiveStatus", "/app/node_modules/@grpc/grpc-js/build/src/client.js:193:76"),
)
JS_CALL_FRAME = (
    "ServiceClientImpl.makeUnaryRequest",
    "/app/node_modules/@grpc/grpc-js/build/src/client.js:161:32",
)
"""The stack grpc-js gives a failed unary call's error: the frames where the status becomes
an error, then ``for call at`` and the caller's frame (an assumption: grpc-js is not in the
reference; the file:line:column are those of its 1.x build under the image's ``/app``)."""


def _frame(template_lines: list[str], logger: PodIdentity) -> Render:
    """A renderer for fixed lines (no per-occurrence values)."""
    pod, container, app = logger.pod, logger.container, logger.app

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        for k, line in enumerate(template_lines):
            out.append(new(LogLine, (ts + k * STEP_S, pod, container, app, line)))

    return render


DOTNET_LEVELS = {"INFO": "Information", "WARN": "Warning", "ERROR": "Error"}
"""``LogLevel`` of a .NET log call at each of ``Said``'s levels."""
PYTHON_LEVELS = {"INFO": "INFO", "WARN": "WARNING", "ERROR": "ERROR"}
"""``levelname`` of a Python log call at each of ``Said``'s levels."""


def _stdout_lines(app: str, ts: float, said: Said, trace: tuple[str, str]) -> list[str]:
    """One log call as ``app``'s stdout prints it."""
    if app == "cart":
        return dotnet_console(DOTNET_LEVELS[said.level], CART_CATEGORY, 0, said.message)
    if app in ("recommendation", "product-reviews"):
        record = (PYTHON_LEVELS[said.level], "main", *said.where)
        return [python_root_line(ts, record, (*trace, True), app, said.message)]
    if app == "accounting":
        return dotnet_console("Information", ACCOUNTING_CATEGORY, ACCOUNTING_EVENT, said.message)
    if app == "ad":
        return [log4j_line(ts, AD_LOGGER, said.message, (*trace, "01"))]
    if app == "fraud-detection":
        return [log4j_line(ts, FRAUD_LOGGER, said.message, (*trace, "01"))]
    if "%(time)s" in said.message:  # Rack's access line: the time is the line's own
        return [said.message.replace("%(time)s", rack_time(ts))]
    return [said.message]


def stdout_renderer(logger: PodIdentity, speech: Speech, ask: SpanAsk) -> Sized:
    """(lines, renderer) of one occurrence of ``speech`` on the pod's own stdout, logged
    in the span ``ask`` names."""
    pod, container, app = logger.pod, logger.container, logger.app
    sampled = [x for x in speech(sample(pod)) if x.only != COLLECTOR]
    lines = sum(len(_stdout_lines(app, 0.0, x, ("", ""))) for x in sampled)
    traces = logger.traces if app in PRINTS_CONTEXT else None

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        draw = occurrence(pod, ts)
        trace = trace_ids(draw)
        if traces is not None:
            *placed, ts = traces.placed(ask, ts, trace)
            trace = (placed[0], placed[1])
        k = 0
        for said in speech(draw):
            if said.only == COLLECTOR:
                continue
            t = ts + k * STEP_S
            for line in _stdout_lines(app, t, said, trace):
                out.append(new(LogLine, (t, pod, container, app, line)))
            k += 1

    return lines, render


def served_renderer(logger: PodIdentity, op: str) -> Sized | None:
    """(lines, renderer) for one call ``logger``'s service served; None when its stdout
    holds nothing for it."""
    if not to_stdout(logger.app):
        return None
    speech = served_speech(logger.app, op, logger.sessions)
    if speech is None:
        return None
    made = stdout_renderer(logger, speech, served_ask(logger.app, op))
    return made if made[0] else None


def error_renderer(logger: PodIdentity, callee: str, kind: str) -> Sized | None:
    """(lines, renderer) for a failed call ``logger``'s service made to ``callee``, on its
    stdout: the frontend's ``console.error`` of the gRPC error, cart's grpc-dotnet line."""
    app = logger.app
    if app == "frontend":
        lines = frontend_error_lines(kind, callee)
        return len(lines), _frame(lines, logger)
    if app == "cart" and callee == "valkey-cart":
        message = T("as.dotnet.rpc_error")("FailedPrecondition", cart_storage_detail())
        lines = dotnet_console("Information", GRPC_CATEGORY, GRPC_ERROR_EVENT, message)
        return len(lines), _frame(lines, logger)
    if app == "recommendation" and callee == "product-catalog":
        lines = recommendation_traceback(kind)
        return len(lines), _traceback_renderer(lines, logger, failed_ask(app, callee))
    if callee == app and flag_of(kind) is not None:
        return _flag_failure_renderer(logger, kind)
    if not to_stdout(app):
        return None
    speech = failed_speech(app, callee, kind)
    if speech is None:
        return None
    return stdout_renderer(logger, speech, failed_ask(app, callee))


def _flag_failure_renderer(logger: PodIdentity, kind: str) -> Sized | None:
    """(lines, renderer) of a call the service's own code failed with a flag's error, on its
    stdout: what its handler logs (``render_speech``), then what its server library logs
    of the error it answered with: grpc-dotnet's error-status entry (cart), grpcio's
    traceback of the raised call error (recommendation)."""
    app = logger.app
    speech = failed_speech(app, app, kind) if to_stdout(app) else None
    if speech is None:
        return None
    said = stdout_renderer(logger, speech, OWN_FAILURE)
    flag = flag_of(kind)
    status = flag.status if flag is not None else None
    after: list[str] = []
    render_after: Render | None = None
    traceback: _Traceback | None = None
    if app == "cart" and status is not None:
        message = T("as.dotnet.rpc_error")(status.code, status.message)
        after = dotnet_console("Information", GRPC_CATEGORY, GRPC_ERROR_EVENT, message)
        render_after = _frame(after, logger)
    elif app == "recommendation":
        after = recommendation_traceback(kind, get_product=True)
        render_after = traceback = _traceback_renderer(after, logger, OWN_FAILURE)
    if render_after is None:
        return said
    first, then = said[1], render_after

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        first(ts, r, out)
        if traceback is not None:  # logged in the same handler's span as the first line
            traceback(ts + STEP_S, r, out, ts)
        else:
            then(ts + STEP_S, r, out)

    return said[0] + len(after), render


GRPCIO = "/venv/lib/python3.12/site-packages/grpc/"
"""grpcio in recommendation's image (``python:3.12-alpine3.22``, its ``/venv``: Dockerfile
L5, L12)."""
GRPCIO_LOG_CALL = ("_server.py", 697)
"""Where grpcio's ``_LOGGER.exception`` is, as the root format prints it."""


def recommendation_traceback(kind: str, *, get_product: bool = False) -> list[str]:
    """What grpcio's server logs (``grpc._server``, through the root handler) when
    ``ListRecommendations`` raises because its catalog call failed: the handler catches
    nothing (``recommendation_server.py`` L43-L56, L93-L96; with ``get_product``, the
    cache-miss branch's ``GetProduct`` call, L84). An assumption in part: grpcio is not in
    the reference, so its frames' line numbers are those of its 1.7x sources, and the
    OpenTelemetry interceptors' own frames are left out."""
    error = python_inactive(kind, "product-catalog")
    frame = T("as.py.frame")
    call = (84, T("as.re.frame_get_product")())
    if not get_product:
        call = (95, T("as.re.frame_products")())
    return "\n".join(
        (
            T("as.grpcio.exception")(error),
            T("as.py.traceback")(),
            frame(GRPCIO + "_server.py", 610, "_call_behavior"),
            T("as.grpcio.frame_behavior")(),
            frame("/app/recommendation_server.py", 44, "ListRecommendations"),
            T("as.re.frame_list")(),
            frame("/app/recommendation_server.py", call[0], "get_product_list"),
            call[1],
            frame(GRPCIO + "_interceptor.py", 277, "__call__"),
            T("as.grpcio.frame_interceptor")(),
            frame(GRPCIO + "_channel.py", 1181, "__call__"),
            T("as.grpcio.frame_call")(),
            frame(GRPCIO + "_channel.py", 1006, "_end_unary_response_blocking"),
            T("as.grpcio.frame_raise")(),
            T("as.grpcio.raised")(error),
        )
    ).split("\n")


class _Traceback(Protocol):
    """A traceback's renderer: a ``Render`` that may be told the instant of the occurrence
    whose span it is logged in (the handler line logged just before it)."""

    def __call__(
        self, ts: float, r: random.Random, out: list[LogLine], drawn_at: float | None = None
    ) -> None: ...


def _traceback_renderer(lines: list[str], logger: PodIdentity, ask: SpanAsk) -> _Traceback:
    """The traceback with the root format's prefix on its first line (logging appends the
    exception's text after the message, unformatted), in the span ``ask`` names.

    With ``drawn_at``, and traces collected, its span is that of the occurrence at
    ``drawn_at`` (the same draw, so the same answer); without traces each line keeps its
    own draw, as before traces existed."""
    pod, container, app = logger.pod, logger.container, logger.app
    record = ("ERROR", "grpc._server", *GRPCIO_LOG_CALL)
    traces = logger.traces

    def render(
        ts: float, r: random.Random, out: list[LogLine], drawn_at: float | None = None
    ) -> None:
        at = ts if drawn_at is None or traces is NO_TRACES else drawn_at
        trace_id, span_id, placed = traces.placed(ask, at, trace_ids(occurrence(pod, at)))
        ts += placed - at  # with its line, where the span runs
        first = python_root_line(ts, record, (trace_id, span_id, True), app, lines[0])
        out.append(new(LogLine, (ts, pod, container, app, first)))
        for line in lines[1:]:
            out.append(new(LogLine, (ts, pod, container, app, line)))

    return render


def frontend_error_lines(kind: str, callee: str) -> list[str]:
    """What Next.js' ``console.error(err)`` prints for a grpc-js error thrown out of an API
    handler (the handlers catch nothing, ``pages/api/*.ts``): ``util.inspect`` of the
    error, its stack, then its own properties."""
    number, name, details = js_grpc_error(kind, callee)
    frame = T("as.fe.frame")
    last = frame(*JS_CALL_FRAME)
    quoted = "'" + details.replace("'", "\\'").replace("\n", "\\n").replace("\t", "\\t") + "'"
    return [
        *T("as.fe.grpc_error")(number, name, details).split("\n"),
        *(frame(*f) for f in JS_FRAMES),
        T("as.fe.for_call")(),
        T("as.fe.props_open")(last),
        T("as.fe.prop")("code", number),
        T("as.fe.prop")("details", quoted),
        T("as.fe.prop_last")("metadata", T("as.fe.metadata")("{}", "{}")),
        T("as.fe.props_close")(),
    ]
