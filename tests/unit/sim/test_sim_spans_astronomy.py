"""The Astronomy Shop's traces beyond the request path's services: the load generator roots
each request's trace, product-reviews opens its own spans around its queries and its calls
to the uninstrumented llm, and the Kafka consumers start traces of their own."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from r2act.campaigns import Manifest, plan_incidents, render_chaos
from r2act.cluster.sim import SimulatedCluster
from r2act.schema import FaultType, PlannedIncident, TimeWindow
from r2act.schema.traces import Span, keeps_trace
from r2act.systems import SYSTEMS, get_system

from .conftest import NO_GLITCHES
from .test_sim_spans_flagd import SEMCONV_KEYS

WINDOW_S = 240.0


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[SimulatedCluster, TimeWindow]:
    cluster = SimulatedCluster(
        tmp_path_factory.mktemp("as"),
        seed=11,
        users=get_system("astronomyshop").users,
        topology=SYSTEMS["astronomyshop"],
        glitches=NO_GLITCHES,
    )
    cluster.clock.sleep(WINDOW_S + 120.0)
    now = cluster.clock.now()
    return cluster, TimeWindow(now - WINDOW_S, now)


def _spans(shop: tuple[SimulatedCluster, TimeWindow], sample: float = 1.0) -> list[Span]:
    cluster, window = shop
    return [s for batch in cluster.traces(window, sample) for s in batch]


def _traces(spans: list[Span]) -> dict[str, list[Span]]:
    traces: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        traces[span.trace_id].append(span)
    return traces


def _chain(span: Span, ids: dict[str, Span]) -> list[Span]:
    """The span and its ancestors, innermost first."""
    chain = [span]
    while chain[-1].parent_id:
        chain.append(ids[chain[-1].parent_id])
    return chain


def test_each_request_is_a_child_of_the_load_generators_client_span(
    shop: tuple[SimulatedCluster, TimeWindow],
) -> None:
    spans = _spans(shop)
    ids = {s.span_id: s for s in spans}
    ingress = [s for s in spans if s.service == "frontend-proxy" and s.kind == "server"]
    assert len(ingress) > 100
    roots: defaultdict[str, set[str]] = defaultdict(set)
    for span in ingress:
        request, *tasks = _chain(span, ids)[1:]
        assert request.service == "load-generator" and request.kind == "client"
        assert request.operation == span.attributes["http.method"]
        assert request.trace_id == span.trace_id
        assert request.start <= span.start
        assert span.start + span.duration_s <= request.start + request.duration_s
        assert tasks and all(t.service == "load-generator" for t in tasks)
        assert all(t.kind == "internal" and t.operation.startswith("user_") for t in tasks)
        path = str(span.attributes["http.url"]).split(":8080", 1)[1]
        route = path.split("/")[2] if path.startswith("/api/") else path
        roots[route].add("/".join(t.operation for t in reversed(tasks)))
    # An order is sent only by the checkout tasks, outside their add-to-cart rounds; a
    # product page by browsing, or inside an add-to-cart round (of a checkout or not).
    assert roots["checkout"] == {"user_checkout_single", "user_checkout_multi"}
    assert "user_checkout_multi/user_add_to_cart" in roots["products"]
    assert {"user_browse_product", "user_add_to_cart"} <= roots["products"]


def test_a_failed_request_fails_the_client_span_not_the_task(tmp_path: Path) -> None:
    """requests' client span is an error from a 4xx/5xx answer; the task spans set none."""
    shapes = get_system("astronomyshop").tracing
    client = shapes.services["load-generator"].client("frontend-proxy", "POST /api/checkout")
    assert client is not None
    assert client.is_error(500) and client.is_error(404) and not client.is_error(200)
    assert shapes.origin is not None
    for _, around in shapes.origin.tasks("POST /api/checkout"):
        assert all(not s.is_error(500) for s in around)


def test_product_reviews_spans_wrap_its_queries_and_the_llm_shows_only_as_client_spans(
    shop: tuple[SimulatedCluster, TimeWindow],
) -> None:
    spans = _spans(shop)
    ids = {s.span_id: s for s in spans}
    assert not [s for s in spans if s.service == "llm"]
    queries = [s for s in spans if s.service == "product-reviews" and s.operation == "SELECT"]
    llm = [s for s in spans if s.service == "product-reviews" and s.operation.startswith("chat")]
    assert queries and llm
    for span in queries + llm:
        own, server = _chain(span, ids)[1:3]
        assert own.kind == "internal" and server.kind == "server"
        assert server.operation.startswith("/oteldemo.ProductReviewService/")
        assert span.kind == "client"
    assert {ids[s.parent_id].operation for s in llm} == {"get_ai_assistant_response"}
    assert {ids[s.parent_id].operation for s in queries} == {
        "get_product_reviews",
        "get_ai_assistant_response",
    }
    assert {s.operation for s in llm} == {"chat astronomy-llm"}
    assert all(s.attributes["server.address"] == "llm" for s in llm)


def _publishes(spans: list[Span]) -> list[Span]:
    return [s for s in spans if s.kind == "producer" and s.operation == "orders publish"]


def test_each_order_message_starts_a_trace_in_each_consumer(
    shop: tuple[SimulatedCluster, TimeWindow],
) -> None:
    spans = _spans(shop)
    traces = _traces(spans)
    publishes = {s.trace_id[16:]: s for s in _publishes(spans)}
    assert len(publishes) >= 5
    consumed: defaultdict[str, list[str]] = defaultdict(list)
    for members in traces.values():
        root = next(s for s in members if not s.parent_id)
        if root.service not in ("accounting", "fraud-detection"):
            continue
        sent = publishes[root.trace_id[16:]]  # the lower half of the order's trace id
        assert root.trace_id != sent.trace_id
        assert root.start >= sent.start + sent.duration_s
        consumed[root.service].append("/".join(s.operation for s in members))
    assert set(consumed["accounting"]) == {"order-consumed/orders receive/postgresql"}
    assert set(consumed["fraud-detection"]) == {"orders receive/orders process"}
    assert len(consumed["accounting"]) == len(consumed["fraud-detection"]) == len(publishes)


def test_a_consumers_trace_is_kept_with_the_order_it_consumes(
    shop: tuple[SimulatedCluster, TimeWindow],
) -> None:
    every = _traces(_spans(shop))
    kept = _traces(_spans(shop, 0.3))
    assert set(kept) <= set(every) and all(keeps_trace(t, 0.3) for t in kept)
    orders = {s.trace_id[16:] for s in _publishes([s for t in kept.values() for s in t])}
    consumers = [
        t for t, members in kept.items() if members[0].service in ("accounting", "fraud-detection")
    ]
    assert consumers and {t[16:] for t in consumers} == orders


def _pod_failure(tmp_path: Path, service: str) -> tuple[SimulatedCluster, PlannedIncident, str]:
    """A fresh shop, 200 s healthy, then 60 s of a pod failure of ``service`` (returns the
    chaos object's name)."""
    manifest = Manifest.model_validate(
        {
            "name": "t",
            "system": "astronomyshop",
            "target": {"kind": "sim"},
            "services": [service],
            "faults": [{"type": "pod_failure", "intensities": ["severe"]}],
        },
        strict=False,
    )
    (planned,) = plan_incidents(manifest)
    cluster = SimulatedCluster(
        tmp_path,
        seed=4,
        users=get_system("astronomyshop").users,
        topology=SYSTEMS["astronomyshop"],
        glitches=NO_GLITCHES,
    )
    cluster.clock.sleep(200)
    ref = cluster.inject(render_chaos(planned, "default", SYSTEMS["astronomyshop"]))
    cluster.clock.sleep(60)
    return cluster, planned, ref.name


def test_a_consumer_that_is_down_opens_no_trace_and_no_span_carries_the_answer(
    tmp_path: Path,
) -> None:
    cluster, planned, chaos_name = _pod_failure(tmp_path, "accounting")
    now = cluster.clock.now()
    during = [s for b in cluster.traces(TimeWindow(now - 50, now), 1.0) for s in b]
    before = [s for b in cluster.traces(TimeWindow(now - 240, now - 60), 1.0) for s in b]
    assert {"accounting", "fraud-detection"} <= {s.service for s in before}
    assert "accounting" not in {s.service for s in during}
    assert _publishes(during) and "fraud-detection" in {s.service for s in during}
    answers = {planned.id, chaos_name, "chaos", *(f.value for f in FaultType)}
    answers |= {f.value.replace("_", "-") for f in FaultType}
    for span in before + during:
        # flagd's feature_flag.* keys (the conventions' namespace, set on every evaluation)
        # spell the fault type by accident: every other key and every value is checked.
        keys = (k for k in span.attributes if not k.startswith(SEMCONV_KEYS))
        text = " ".join([*keys, *(str(v) for v in span.attributes.values())]).lower()
        text += f" {span.operation.lower()}"
        assert not any(a.lower() in text for a in answers), span


def test_a_python_handlers_own_span_is_an_error_when_its_call_raises(tmp_path: Path) -> None:
    """product-catalog down: recommendation's ``ListProducts`` call raises out of its
    ``get_product_list`` block, which the Python SDK marks as an error, like the gRPC span."""
    cluster, _, _ = _pod_failure(tmp_path, "product-catalog")
    now = cluster.clock.now()
    during = [s for b in cluster.traces(TimeWindow(now - 50, now), 1.0) for s in b]
    before = [s for b in cluster.traces(TimeWindow(now - 240, now - 60), 1.0) for s in b]

    def listing(spans: list[Span]) -> set[str]:
        return {s.status for s in spans if s.operation == "get_product_list"}

    assert listing(before) == {"unset"}
    assert listing(during) == {"error"}


def test_the_llm_is_not_instrumented_in_its_source(reference_dir: Path) -> None:
    src = reference_dir / "opentelemetry-demo-2.2.0/src/llm"
    assert "opentelemetry" not in (src / "requirements.txt").read_text().lower()
    entry = (src / "Dockerfile").read_text().split("\n")[25]
    assert entry.startswith("ENTRYPOINT") and "opentelemetry-instrument" not in entry
    assert "import opentelemetry" not in (src / "app.py").read_text()
    tracing = get_system("astronomyshop").tracing
    assert "llm" in tracing.not_instrumented and "llm" not in tracing.services
    assert not tracing.pending and "flagd" in tracing.services
