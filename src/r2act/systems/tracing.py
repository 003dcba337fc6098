"""What a system declares about its traces: which services emit spans, and of what shape.

A system's ``tracing.py`` fills a :class:`Tracing`: per instrumented deployment, the span
its instrumentation opens for each handler (``server``) and for each outgoing call
(``client``), with the span name, kind and attributes the pinned SDK and instrumentation
library set, and the rule by which that library turns an outcome into the span status.
The engine (``cluster/sim/spans``) walks its request trees through these declarations; it
never spells a service or a span name itself. A deployment missing from ``services``
emits no span at all: a call to it shows only as its caller's client span. A traced client
in front of the entry point (``Origin``), the consumers of a queue (``consumers``) and the
calls that client makes outside the entry point's routes (``side_traces``) are declared on
the ``Tracing`` itself.

Outcomes are protocol codes: a gRPC status code (0 OK, 4 DEADLINE_EXCEEDED, 13 INTERNAL,
14 UNAVAILABLE) or an HTTP status code; ``NO_RESPONSE`` stands for an HTTP call that got
no answer (the connection failed), where no status code exists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from r2act.schema.traces import AttributeValue, SpanKind

Protocol = Literal["grpc", "http"]
NO_RESPONSE = -1
"""The outcome of an HTTP call that got no response (refused, unresolved, timed out)."""

GRPC_OK, GRPC_DEADLINE, GRPC_INTERNAL, GRPC_UNAVAILABLE = 0, 4, 13, 14
"""The gRPC status codes a simulated outcome maps to (``grpc/codes``)."""

GO_SERVER_ERROR_CODES = frozenset({2, 4, 12, 13, 14, 15})
"""The gRPC codes otelgrpc's server side marks as an error (Unknown, DeadlineExceeded,
Unimplemented, Internal, Unavailable, DataLoss: the semantic conventions' list of server
errors, which otelgrpc's ``serverStatus`` follows); every other code leaves it unset."""


def grpc_client_error(code: int) -> bool:
    """Client side of every gRPC instrumentation: any code but OK is an error."""
    return code != GRPC_OK


def grpc_go_server_error(code: int) -> bool:
    """otelgrpc's server side: only the server-error codes."""
    return code in GO_SERVER_ERROR_CODES


def http_server_error(code: int) -> bool:
    """HTTP server spans: 5xx only (semantic conventions; a 4xx is the client's fault)."""
    return code >= 500 or code == NO_RESPONSE


def http_client_error(code: int) -> bool:
    """HTTP client spans: 4xx, 5xx, and no response at all."""
    return code >= 400 or code == NO_RESPONSE


def never_error(_code: int) -> bool:
    """A span whose code never sets the error status (a hand-made span nobody marks)."""
    return False


@dataclass(frozen=True)
class Cited:
    """A fragment that stands on one line of a pinned upstream file (under
    ``shared/reference``): an instrumentation set-up, a dependency pin, a span's name."""

    path: str
    line: int
    fragment: str
    tree: str = ""
    """Empty: ``path`` is under ``shared/reference``. Otherwise the upstream repository and
    tag the line stands in (``owner/name@tag``), a pinned source the reference tree lacks
    (read from that tag; the conformance tests check the tag against the deployment's pin,
    not the line)."""


@dataclass(frozen=True)
class SpanShape:
    """One span as one instrumentation opens it."""

    name: str
    kind: SpanKind
    attributes: Mapping[str, AttributeValue]
    """The fixed attributes (the outcome's code attribute is added per span)."""
    protocol: Protocol
    """How the engine expresses an outcome: a gRPC or an HTTP status code."""
    code_attribute: str | None
    """The attribute that carries the outcome's code (``rpc.grpc.status_code``,
    ``http.response.status_code``...), None when the library sets none."""
    is_error: Callable[[int], bool]
    """Whether the library sets the error status for an outcome code (else ``unset``)."""
    source: str
    """Where the shape comes from: the set-up line and the dependency pin."""
    ok_status: Literal["unset", "ok"] = "unset"
    """The status of a successful span (a hand-made span may set ``ok`` explicitly)."""
    code_text: bool = False
    """The code attribute is a string (Envoy's tags are), not an integer."""


@dataclass(frozen=True)
class ServiceTracing:
    """One instrumented deployment."""

    service_name: str
    """Its ``service.name`` resource attribute (``OTEL_SERVICE_NAME``)."""
    server: Callable[[str], tuple[SpanShape, ...]]
    """Operation (a ``Call.op`` or, on the entry point, a route scope) -> the spans its
    handler opens, outermost first, each the parent of the next; the handler's own calls
    are children of the innermost. Empty: the handler opens none."""
    client: Callable[[str, str], SpanShape | None]
    """(callee deployment, operation) -> the client span of that outgoing call, or None
    when the caller's libraries open none for it."""
    source: str
    """The service's OpenTelemetry set-up (file and line)."""
    evidence: tuple[Cited, ...] = ()
    """The lines that show it: the set-up, the library's pin, each hand-made span's name
    (checked against the reference tree by the tests)."""


@dataclass(frozen=True)
class Origin:
    """The traced client that opens each request's trace before the entry point sees it
    (a load generator whose task code starts a span and whose HTTP library opens a client
    span per request): the entry point's server span is then a child, not a root."""

    deployment: str
    """The client's deployment (its ``ServiceTracing`` gives the request's client span,
    ``client(entry point, route scope)``)."""
    tasks: Callable[[str], tuple[tuple[float, tuple[SpanShape, ...]], ...]]
    """Route scope -> (weight, spans) of each task that sends that route's requests: the
    spans its code has open around such a request, outermost first (the trace's root,
    then any nested task span), drawn by weight."""


@dataclass(frozen=True)
class FlagEvaluation:
    """One feature-flag evaluation a handler makes over the network on every request it
    serves: a remote call to the flag service inside the handler's innermost server span,
    before its other calls, whose failure the SDK swallows (it returns the default value).

    An evaluation a provider answers from its own cache (after the first one per
    configuration change) makes no call and is not declared."""

    flag: str
    """The flag's key."""
    resolve: str
    """The flag service's operation that answers it (its ``server`` is asked for
    ``evaluation_op(resolve, flag, variant)``; the caller's ``client`` for the same op)."""
    off: str
    """The variant the flag serves while no fault flips it."""
    source: str
    """The line that evaluates it."""
    propagated: bool = True
    """Whether the caller's client injects its trace context into the call. False: its
    client library is not instrumented, so the call opens no client span and the flag
    service's spans root a trace of their own (``cluster/sim/flagspans.detached_calls``)."""


@dataclass(frozen=True)
class HandlerCall:
    """A call a handler makes that only traces show: the load model (logs, metrics) leaves
    it out, so the walk adds it to the handler's own calls, never fatal, before them."""

    callee: str
    op: str
    source: str
    """The line that makes it."""


@dataclass(frozen=True)
class SideTrace:
    """A flag evaluation the traced client (``Origin``) makes outside the entry point's
    routes, once per run of one of its tasks and outside any span of its own, so each is
    a trace of its own: the client's span of the call (its root) and the flag service's
    spans under it (``cluster/sim/sidetraces``). The engine never names the task: it draws
    these calls at ``share`` of the client's task runs."""

    task: str
    """The task that makes the call (it keys the call's random draws, nothing else)."""
    evaluation: FlagEvaluation
    """The flag it evaluates: the call is the caller's ``client(flag service,
    evaluation_op(resolve, flag, variant))`` and the flag service's ``server`` of that op."""
    share: float
    """Calls per task run of one user (the task's weight over all the tasks' weights)."""
    timeout_ms: float | None
    """The client's timeout of the call (a deadline), None when it sets none."""
    source: str
    """The lines that make the call."""


def evaluation_op(resolve: str, flag: str, variant: str) -> str:
    """The operation a flag evaluation is walked as: the flag service's method, the flag
    and the variant it serves (its spans carry the last two where the service sets them)."""
    return f"{resolve} {flag} {variant}"


def split_evaluation_op(op: str) -> tuple[str, str, str]:
    """(method, flag, variant) of an ``evaluation_op``."""
    resolve, flag, variant = op.split(" ", 2)
    return resolve, flag, variant


@dataclass(frozen=True)
class Tracing:
    """A system's traces: its instrumented deployments and why the others are not."""

    services: Mapping[str, ServiceTracing] = field(default_factory=dict)
    """Deployment name -> its instrumentation."""
    not_instrumented: Mapping[str, str] = field(default_factory=dict)
    """Deployment name -> why it emits no span (a citation)."""
    pending: Mapping[str, str] = field(default_factory=dict)
    """Deployment name -> instrumented upstream but not simulated yet (no span here, which
    a reader of its traces must know): what remains to declare."""
    path_attribute: str | None = None
    """The entry point's server-span attribute that carries the request path, where a
    route's ``*`` is filled with one of the system's ``path_ids``."""
    path_prefix: str = ""
    """What precedes the path in that attribute (a scheme and host, for a full URL)."""
    origin: Origin | None = None
    """The traced client that roots every request's trace, None when traces start at the
    entry point (an uninstrumented load generator)."""
    consumers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Queue deployment -> the deployments that consume what a producer span sends to it:
    each opens its ``server(<the producer's op>)`` spans, outermost first, as a trace of
    its own (``cluster/sim/spans._consume``), ``QUEUE_LAG_MS`` after the publish."""
    flag_service: str = ""
    """The deployment that answers remote flag evaluations (empty: the system has none)."""
    evaluations: Mapping[tuple[str, str], tuple[FlagEvaluation, ...]] = field(default_factory=dict)
    """(deployment, operation) -> the flags its handler evaluates over the network on each
    request (``cluster/sim/flagspans``), in the order it evaluates them."""
    handler_calls: Mapping[tuple[str, str], tuple[HandlerCall, ...]] = field(default_factory=dict)
    """(deployment, operation) -> the calls its handler makes that the load model leaves out
    (walked after its flag evaluations, ``cluster/sim/flagspans``)."""
    side_traces: tuple[SideTrace, ...] = ()
    """The traced client's calls outside the entry point's routes, each a trace of its own
    (``cluster/sim/sidetraces``); empty without an ``origin``."""
