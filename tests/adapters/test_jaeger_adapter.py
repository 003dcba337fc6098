"""The Jaeger query-API adapter (cluster/jaeger.py) against a Jaeger emulator over real HTTP."""

from __future__ import annotations

import json
import random
import socket
from collections.abc import Iterator

import pytest
from jaeger_emulator import JaegerServer, JaegerStore, RawSpan, tag, trace

from r2act.cluster.jaeger import HttpGet, JaegerTraces, span_of
from r2act.cluster.retry import NO_WAIT, RetryPolicy
from r2act.errors import PermanentClusterError, TransientClusterError
from r2act.schema import TimeWindow
from r2act.schema.traces import keeps_trace

T0 = 1_780_000_000  # seconds
US = 1_000_000


@pytest.fixture
def store() -> JaegerStore:
    return JaegerStore()


@pytest.fixture
def server(store: JaegerStore) -> Iterator[JaegerServer]:
    with JaegerServer(store) as running:
        yield running


def reader(server: JaegerServer, **options: object) -> JaegerTraces:
    http = HttpGet(server.url, timeout_s=5.0)
    options.setdefault("retry", NO_WAIT)
    return JaegerTraces(http, where=server.url, close=http.close, **options)  # type: ignore[arg-type]


def checkout_trace(trace_id: str, start_s: float, *, failed: bool = False) -> dict[str, object]:
    """frontend's server span, its client call and checkout's server span: two services."""
    t = int(start_s * US)
    status = ("otel.status_code", "ERROR") if failed else ("otel.status_code", "OK")
    return trace(
        trace_id,
        RawSpan(
            "a1" * 8,
            "frontend",
            "HTTP POST",
            t,
            40_000,
            tags=(("span.kind", "server"), ("http.method", "POST"), ("http.status_code", 200)),
        ),
        RawSpan(
            "b2" * 8,
            "frontend",
            "hipstershop.CheckoutService/PlaceOrder",
            t + 1_000,
            30_000,
            parent="a1" * 8,
            tags=(
                ("span.kind", "client"),
                ("rpc.system", "grpc"),
                ("otel.scope.name", "go.opentelemetry.io/contrib/grpc"),
                status,
                *((("error", True),) if failed else ()),
            ),
        ),
        RawSpan(
            "c3" * 8,
            "checkoutservice",
            "hipstershop.CheckoutService/PlaceOrder",
            t + 2_000,
            25_000,
            parent="b2" * 8,
            tags=(
                ("span.kind", "server"),
                ("rpc.grpc.status_code", 0),
                ("internal.span.format", "otlp"),
            ),
        ),
    )


def ids(rng: random.Random) -> str:
    return f"{rng.getrandbits(128):032x}"


def test_a_jaeger_span_becomes_a_span_with_kind_status_parent_service_and_attributes() -> None:
    raw = checkout_trace("0af7651916cd43dd8448eb211c80319c", T0 + 1, failed=True)
    spans = {s["spanID"]: span_of(s, raw["processes"]) for s in raw["spans"]}  # type: ignore[index]
    root, client, server = spans["a1" * 8], spans["b2" * 8], spans["c3" * 8]
    assert root.parent_id == "" and root.kind == "server" and root.status == "unset"
    assert root.attributes == {"http.method": "POST", "http.status_code": 200}
    assert client.parent_id == root.span_id and client.kind == "client"
    assert client.status == "error"
    # The translation's own tags are not attributes; the instrumentation's are.
    assert client.attributes == {"rpc.system": "grpc"}
    assert server.service == "checkoutservice" and server.parent_id == client.span_id
    assert server.attributes == {"rpc.grpc.status_code": 0}
    assert server.start == pytest.approx(T0 + 1 + 0.002)
    assert server.duration_s == pytest.approx(0.025)
    assert root.trace_id == "0af7651916cd43dd8448eb211c80319c"


def test_ids_are_padded_follows_from_is_no_parent_and_ok_status_is_read() -> None:
    raw = trace("7b", RawSpan("1f", "currencyservice", "Convert", T0 * US, 10))
    span = raw["spans"][0]  # type: ignore[index]
    span["references"] = [{"refType": "FOLLOWS_FROM", "traceID": "7b", "spanID": "2"}]
    span["tags"] = [tag("otel.status_code", "OK"), tag("span.kind", "producer")]
    out = span_of(span, raw["processes"])  # type: ignore[arg-type]
    assert out.trace_id == "0" * 30 + "7b" and out.span_id == "0" * 14 + "1f"
    assert out.parent_id == "" and out.status == "ok" and out.kind == "producer"
    span["tags"] = []
    assert span_of(span, raw["processes"]).kind == "internal"  # type: ignore[arg-type]


def test_a_trace_through_two_services_is_read_once_and_only_inside_the_window(
    store: JaegerStore, server: JaegerServer
) -> None:
    store.traces = [
        checkout_trace("11" * 16, T0 + 10),
        checkout_trace("22" * 16, T0 + 20),
        checkout_trace("33" * 16, T0 - 50),  # before the window
    ]
    window = TimeWindow(start=T0, end=T0 + 60)
    spans = [s for batch in reader(server).traces(window, 1.0) for s in batch]
    keys = [(s.trace_id, s.span_id) for s in spans]
    assert len(keys) == len(set(keys)) == 6  # each span once, though both services return it
    assert {s.trace_id for s in spans} == {"11" * 16, "22" * 16}
    assert {s.service for s in spans} == {"frontend", "checkoutservice"}
    asked = [p for path, p in store.asked if path == "/api/traces"]
    assert {p["service"] for p in asked} == {"frontend", "checkoutservice"}
    assert all(int(p["start"]) == T0 * US and int(p["end"]) == (T0 + 60) * US for p in asked)


def test_sampling_keeps_whole_traces_by_trace_id(store: JaegerStore, server: JaegerServer) -> None:
    rng = random.Random(7)
    trace_ids = [ids(rng) for _ in range(60)]
    store.traces = [checkout_trace(t, T0 + 1 + i) for i, t in enumerate(trace_ids)]
    window = TimeWindow(start=T0, end=T0 + 120)
    spans = [s for batch in reader(server).traces(window, 0.3) for s in batch]
    kept = {s.trace_id for s in spans}
    assert kept == {t for t in trace_ids if keeps_trace(t, 0.3)}
    assert 0 < len(kept) < len(trace_ids)
    for trace_id in kept:  # whole traces: all three spans of each
        assert sum(1 for s in spans if s.trace_id == trace_id) == 3


def test_a_busy_window_is_split_until_no_answer_fills_the_limit(
    store: JaegerStore, server: JaegerServer
) -> None:
    rng = random.Random(3)
    trace_ids = [ids(rng) for _ in range(50)]
    store.traces = [checkout_trace(t, T0 + 0.5 + i) for i, t in enumerate(trace_ids)]
    window = TimeWindow(start=T0, end=T0 + 60)
    batches = list(reader(server, limit=8).traces(window, 1.0))
    assert {s.trace_id for b in batches for s in b} == set(trace_ids)
    assert all(len({s.trace_id for s in b}) < 8 for b in batches)  # streamed in bounded pieces
    assert len(batches) > 2


def test_5xx_answers_are_retried_then_read(store: JaegerStore, server: JaegerServer) -> None:
    store.traces = [checkout_trace("44" * 16, T0 + 5)]
    store.failures = [503, 502]
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=3, initial_wait_s=0.01, max_wait_s=0.01, sleep=sleeps.append)
    spans = [
        s
        for b in reader(server, retry=policy).traces(TimeWindow(start=T0, end=T0 + 9), 1.0)
        for s in b
    ]
    assert len(spans) == 3
    assert len(sleeps) == 2 and store.asked[0][0] == store.asked[2][0] == "/api/services"


def test_a_5xx_that_persists_and_a_4xx_fail_with_the_store_and_the_fix(
    store: JaegerStore, server: JaegerServer
) -> None:
    store.failures = [503] * 5
    with pytest.raises(TransientClusterError, match=r"unreachable.*HTTP 503.*deploy/tracing"):
        reader(server).services()
    assert len(store.asked) == 5  # the policy's five attempts
    store.failures = [404]
    with pytest.raises(PermanentClusterError, match=r"refused /api/services.*HTTP 404") as info:
        reader(server).services()
    assert not isinstance(info.value, TransientClusterError)
    assert len(store.asked) == 6  # a 4xx is not retried


def test_an_unreachable_store_is_a_clear_transient_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/jaeger/ui"
    http = HttpGet(url, timeout_s=2.0)
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=2, initial_wait_s=0.0, max_wait_s=0.0, sleep=sleeps.append)
    with pytest.raises(TransientClusterError, match=rf"{url} unreachable.*traces.store"):
        list(
            JaegerTraces(http, where=url, retry=policy).traces(
                TimeWindow(start=T0, end=T0 + 1), 1.0
            )
        )
    assert len(sleeps) == 1


def test_receiving_needs_a_recent_span_of_an_instrumented_service(
    store: JaegerStore, server: JaegerServer
) -> None:
    emitters = {"frontend", "checkoutservice", "cartservice"}
    traces = reader(server)
    problem = traces.receiving(emitters, now=T0 + 100, recent_s=120)
    assert problem is not None and "no spans of an instrumented service" in problem
    assert "lists: none" in problem
    store.traces = [checkout_trace("55" * 16, T0 - 500)]
    problem = traces.receiving(emitters, now=T0 + 100, recent_s=120)
    assert problem is not None and "no span in the last 120s" in problem
    store.traces.append(checkout_trace("66" * 16, T0 + 30))
    assert traces.receiving(emitters, now=T0 + 100, recent_s=120) is None
    assert traces.receiving({"cartservice"}, now=T0 + 100, recent_s=120) is not None
    store.failures = [503] * 5
    problem = traces.receiving(emitters, now=T0 + 100, recent_s=120)
    assert problem is not None and "unreachable" in problem


def test_an_answer_with_errors_is_retried_and_a_page_that_is_no_json_is_refused(
    store: JaegerStore, server: JaegerServer
) -> None:
    store.traces = [checkout_trace("77" * 16, T0 + 5)]
    failed = {"data": None, "total": 0, "limit": 0, "offset": 0, "errors": [{"code": 500}]}
    store.bodies = [json.dumps(failed).encode()]
    assert reader(server).services() == ["checkoutservice", "frontend"]
    assert len(store.asked) == 2
    # A URL without the base path reaches the UI's HTML page, not the API.
    store.bodies = [b"<!doctype html><html><title>Jaeger UI</title></html>"]
    with pytest.raises(PermanentClusterError, match=r"no JSON.*base path"):
        reader(server).services()
    assert len(store.asked) == 3
