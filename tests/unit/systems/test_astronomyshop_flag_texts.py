"""A flag's failed calls read as the flag's code path makes them read.

When a feature flag makes a call fail, its callers print the status the flag's code path
answers with (``FeatureFlag.status``: the flag's own message) inside their client's usual
frame, the flag's reader prints its handler's line where its code logs one, and no line
speaks of a refused connection, which no flag's code path causes. Checked on the renderers
(every line a text) and on flag incidents of the simulated shop (their during-window logs).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from pathlib import Path

import pytest
from test_astronomyshop_render import (
    FakePod,
    explained,
    unexplained_collector,
    unexplained_stdout,
)

from r2act.cluster.base import MANAGED_BY, MANAGED_BY_LABEL
from r2act.cluster.flag_fault_object import FlagChange, render
from r2act.cluster.sim.cluster import SimulatedCluster
from r2act.cluster.sim.flagfault import caught
from r2act.schema import LogLine, TimeWindow
from r2act.systems.astronomyshop import ASTRONOMY_SHOP, SYSTEM
from r2act.systems.astronomyshop.errors import checkout_chain, go_grpc_error, js_grpc_error
from r2act.systems.astronomyshop.flags import FLAGS_2_2_0
from r2act.systems.astronomyshop.render_collector import CollectorPod
from r2act.systems.astronomyshop.render_proxy import proxy_request
from r2act.systems.astronomyshop.renderers import COLLECTOR_RENDERERS, RENDERERS
from r2act.systems.flags import FeatureFlag, FlagEffect, flag_error_kind

REFUSED = re.compile(r"(?i)connection refused|ECONNREFUSED|Connection_refused")
"""Any runtime's text for a connection nothing accepted."""
COLLECTOR = CollectorPod("otel-collector-agent-7k2xq")
SETTLE_S = 60.0
"""Longer than any pod's start-up, so the restarted flag service serves the flag."""
WINDOW_S = 300.0
"""A during window long enough for the rarest failing route to fail a few times."""


def _failing() -> list[FeatureFlag]:
    """The realizable flags that fail calls (each has a declared status)."""
    return [f for f in FLAGS_2_2_0.values() if f.realizable and f.effect is FlagEffect.CALL_ERRORS]


def _failing_calls() -> list[FeatureFlag]:
    """The realizable flags that make calls fail: those failing calls, and a wrong dial."""
    dial = [f for f in FLAGS_2_2_0.values() if f.realizable and f.effect is FlagEffect.DIAL_FAILURE]
    return [*_failing(), *dial]


def _lines(rendered: tuple[int, object] | None) -> list[LogLine]:
    assert rendered is not None
    n, draw = rendered
    out: list[LogLine] = []
    draw(1_780_000_000.25, random.Random(1), out)  # type: ignore[operator]
    assert n == len(out)
    return out


def test_every_failing_flag_declares_the_status_its_code_path_answers_with() -> None:
    for flag in _failing():
        assert flag.status is not None, flag.key
        assert flag.status.code, flag.key


def test_a_flags_status_reaches_the_frontends_grpc_js_error() -> None:
    kind = flag_error_kind("productCatalogFailure")
    number, name, details = js_grpc_error(kind, "product-catalog")
    assert (number, name, details) == (
        13,
        "INTERNAL",
        "Error: Product Catalog Fail Feature Flag Enabled",
    )
    out = _lines(RENDERERS.failed_call(FakePod("frontend"), "product-catalog", kind))
    assert out[0].line == "Error: 13 INTERNAL: Error: Product Catalog Fail Feature Flag Enabled"
    assert not unexplained_stdout(out)


def test_checkout_wraps_the_flags_status_as_its_charge_step_does() -> None:
    kind = flag_error_kind("paymentFailure")
    assert go_grpc_error(kind, "payment") == (
        "rpc error: code = Unknown desc = "
        "Payment request failed. Invalid token. app.loyalty.level=gold"
    )
    chain = checkout_chain(kind, "payment")
    assert chain.startswith("failed to charge card: could not charge the card: rpc error:")
    assert explained(chain)
    number, name, details = js_grpc_error(f"upstream|{kind}|payment", "checkout")
    assert (number, name, details) == (13, "INTERNAL", chain)


def test_a_status_another_service_gave_is_wrapped_by_the_reader() -> None:
    """recommendation fails on the catalog's NotFound its cache-miss branch provokes, and
    grpcio answers the frontend with the raised call error."""
    kind = flag_error_kind("recommendationCacheFailure")
    number, name, details = js_grpc_error(kind, "recommendation")
    assert (number, name) == (2, "UNKNOWN")
    assert details.startswith("Exception calling application: <_InactiveRpcError")
    assert "status = StatusCode.NOT_FOUND" in details
    assert 'details = "Product Not Found: "' in details
    assert explained(details)


@pytest.mark.parametrize("flag", _failing(), ids=lambda f: f.key)
def test_callers_and_reader_lines_of_a_flag_are_texts_without_a_refusal(
    flag: FeatureFlag,
) -> None:
    kind = flag_error_kind(flag.key)
    pairs = [
        (app, callee)
        for app in ("frontend", "checkout", flag.service)
        for callee in (flag.service, "checkout")
    ]
    if caught(ASTRONOMY_SHOP, flag):  # the engine's kind for it; its callers see success
        assert flag.status is not None and flag.status.via is not None
        kind, pairs = "flag_caught", [(flag.service, flag.status.via)]
    seen: list[LogLine] = []
    for app, callee in pairs:
        made = RENDERERS.failed_call(FakePod(app), callee, kind)
        if made is not None:
            out = _lines(made)
            assert not unexplained_stdout(out), (app, callee)
            seen.extend(out)
        relayed = COLLECTOR_RENDERERS.failed_call(FakePod(app), COLLECTOR, callee, kind)
        if relayed is not None:
            out = _lines(relayed)
            assert not unexplained_collector(out), (app, callee)
            seen.extend(out)
    assert seen and not [x.line for x in seen if REFUSED.search(x.line)]


def test_the_readers_own_lines_name_what_its_code_logs() -> None:
    ad = _lines(RENDERERS.failed_call(FakePod("ad"), "ad", flag_error_kind("adFailure")))
    assert "GetAds Failed with status Status{code=UNAVAILABLE, description=null" in ad[-1].line
    cart = _lines(RENDERERS.failed_call(FakePod("cart"), "cart", flag_error_kind("cartFailure")))
    assert "fail: cart.cartstore.ValkeyCartStore[0]" in {x.line for x in cart}
    assert cart[-1].line.endswith(
        "with detail 'Can't access cart storage. System.ApplicationException: "
        "Wasn't able to connect to redis' raised."
    )
    catalog = flag_error_kind("productCatalogFailure")
    assert RENDERERS.failed_call(FakePod("product-catalog"), "product-catalog", catalog) is None
    caught = _lines(RENDERERS.failed_call(FakePod("product-reviews"), "llm", "flag_caught"))
    assert " ERROR [main] [product_reviews_server.py:195] " in caught[0].line
    assert "Caught Exception: Error code: 429 - {'error': {'message': 'Rate limit" in caught[0].line


def test_a_request_the_frontend_answered_with_an_error_is_not_a_refused_upstream() -> None:
    proxy = FakePod("frontend-proxy")
    kind = f"upstream|{flag_error_kind('productCatalogFailure')}|product-catalog"
    answered = _lines(
        proxy_request(proxy, COLLECTOR, "GET", "/api/products/*", 0.0, (kind, "frontend"))
    )
    body = next(x.line for x in answered if x.line.startswith("Body: "))
    assert '" 500 - via_upstream - ' in body
    down = _lines(
        proxy_request(proxy, COLLECTOR, "GET", "/api/products/*", 0.0, ("unavailable", "frontend"))
    )
    assert '" 503 UF ' in next(x.line for x in down if x.line.startswith("Body: "))


def _during_lines(tmp_path: Path, flag: FeatureFlag) -> dict[str, list[str]]:
    """The during-window lines of a flag incident at its severe variant, by service."""
    cluster = SimulatedCluster(tmp_path, topology=ASTRONOMY_SHOP, namespace="astronomy", seed=3)
    store = SYSTEM.flag_store
    assert store is not None
    variant = flag.intensities[-1][1]
    change = FlagChange(flag.key, variant, store.config_map, store.key, store.deployment)
    cluster.inject(render("ff-test", "astronomy", change, {MANAGED_BY_LABEL: MANAGED_BY}))
    cluster.clock.sleep(SETTLE_S)
    start = cluster.clock.now()
    cluster.clock.sleep(WINDOW_S)
    found: dict[str, list[str]] = defaultdict(list)
    for batch in cluster.logs(TimeWindow(start, cluster.clock.now())):
        for line in batch:
            found[line.service].append(line.line)
    return found


CALLER_LINES = {
    "productCatalogFailure": ("frontend", "Error: 13 INTERNAL: Error: Product Catalog Fail"),
    "paymentFailure": (
        "frontend",
        "Error: 13 INTERNAL: failed to charge card: could not charge the card: rpc error: "
        "code = Unknown desc = Payment request failed. Invalid token.",
    ),
    "adFailure": ("frontend", "Error: 14 UNAVAILABLE: "),
    "recommendationCacheFailure": ("frontend", "Error: 2 UNKNOWN: Exception calling application:"),
    "paymentUnreachable": (
        "frontend",
        "Error: 13 INTERNAL: failed to charge card: could not charge the card: rpc error: "
        "code = Unavailable desc = name resolver error",
    ),
}
"""Per user-visible flag: the caller whose line a user's failed request leaves, and its line."""
READER_LINES = {
    "adFailure": ("ad", "GetAds Failed with status Status{code=UNAVAILABLE"),
    "cartFailure": ("cart", "Wasn't able to connect to redis"),
    "recommendationCacheFailure": ("recommendation", "status = StatusCode.NOT_FOUND"),
    "llmRateLimitError": ("product-reviews", "Caught Exception: Error code: 429"),
}
"""Per flag whose reader logs its failure: the reader's stdout and the line's text."""


@pytest.mark.parametrize("flag", _failing_calls(), ids=lambda f: f.key)
def test_a_flag_incidents_logs_carry_the_flags_message_and_no_refusal(
    tmp_path: Path, flag: FeatureFlag
) -> None:
    lines = _during_lines(tmp_path, flag)
    everything = [line for found in lines.values() for line in found]
    assert not [line for line in everything if REFUSED.search(line)], flag.key
    if flag.key in CALLER_LINES:
        caller, text = CALLER_LINES[flag.key]
        assert any(text in line for line in lines[caller]), (flag.key, caller)
        message = flag.status.message if flag.status is not None else ""
        assert any(message in line for line in lines[caller]), (flag.key, message)
    if flag.key in READER_LINES:
        reader, text = READER_LINES[flag.key]
        assert any(text in line for line in lines[reader]), (flag.key, reader)
    assert set(CALLER_LINES) | set(READER_LINES) >= {f.key for f in _failing_calls()}
