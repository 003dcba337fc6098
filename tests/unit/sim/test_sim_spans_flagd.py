"""The Astronomy Shop's flag evaluations and accounting's database write in its traces.

cart evaluates ``cartFailure`` over gRPC on every ``EmptyCart`` (its provider caches
nothing), so each shows as cart's client span and flagd's three server-side spans; a flag
fault changes the variant flagd reports, not the shape; a flagd that is down shows only as
cart's failing client span. accounting's order write is one Npgsql span per order.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from r2act.cluster.base import MANAGED_BY, MANAGED_BY_LABEL
from r2act.cluster.flag_fault_object import FlagChange, render
from r2act.cluster.sim import SimulatedCluster
from r2act.schema import FaultType, TimeWindow
from r2act.schema.traces import Span
from r2act.systems import get_system
from r2act.systems.astronomyshop import tracing as as_tracing

from .shop_support import shop as _shop
from .shop_support import spans_with_flagd_down

FLAGD_CHAIN = (
    "flagd.evaluation.v1.Service/ResolveBoolean",
    "resolveBoolean",
    "resolveBoolean",
)
"""flagd's spans per evaluation, outermost first (otelconnect, the handler, the evaluator)."""
EMPTY_CART = "POST /oteldemo.CartService/EmptyCart"
RPC = "flagd.evaluation.v1.Service"
"""flagd's evaluation service (otelconnect names its server span ``<service>/<method>``)."""
SEMCONV_KEYS = ("feature_flag.",)
"""The OpenTelemetry feature-flag conventions' attribute namespace, which flagd sets on every
evaluation whatever the fault (``core/pkg/telemetry/utils.go`` at flagd v0.12.9): its name
happens to spell the fault type ``feature_flag``, so keys in it are not an answer."""


def _spans(cluster: SimulatedCluster, window: TimeWindow) -> list[Span]:
    return [s for batch in cluster.traces(window, 1.0) for s in batch]


def _children(spans: list[Span]) -> dict[str, list[Span]]:
    found: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        found[span.parent_id].append(span)
    return found


def _evaluations(spans: list[Span]) -> list[tuple[Span, Span | None, list[Span]]]:
    """Per cart ``EmptyCart`` server span: its flagd client span and flagd's chain under it."""
    children = _children(spans)
    found = []
    for span in spans:
        if span.service != "cart" or span.operation != EMPTY_CART:
            continue
        calls = [c for c in children[span.span_id] if c.operation.startswith("flagd.")]
        assert len(calls) <= 1
        chain: list[Span] = []
        if calls:
            below = children[calls[0].span_id]
            while below:
                (only,) = below
                chain.append(only)
                below = children[only.span_id]
        found.append((span, calls[0] if calls else None, chain))
    return found


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> list[Span]:
    cluster = _shop(tmp_path_factory.mktemp("flagd"))
    cluster.clock.sleep(480.0)
    now = cluster.clock.now()
    return _spans(cluster, TimeWindow(now - 360.0, now))


def test_every_empty_cart_asks_flagd_and_flagd_answers_in_the_same_trace(
    healthy: list[Span],
) -> None:
    evaluations = _evaluations(healthy)
    assert len(evaluations) >= 10
    for handler, call, chain in evaluations:
        assert call is not None and call.kind == "client" and call.service == "cart"
        assert call.operation == "flagd.evaluation.v1.Service/ResolveBoolean"
        assert call.attributes["rpc.grpc.status_code"] == 0
        assert call.attributes["server.address"] == "flagd"
        assert tuple(s.operation for s in chain) == FLAGD_CHAIN
        assert [s.kind for s in chain] == ["server", "server", "internal"]
        assert {s.service for s in chain} == {"flagd"}
        assert {s.trace_id for s in (handler, call, *chain)} == {handler.trace_id}
        assert call.start >= handler.start
        assert call.start + call.duration_s <= handler.start + handler.duration_s + 1e-6
        flagged = chain[1].attributes  # FLAGD_FLAG_ATTRIBUTES is on: flagd's own keys
        assert flagged["feature_flag.key"] == "cartFailure"
        assert flagged["feature_flag.result.variant"] == "off"  # healthy: nothing flipped
        assert flagged["feature_flag.provider.name"] == "flagd"


def test_with_flagds_attributes_on_the_handler_span_names_the_flag_and_its_variant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(as_tracing, "FLAGD_FLAG_ATTRIBUTES", True)
    cluster = _shop(tmp_path)
    cluster.clock.sleep(360.0)
    now = cluster.clock.now()
    evaluations = _evaluations(_spans(cluster, TimeWindow(now - 240.0, now)))
    assert evaluations
    for _, _, chain in evaluations:
        assert chain[1].attributes == {
            "feature_flag.key": "cartFailure",
            "feature_flag.result.variant": "off",
            "feature_flag.provider.name": "flagd",
        }
        assert chain[0].attributes["rpc.service"] == "flagd.evaluation.v1.Service"


def test_flagd_opens_spans_only_under_a_callers_evaluation(healthy: list[Span]) -> None:
    """No reader but cart and email asks flagd per request over gRPC (the others' providers
    cache), and every flagd span of the RPC service belongs to one of cart's evaluations or
    to a trace of email's own evaluation (the load generator's OFREP ones are its own
    traces: ``test_sim_spans_ofrep``)."""
    evaluated = {s.span_id for _, _, chain in _evaluations(healthy) for s in chain}
    ofrep = {s.trace_id for s in healthy if s.operation == "flagd.ofrep"}
    emails = {s.trace_id for s in healthy if s.operation == f"{RPC}/ResolveInt"}
    flagd = [s for s in healthy if s.service == "flagd" and s.trace_id not in ofrep | emails]
    assert flagd and {s.span_id for s in flagd} == evaluated
    callers = {
        s.service for s in healthy if s.operation.startswith("flagd.") and s.kind == "client"
    }
    assert callers == {"cart"}


def test_emails_evaluation_roots_a_flagd_trace_of_its_own_per_order(healthy: list[Span]) -> None:
    """email's provider (0.1.0 in the release's lock) asks flagd ``ResolveInt`` on every
    order, through a gRPC client nobody instruments: no client span, no context, so flagd's
    three spans root a trace of their own, one per ``send_email``, sharing the order
    trace's lower 64 bits (kept with it) and starting inside ``send_email``."""
    sends = {s.trace_id[16:]: s for s in healthy if s.operation == "send_email"}
    roots = [s for s in healthy if s.operation == f"{RPC}/ResolveInt"]
    assert len(sends) >= 3 and len(roots) == len(sends)
    children = _children(healthy)
    for root in roots:
        assert root.parent_id == "" and root.kind == "server" and root.service == "flagd"
        send = sends[root.trace_id[16:]]
        assert root.trace_id != send.trace_id
        assert send.start <= root.start <= send.start + send.duration_s
        (handler,) = children[root.span_id]
        assert handler.operation == "resolveInt" and handler.kind == "server"
        assert handler.attributes["feature_flag.key"] == "emailMemoryLeak"
        assert handler.attributes["feature_flag.result.variant"] == "off"
        (evaluator,) = children[handler.span_id]
        assert evaluator.kind == "internal"
        assert {s.trace_id for s in (root, handler, evaluator)} == {root.trace_id}
        assert not any(s.trace_id == root.trace_id for s in healthy if s.service != "flagd")
    assert not any(s.service == "email" and s.kind == "client" for s in healthy)


def _inject_flag(cluster: SimulatedCluster, flag: str, variant: str) -> str:
    store = get_system("astronomyshop").flag_store
    assert store is not None
    change = FlagChange(flag, variant, store.config_map, store.key, store.deployment)
    obj = render("ff-cart-test", cluster.namespace, change, {MANAGED_BY_LABEL: MANAGED_BY})
    return cluster.inject(obj).name


def _leaks(span: Span, answers: set[str]) -> bool:
    keys = " ".join(k for k in span.attributes if not k.startswith(SEMCONV_KEYS))
    text = f"{keys} {' '.join(str(v) for v in span.attributes.values())} {span.operation}"
    return any(a.lower() in text.lower() for a in answers)


def test_a_flipped_flag_changes_the_variant_flagd_reports_not_the_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With flagd's attributes on (``FLAGD_FLAG_ATTRIBUTES``); the answer check is the one
    the dataset's guard is meant to apply then (the conventions' keys exempt)."""
    monkeypatch.setattr(as_tracing, "FLAGD_FLAG_ATTRIBUTES", True)
    cluster = _shop(tmp_path, seed=4)
    cluster.clock.sleep(300.0)
    name = _inject_flag(cluster, "cartFailure", "on")
    cluster.clock.sleep(300.0)
    now = cluster.clock.now()
    before = _evaluations(_spans(cluster, TimeWindow(now - 600.0, now - 320.0)))
    during = _evaluations(_spans(cluster, TimeWindow(now - 200.0, now)))
    assert before and during

    def shape(found: list[tuple[Span, Span | None, list[Span]]]) -> set[tuple[str, ...]]:
        return {(c.operation if c else "", *(s.operation for s in chain)) for _, c, chain in found}

    assert shape(before) == shape(during)
    assert {chain[1].attributes["feature_flag.result.variant"] for _, _, chain in before} == {"off"}
    assert {chain[1].attributes["feature_flag.result.variant"] for _, _, chain in during} == {"on"}
    answers = {name, "chaos", "flagfault", *(f.value for f in FaultType)}
    answers |= {f.value.replace("_", "-") for f in FaultType}
    for span in _spans(cluster, TimeWindow(now - 600.0, now)):
        assert not _leaks(span, answers), span


def test_the_answer_check_sees_an_answer_outside_the_conventions_namespace() -> None:
    """The exemption covers only the conventions' keys: the same word elsewhere is caught."""
    span = Span("0" * 32, "1" * 16, "", "cart", "x", "internal", 0.0, 0.0, "unset", {})
    assert not _leaks(
        span._replace(attributes={"feature_flag.key": "cartFailure"}), {"feature_flag"}
    )
    assert _leaks(span._replace(attributes={"fault": "feature_flag"}), {"feature_flag"})
    assert _leaks(span._replace(attributes={"feature_flag_fault": 1}), {"feature_flag"})


def test_a_flagd_that_is_down_fails_carts_client_span_and_opens_no_span(tmp_path: Path) -> None:
    """A pod failure of flagd (planned for cart, retargeted: flagd has no catalogue cell)."""
    spans = spans_with_flagd_down(tmp_path)
    evaluations = _evaluations(spans)
    assert evaluations
    for handler, call, chain in evaluations:
        assert call is not None and call.status == "error" and not chain
        assert "rpc.grpc.status_code" in call.attributes
        assert call.attributes["rpc.grpc.status_code"] == 14  # UNAVAILABLE
        assert handler.status == "unset"  # the SDK returns the default; EmptyCart goes on
    assert "flagd" not in {s.service for s in spans}


def test_each_order_is_written_in_one_npgsql_span_under_its_receive(healthy: list[Span]) -> None:
    children = _children(healthy)
    receives = [s for s in healthy if s.service == "accounting" and s.kind == "consumer"]
    assert len(receives) >= 3
    for receive in receives:
        (write,) = children[receive.span_id]
        assert (write.service, write.operation, write.kind) == (
            "accounting",
            "postgresql",
            "client",
        )
        assert write.attributes == {
            "db.system.name": "postgresql",
            "db.namespace": "otel",
            "server.address": "postgresql",
        }
        assert write.start + write.duration_s <= receive.start + receive.duration_s + 1e-6


def test_the_chart_leaves_every_provider_remote_uncached_by_default_and_ef_core_off(
    reference_dir: Path,
) -> None:
    """No reader sets FLAGD_RESOLVER or FLAGD_CACHE (each provider's RPC default and its own
    cache default hold), and accounting's EF Core instrumentation is off."""
    rendered = (
        reference_dir / "opentelemetry-demo-chart-0.40.10/examples/default/rendered/component.yaml"
    ).read_text()
    assert "FLAGD_RESOLVER" not in rendered and "FLAGD_CACHE" not in rendered
    lines = rendered.split("\n")
    assert "OTEL_DOTNET_AUTO_TRACES_ENTITYFRAMEWORKCORE_INSTRUMENTATION_ENABLED" in lines[610]
    assert 'value: "false"' in lines[611]
    cart = reference_dir / "opentelemetry-demo-2.2.0/src/cart/src/services/CartService.cs"
    assert 'GetBooleanValueAsync("cartFailure"' in cart.read_text().split("\n")[82]


def test_flagds_citations_outside_the_reference_tree_are_at_the_charts_image_tag(
    reference_dir: Path,
) -> None:
    """flagd's source is not in the reference tree: its lines are cited at the tag of the
    image the chart runs, which the chart line in its evidence pins."""
    traced = as_tracing.TRACING.services["flagd"]
    outside = [c for c in traced.evidence if c.tree]
    inside = [c for c in traced.evidence if not c.tree]
    assert outside and inside
    image = next(c for c in inside if "ghcr.io/open-feature/flagd:" in c.fragment)
    line = (reference_dir / image.path).read_text().split("\n")[image.line - 1]
    found = re.search(r"ghcr\.io/open-feature/flagd:(v[0-9.]+)", line)
    assert found is not None
    assert {c.tree for c in outside} == {f"open-feature/flagd@flagd/{found.group(1)}"}
    loadgen = as_tracing.TRACING.services["load-generator"]  # its OFREP provider, at its pin
    email = as_tracing.TRACING.services["email"]  # the release's lock and its flagd provider
    assert {c.tree for c in email.evidence if c.tree} == {
        as_tracing.DEMO_TAG,
        as_tracing.RUBY_PROVIDER_TAG,
    }
    for traced_service in get_system("astronomyshop").tracing.services.values():
        if traced_service not in (traced, loadgen, email):
            assert not any(c.tree for c in traced_service.evidence)


def test_the_dataset_guard_exempts_the_conventions_keys_but_not_their_values() -> None:
    """The guard reads ``feature_flag.key`` and its siblings as blank (flagd sets them on
    every evaluation) but still finds a fault type's name in a value, in another key or
    in an operation, so the attributes can be on without hiding a real leak."""
    import pyarrow as pa

    from r2act.datasets.traces import answer_leaks

    words = [f.value for f in FaultType]
    clean = '{"feature_flag.key": "cartFailure", "feature_flag.result.variant": "on"}'
    leaks = [
        '{"feature_flag.key": "feature_flag"}',
        '{"app.feature_flag": "x"}',
        '{"note": "pod_failure injected"}',
    ]
    table = pa.table({"operation": ["resolveBoolean"] * 4, "attributes": [clean, *leaks]})
    assert answer_leaks(table.slice(0, 1), words) == []
    for row in range(1, 4):
        assert answer_leaks(table.slice(row, 1), words) != [], leaks[row - 1]
    op = pa.table({"operation": ["network_delay probe"], "attributes": [clean]})
    assert answer_leaks(op, words) == ["network_delay"]
    assert as_tracing.FLAGD_FLAG_ATTRIBUTES


def test_only_instrumented_handlers_declare_calls_and_each_evaluation_is_a_real_flag() -> None:
    """An uninstrumented caller would propagate no context, so its calls must not be
    walked as children of its parent: every declared caller is instrumented, every flag
    and its off variant are the system's, and the flag service is instrumented."""
    system = get_system("astronomyshop")
    tracing = system.tracing
    assert tracing.flag_service in tracing.services
    for (caller, _), evaluations in tracing.evaluations.items():
        assert caller in tracing.services
        for evaluation in evaluations:
            flag = system.flags[evaluation.flag]
            assert evaluation.off == flag.off
            assert caller in flag.readers
    for caller, _ in tracing.handler_calls:
        assert caller in tracing.services
