"""Spans of the simulated requests: the route call trees walked one request at a time.

Logs are drawn from the scene's rates; spans need single requests, so here each 10-second
bucket piece (the same pieces, the same scenes as ``logs``) draws the requests each route
served that the sampler keeps, and only those (``_kept_ids``: their trace ids, all
satisfying ``schema.traces.keeps_trace``), then walks each kept request through the
route's calls (``System.route_calls``): each call succeeds, fails to connect, runs out of
its deadline or fails in its handler with the chances the scene gives that edge and that
callee, and takes the scene's latency (the callee's own time, its faults' extra, its own
calls in turn), jittered per call. The system's ``Tracing`` says which deployment opens
which span; an uninstrumented callee opens none, so it shows only as its caller's client
span, and a call whose caller is uninstrumented leaves no span at all.

A traced load generator (``Tracing.origin``) roots each request's trace in its task span
and its HTTP client span (``_request``); a producer span's message opens, in each consumer
the system declares (``Tracing.consumers``), a trace of its own (``_consume``); so does
each call that client makes outside the routes (``sidetraces``, ``SpanSource._side``).

Every draw comes from generators keyed by ``("spans", ...)`` (a piece's ids) and by the
trace id (its walk), apart from the log, metric and event streams, so collecting traces
changes no other file; the ids are the cluster seed's and the request's (route, bucket
piece, rank), so a window read twice gives the same spans, and a request kept at a lower
rate is the same trace, span for span, at a higher one.

The same walks give the log lines their trace context (``tracebook``): ``SpanSource.walks``
with a list of marks records, per kept request, the span each service's code runs in (its
handler's outermost and innermost spans, the handler whose call failed, the client's task
spans), so a line that belongs to a kept request names one of these spans.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import chain

from r2act.cluster.sim.flagspans import detached_calls, flag_calls, flipped_flags
from r2act.cluster.sim.logs import BUCKET_S, pieces
from r2act.cluster.sim.scene import Scene, ServiceView, _edge_faults
from r2act.cluster.sim.seeding import key_int
from r2act.cluster.sim.sidetraces import side_calls
from r2act.cluster.sim.timeline import PodTimeline
from r2act.cluster.sim.traffic import Call, route_calls
from r2act.schema import TimeWindow, Topology
from r2act.schema.traces import AttributeValue, Span, SpanStatus, kept_bound
from r2act.systems import system_of
from r2act.systems.tracing import (
    GRPC_DEADLINE,
    GRPC_INTERNAL,
    GRPC_OK,
    GRPC_UNAVAILABLE,
    NO_RESPONSE,
    SpanShape,
    Tracing,
)

new = tuple.__new__
"""``tuple.__new__``: builds a ``Span`` without the NamedTuple constructor's extra frame."""
BATCH_SPANS = 2000
"""Spans per yielded batch (memory holds one batch, never a phase)."""
HOP_MS = 0.3
"""One in-cluster network hop, both ways (a client span minus its server span's length).
Assumption: sub-millisecond pod-to-pod round trips on one node; nobody publishes kind's."""
JITTER_SIGMA = 0.35
"""Log-normal spread of one call's own time: the same spread the scene's deadline model
assumes (``scene.slow_share_at``)."""
CONNECT_FAIL_MS = {"unavailable": 1.0, "dns_error": 2.0, "dns_servfail": 2.0}
"""How long a call that cannot connect takes to fail: a refused connection or an NXDOMAIN
answer comes back in about a millisecond (assumption: an in-cluster resolver's answer)."""
CONNECT_TIMEOUT_MS = 20000.0
"""A dial to an address that never answers (``dns_random``: a wrong IP) waits for the
connect timeout: gRPC's minimum connect timeout is 20 s (the connection back-off spec's
MIN_CONNECT_TIMEOUT), unless the call's deadline ends it first."""
NESTED_MS = 0.05
"""Offset of a span nested in its service's outer span (middleware before the handler)."""
QUEUE_LAG_MS = 5.0
"""From a message's publish to its consumer's span: a consumer blocked in its poll gets the
record as soon as the broker has it (assumption: a few milliseconds on one node; no source
publishes the demo's lag)."""

_CODES: dict[str, dict[str, int]] = {
    "grpc": {"ok": GRPC_OK, "connect": GRPC_UNAVAILABLE, "deadline": GRPC_DEADLINE},
    "http": {"ok": 200, "connect": NO_RESPONSE, "deadline": NO_RESPONSE},
}
HANDLER_CODES = {"grpc": GRPC_INTERNAL, "http": 500}
"""The code of a handler that failed (its own error or a failed call it does not
tolerate): INTERNAL, as Go handlers wrap a backend's error (``status.Errorf(codes.Internal,
...)``), and 500 from an HTTP handler. Assumption where a runtime differs (a Python handler's
uncaught exception is UNKNOWN): both mark the span an error under every library here."""


class _Shapes:
    """The declarations' spans, built once per (deployment, operation) and call edge: the
    walk asks for them per call, and building them is most of a span's cost otherwise."""

    def __init__(self, tracing: Tracing) -> None:
        self.tracing = tracing
        self._server: dict[tuple[str, str], tuple[SpanShape, ...]] = {}
        self._client: dict[tuple[str, str, str], SpanShape | None] = {}
        self._outcomes: dict[
            tuple[int, str], tuple[int, SpanStatus, dict[str, AttributeValue], SpanShape]
        ] = {}
        """Keyed by the shape's id: each entry keeps its shape alive, so no id is reused."""

    def server(self, service: str, op: str) -> tuple[SpanShape, ...]:
        key = (service, op)
        found = self._server.get(key)
        if found is None:
            traced = self.tracing.services.get(service)
            found = self._server[key] = traced.server(op) if traced is not None else ()
        return found

    def outcome(
        self, shape: SpanShape, outcome: str
    ) -> tuple[int, SpanStatus, dict[str, AttributeValue]]:
        """(code, status, attributes) of a span of ``shape`` with ``outcome``."""
        key = (id(shape), outcome)
        found = self._outcomes.get(key)
        if found is None:
            code = _CODES[shape.protocol].get(outcome, HANDLER_CODES[shape.protocol])
            attributes: dict[str, AttributeValue] = dict(shape.attributes)
            if shape.code_attribute is not None and code != NO_RESPONSE:
                attributes[shape.code_attribute] = str(code) if shape.code_text else code
            error = outcome != "ok" and shape.is_error(code)
            status: SpanStatus = "error" if error else shape.ok_status
            found = self._outcomes[key] = (code, status, attributes, shape)
        return found[0], found[1], found[2]

    def client(self, caller: str, callee: str, op: str) -> SpanShape | None:
        key = (caller, callee, op)
        if key not in self._client:
            traced = self.tracing.services.get(caller)
            self._client[key] = traced.client(callee, op) if traced is not None else None
        return self._client[key]


Mark = tuple[str, str, str, str, str]
"""(trace id, deployment, what, name, span id): a span a service's code runs in, in the
terms of ``systems.render.SpanAsk`` (``op``, ``op-inner``, ``failed``, ``task``)."""


@dataclass(slots=True)
class _Walk:
    """One kept request being turned into spans."""

    trace_id: str
    scene: Scene
    edges: dict[tuple[str, str], tuple[float, str]]
    tracing: Tracing
    r: random.Random
    shapes: _Shapes
    spans: list[Span] = field(default_factory=list)
    muted: int = 0
    """Above zero while walking below an uninstrumented service: it propagates no trace
    context, so what its callees open belongs to other traces (not made here)."""
    flipped: dict[str, str] = field(default_factory=dict)
    """Flag -> the variant a flag fault makes the flag service serve (``flagspans``)."""
    marks: list[Mark] | None = None
    """Filled only for the ``tracebook``: which span each service's code runs in (None
    while collecting spans, which need no marks)."""
    handlers: dict[str, tuple[str, str]] = field(default_factory=dict)
    """With ``marks``: the innermost span id of a handler (its calls' parent) -> its
    deployment and outermost span (a failed call is marked on its caller's handler)."""

    def new_id(self) -> str:
        """The next span id: drawn from the trace's own generator (seeded by its id)."""
        return f"{self.r.getrandbits(64):016x}"


def _emit(
    walk: _Walk,
    service: str,
    shape: SpanShape,
    ids: tuple[str, str],
    *,
    start: float,
    length_ms: float,
    outcome: str,
    extra: dict[str, AttributeValue] | None = None,
) -> None:
    """Append one span: ``ids`` (its id, its parent's), its start (s) and length (ms).

    Spans of one shape and outcome share one attributes dict (``_Shapes.outcome``): it is
    never changed once made, and the raw-store writer encodes it once. Called once per
    span, so it builds the tuple directly (``new``)."""
    code, status, attributes = walk.shapes.outcome(shape, outcome)
    if extra:
        attributes = {**attributes, **extra}
        if shape.code_attribute is not None and code != NO_RESPONSE:  # the code stays last
            attributes[shape.code_attribute] = attributes.pop(shape.code_attribute)
    walk.spans.append(
        new(
            Span,
            (
                walk.trace_id,
                ids[0],
                ids[1],
                service,
                shape.name,
                shape.kind,
                round(start, 6),
                round(length_ms / 1000.0, 6) if length_ms > 0.0 else 0.0,
                status,
                attributes,
            ),
        )
    )


_JITTER_MU = -(JITTER_SIGMA**2) / 2
"""The log-normal's mu that keeps a jittered time's mean at the scene's cost."""
_ABSENT = ServiceView(fail=1.0)
"""A callee the scene does not know: every call to it fails (never changed)."""
_IDLE = ServiceView()
"""A caller the scene does not know: no egress delay (never changed)."""


def _handle(
    walk: _Walk,
    service: str,
    op: str,
    calls: tuple[Call, ...],
    *,
    parent: str,
    start: float,
    extra_ms: float,
    extra_attributes: dict[str, AttributeValue] | None = None,
) -> tuple[float, str]:
    """A handler of ``service`` serving ``op``: its server spans around its calls, its own
    time the scene's healthy cost jittered log-normally.

    Returns (its length in ms, outcome: ``ok`` or ``handler``)."""
    scene, r = walk.scene, walk.r
    traced = walk.tracing.services.get(service)
    shapes = walk.shapes.server(service, op)
    ids = [f"{r.getrandbits(64):016x}" for _ in shapes]
    inner_parent = ids[-1] if ids else parent
    if walk.marks is not None and ids and traced is not None and not walk.muted:
        walk.marks.append((walk.trace_id, service, "op", op, ids[0]))
        if len(ids) > 1:
            walk.marks.append((walk.trace_id, service, "op-inner", op, inner_parent))
        walk.handlers[inner_parent] = (service, ids[0])
    own = scene.service_ms.get(service, 3.0) * math.exp(r.gauss(_JITTER_MU, JITTER_SIGMA))
    own += extra_ms
    nested = len(shapes) * NESTED_MS
    cursor = start + (nested + own / 2) / 1000.0
    outcome = "ok"
    asked = flag_calls(walk.tracing, service, op, walk.flipped)  # before the handler's work
    if asked:
        evaluated = _calls(walk, service, asked, inner_parent, start + nested / 1000.0)[0]
        cursor = max(cursor, evaluated)
    for call in detached_calls(walk.tracing, service, op, walk.flipped):
        cursor = max(cursor, _detached(walk, service, call, start + nested / 1000.0))
    view = scene.services.get(service)
    flagged = view.op_fail.get(op) if view is not None else None
    if flagged is not None and flagged[1] != "flag_caught" and r.random() < flagged[0]:
        outcome = "handler"  # the flag's code path fails the handler before its calls
    if outcome == "ok" and calls:
        if traced is None:
            walk.muted += 1
        cursor, outcome = _calls(walk, service, calls, inner_parent, cursor)
        if traced is None:
            walk.muted -= 1
    length = (cursor - start) * 1000.0 + own / 2 + nested
    if traced is not None and not walk.muted:
        name = traced.service_name
        for depth, shape in enumerate(shapes):
            _emit(
                walk,
                name,
                shape,
                (ids[depth], ids[depth - 1] if depth else parent),
                start=start + depth * NESTED_MS / 1000.0,
                length_ms=length - 2 * depth * NESTED_MS,
                outcome=outcome,
                extra=None if depth else extra_attributes,
            )
    return length, outcome


def _own_trace(walk: _Walk, flipped: dict[str, str] | None = None) -> _Walk:
    """A walk for a trace of its own that ``walk`` starts: its upper 64 bits drawn from
    ``walk``'s generator (seeded by walk's trace id), its lower 64 bits ``walk``'s, so the
    sampler, which reads only those, keeps it exactly when it keeps ``walk``'s trace; its
    own generator is seeded by its id."""
    high = walk.r.getrandbits(64)
    trace_id = f"{high:016x}{walk.trace_id[16:]}"
    r = random.Random(int(trace_id, 16))
    flips = {} if flipped is None else flipped
    return _Walk(trace_id, walk.scene, walk.edges, walk.tracing, r, walk.shapes, flipped=flips)


def _detached(walk: _Walk, caller: str, call: Call, start: float) -> float:
    """A call through a client that injects no trace context: the callee's spans root a
    trace of their own, which shares the request trace's lower 64 bits (as a consumer's
    does, ``_consume``), so it is kept exactly when the request's is. The caller opens no
    span for it. Returns the time (s) at which the caller has its answer."""
    own = _own_trace(walk, walk.flipped)
    took, _ = _call(own, caller, call, "", start)
    walk.spans.extend(own.spans)
    return start + took / 1000.0


def _calls(
    walk: _Walk, service: str, calls: tuple[Call, ...], parent: str, cursor: float
) -> tuple[float, str]:
    """A handler's calls one after another from ``cursor`` (s); a failed call it does not
    tolerate fails the handler there. Returns (the cursor after them, outcome)."""
    for call in calls:
        for _ in range(call.count):
            took, result = _call(walk, service, call, parent, cursor)
            cursor += took / 1000.0
            if result != "ok" and call.fatal:
                return cursor, "handler"
    return cursor, "ok"


def _call(walk: _Walk, caller: str, call: Call, parent: str, start: float) -> tuple[float, str]:
    """One outgoing call of ``caller``: its client span (where the caller's libraries open
    one) and the callee's handler. Returns (its length in ms, outcome)."""
    scene, r = walk.scene, walk.r
    services = scene.services
    callee = services.get(call.callee) or _ABSENT
    egress = (services.get(caller) or _IDLE).egress_ms
    shape = walk.shapes.client(caller, call.callee, call.op)
    span_id = f"{r.getrandbits(64):016x}" if shape is not None else parent
    p_edge, edge_kind = walk.edges.get((caller, call.callee), (0.0, ""))
    deadline = call.deadline_ms
    if r.random() < p_edge or not callee.ready:
        kind = edge_kind.split("@", 1)[0] if p_edge > 0 and callee.ready else "unavailable"
        took = CONNECT_FAIL_MS.get(kind, CONNECT_TIMEOUT_MS) + egress
        outcome = "connect"
        if deadline is not None and took >= deadline:
            took, outcome = deadline, "deadline"
    else:
        server_start = start + (egress + HOP_MS / 2) / 1000.0
        served, outcome = _handle(
            walk,
            call.callee,
            call.op,
            call.children,
            parent=span_id,
            start=server_start,
            extra_ms=callee.caller_extra.get(caller, callee.extra_ms),  # ServiceView.extra_for
        )
        took = served + egress + HOP_MS
        if deadline is not None:
            budget = deadline - took
            late = took > deadline or r.random() < scene.pause_late(call.callee, budget)
            if late:
                took, outcome = deadline, "deadline"
    handler = walk.handlers.get(parent) if walk.marks is not None and outcome != "ok" else None
    if handler is not None and handler[0] == caller and walk.marks is not None:
        walk.marks.append((walk.trace_id, caller, "failed", call.callee, handler[1]))
    if shape is not None and not walk.muted:
        traced = walk.tracing.services[caller]  # a client shape means a traced caller
        ids = (span_id, parent)
        _emit(walk, traced.service_name, shape, ids, start=start, length_ms=took, outcome=outcome)
        if shape.kind == "producer" and outcome == "ok":
            _consume(walk, call.callee, call.op, sent=start + took / 1000.0)
    return took, outcome


_BLOCK_BITS = 11
"""Low bits of a trace id below a double's 53-bit precision: drawn uniformly apart."""


def _kept_ids(draws: random.Random, expected: float, bound: int) -> Iterator[tuple[int, int]]:
    """The (upper, lower 64 bits) ids of one piece's kept requests, lowest lower half first.

    A piece serves a Poisson number of requests (mean ``expected``) whose ids are uniform;
    equivalently, their lower halves, read as fractions of 2**64, are the points of a
    Poisson process of intensity ``expected`` on [0, 1), walked here in increasing order by
    exponential gaps. The walk stops at the first point above the sampling bound
    (``schema.traces.kept_bound``), so only kept requests cost anything, every id yielded
    satisfies ``keeps_trace``, and a lower rate keeps a prefix of a higher rate's requests:
    the same requests with the same ids, as ``TraceIdRatioBased`` would.
    """
    if expected <= 0.0 or bound <= 0:
        return
    point = 0.0
    expovariate, getrandbits = draws.expovariate, draws.getrandbits
    while True:
        point += expovariate(expected)
        block = int(point * (1 << 53)) << _BLOCK_BITS  # exact: point < 1 has 53 bits
        if block >= bound:
            return
        low = block | getrandbits(_BLOCK_BITS)
        high = getrandbits(64)
        if low < bound:  # the bound's own block: past the bound, but later points may not be
            yield high, low


def _consume(walk: _Walk, queue: str, op: str, *, sent: float) -> None:
    """What the consumers of ``queue`` open for the message a producer span sent at
    ``sent``: each ready consumer's handler, as the root of a trace of its own (its
    instrumentation starts the span before the record is read, so no propagated context
    is its parent; the link to the producer span is not a parent, and a ``Span`` carries
    no links). Its id shares the producer trace's lower 64 bits, so it is kept exactly
    when the producer's trace is (``keeps_trace`` reads only those): the kept share is the
    manifest's rate without walking the traces that are not kept.

    A consumer that is down reads the message after it is back, outside this walk: left
    out (the message's later spans are not simulated)."""
    for consumer in walk.tracing.consumers.get(queue, ()):
        view = walk.scene.services.get(consumer)
        if view is None or not view.ready:
            continue
        own = _own_trace(walk)
        own.marks, own.handlers = walk.marks, walk.handlers
        start = sent + QUEUE_LAG_MS / 1000.0
        _handle(own, consumer, op, (), parent="", start=start, extra_ms=view.extra_for(queue))
        walk.spans.extend(own.spans)


def _request(
    walk: _Walk,
    topology: Topology,
    scope: str,
    *,
    start: float,
    extra_ms: float,
    attributes: dict[str, AttributeValue],
) -> None:
    """One user request at the entry point, under its client's spans when the client is
    traced (``Tracing.origin``: the task span, drawn by weight among the tasks that send
    this route, and the HTTP library's client span), else as the trace's root."""
    entry, calls = topology.entrypoint, route_calls(topology, scope)
    origin = walk.tracing.origin
    client = walk.tracing.services.get(origin.deployment) if origin is not None else None
    if origin is None or client is None:
        _handle(
            walk,
            entry,
            scope,
            calls,
            parent="",
            start=start,
            extra_ms=extra_ms,
            extra_attributes=attributes,
        )
        return
    tasks = origin.tasks(scope)
    pick, around = walk.r.random() * sum(w for w, _ in tasks), tasks[-1][1]
    for weight, shapes in tasks:
        if pick < weight:
            around = shapes
            break
        pick -= weight
    request = walk.shapes.client(origin.deployment, entry, scope)
    task_ids = [walk.new_id() for _ in around]
    request_id = walk.new_id() if request is not None else task_ids[-1]
    sent = start + len(around) * NESTED_MS / 1000.0
    served, outcome = _handle(
        walk,
        entry,
        scope,
        calls,
        parent=request_id,
        start=sent + HOP_MS / 2000.0,
        extra_ms=extra_ms,
        extra_attributes=attributes,
    )
    took = served + HOP_MS
    name = client.service_name
    if request is not None:
        ids = (request_id, task_ids[-1])
        _emit(walk, name, request, ids, start=sent, length_ms=took, outcome=outcome)
    for depth, shape in enumerate(around):
        ids = (task_ids[depth], task_ids[depth - 1] if depth else "")
        if walk.marks is not None:
            names = "/".join(s.name for s in around[: depth + 1])
            walk.marks.append((walk.trace_id, origin.deployment, "task", names, ids[0]))
        at = start + depth * NESTED_MS / 1000.0
        length = took + 2 * (len(around) - depth) * NESTED_MS
        _emit(walk, name, shape, ids, start=at, length_ms=length, outcome="ok")


class SpanSource:
    """The spans of a simulated system's requests, window by window (``TraceSource``)."""

    def __init__(self, topology: Topology, seed: int, users: int) -> None:
        self.topology, self.seed, self.users = topology, seed, users
        system = system_of(topology)
        self.tracing: Tracing = system.tracing
        self.path_ids = system.path_ids
        self._draws = random.Random()
        self._shapes = _Shapes(self.tracing)
        self._edges: tuple[object, dict[tuple[str, str], tuple[float, str]]] | None = None

    def edges_of(
        self, scene: Scene, timelines: dict[str, PodTimeline]
    ) -> dict[tuple[str, str], tuple[float, str]]:
        """The scene's per-edge failures (the same rule the scene used), once per stretch."""
        if self._edges is not None and self._edges[0] is scene.services:
            return self._edges[1]
        edges, _ = _edge_faults(self.topology, timelines, scene.services, scene.t, {})
        self._edges = (scene.services, edges)
        return edges

    def window(
        self,
        window: TimeWindow,
        timelines: dict[str, PodTimeline],
        scene_at: Callable[[float], Scene],
        cuts: list[float],
        sample: float,
    ) -> Iterator[list[Span]]:
        """Every kept span that starts in ``window``, in batches of about ``BATCH_SPANS``."""
        start, end = window
        if end < start or not self.tracing.services:
            return
        batch: list[Span] = []
        for bucket in range(math.floor(start / BUCKET_S), math.floor(end / BUCKET_S) + 1):
            lo = bucket * BUCKET_S
            for index, (a, b) in enumerate(pieces(lo, lo + BUCKET_S, cuts)):
                if b <= start or a > end:
                    continue
                scene = scene_at((a + b) / 2)
                edges = self.edges_of(scene, timelines)
                flipped = flipped_flags(timelines, (a + b) / 2)
                key = (bucket, index)
                for spans in chain(
                    self._piece(scene, edges, key, (a, b), sample, flipped=flipped),
                    self._side(scene, edges, key, (a, b), sample, flipped),
                ):
                    batch.extend(s for s in spans if start <= s.start <= end)
                if len(batch) >= BATCH_SPANS:
                    yield batch
                    batch = []
        if batch:
            yield batch

    def _side(  # noqa: PLR0917 - _piece's arguments
        self,
        scene: Scene,
        edges: dict[tuple[str, str], tuple[float, str]],
        key: tuple[int, int],
        bounds: tuple[float, float],
        sample: float,
        flipped: dict[str, str],
    ) -> Iterator[list[Span]]:
        """The kept side traces that started in one bucket piece (``sidetraces``), each a
        root call of the traced client, drawn apart from the routes' requests."""
        a, b = bounds
        calls = side_calls(self.tracing, self.topology, self.users, scene, flipped)
        for task, rate, caller, call in calls:
            self._draws.seed(key_int(self.seed, "spans", "side", task, *key))
            for high, low in _kept_ids(self._draws, rate * (b - a), kept_bound(sample)):
                r = random.Random(high << 64 | low)
                walk = _Walk(f"{high:016x}{low:016x}", scene, edges, self.tracing, r, self._shapes)
                walk.flipped = flipped
                _call(walk, caller, call, "", a + (b - a) * r.random())
                walk.spans.sort(key=lambda s: s.start)
                yield walk.spans

    def _piece(
        self,
        scene: Scene,
        edges: dict[tuple[str, str], tuple[float, str]],
        key: tuple[int, int],
        bounds: tuple[float, float],
        sample: float,
        *,
        flipped: dict[str, str],
    ) -> Iterator[list[Span]]:
        """The kept traces of the requests that arrived in one bucket piece."""
        for walk in self.walks(scene, edges, key, bounds, sample, flipped=flipped):
            yield walk.spans

    def walks(  # noqa: PLR0917 - _piece's arguments, and whether to mark
        self,
        scene: Scene,
        edges: dict[tuple[str, str], tuple[float, str]],
        key: tuple[int, int],
        bounds: tuple[float, float],
        sample: float,
        marks: list[Mark] | None = None,
        *,
        flipped: dict[str, str],
    ) -> Iterator[_Walk]:
        """The walks of one bucket piece's kept requests (those that opened a span); with
        ``marks``, each walk appends to it the spans the services' code runs in. ``flipped``:
        the flags a flag fault flips in the piece (``flagspans.flipped_flags``), so a walk
        made for the ``tracebook`` is the same as the one made for the spans."""
        a, b = bounds
        topology = self.topology
        entry = topology.entrypoint
        front = scene.services.get(entry) or ServiceView()
        draws = self._draws
        bound = kept_bound(sample)
        for route in topology.routes:
            view = scene.routes.get(route.scope)
            if view is None:
                continue
            reach = (view.rate + view.redirected) * (1 - view.user_dns[0])
            reach *= (1 - view.frontend_down) * (1 - view.abort_share)
            draws.seed(key_int(self.seed, "spans", "requests", route.scope, *key))
            for high, low in _kept_ids(draws, reach * (b - a), bound):
                trace_id = f"{high:016x}{low:016x}"
                r = random.Random(high << 64 | low)
                walk = _Walk(trace_id, scene, edges, self.tracing, r, self._shapes)
                walk.flipped = flipped
                if marks is not None:
                    walk.marks = marks
                arrived = a + (b - a) * r.random()
                path = route.path
                if path.endswith("*") and self.path_ids:
                    path = path[:-1] + r.choice(self.path_ids)
                attrs: dict[str, AttributeValue] = {}
                if self.tracing.path_attribute is not None:
                    attrs[self.tracing.path_attribute] = self.tracing.path_prefix + path
                extra = front.extra_for(topology.load_generator or "") + front.egress_ms
                _request(
                    walk, topology, route.scope, start=arrived, extra_ms=extra, attributes=attrs
                )
                if walk.spans:
                    walk.spans.sort(key=lambda s: s.start)
                    yield walk
