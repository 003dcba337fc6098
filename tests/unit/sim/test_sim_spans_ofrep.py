"""The load generator's OFREP evaluation in ``flood_home``: a trace of its own per task run.

``flood_home`` evaluates ``loadGeneratorFloodHomepage`` through the OFREP provider before it
opens any span, so requests' ``POST`` to flagd's OFREP port is a root, and flagd's
``flagd.ofrep`` and ``resolveAnyValue`` are under it; one per run (no cache), at the task's
share of the users' task runs; a flagd that is down fails the ``POST`` and opens nothing.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import pytest

from r2act.cluster.sim import SimulatedCluster
from r2act.cluster.sim import spans as span_source
from r2act.schema import TimeWindow
from r2act.schema.traces import Span
from r2act.systems.astronomyshop import tracing as as_tracing
from r2act.systems.astronomyshop.traffic import TASK_WEIGHT, TASKS, THINK_S, USERS
from r2act.systems.tracing import evaluation_op

from .shop_support import shop as _shop
from .shop_support import spans_with_flagd_down

WINDOW_S = 480.0
URL = "http://flagd:8016/ofrep/v1/evaluate/flags/loadGeneratorFloodHomepage"


def _spans(cluster: SimulatedCluster, window: TimeWindow, sample: float = 1.0) -> list[Span]:
    return [s for batch in cluster.traces(window, sample) for s in batch]


def _ofrep_roots(spans: list[Span]) -> list[Span]:
    return [
        s for s in spans if s.service == "load-generator" and s.attributes.get("http.url") == URL
    ]


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> tuple[SimulatedCluster, TimeWindow]:
    cluster = _shop(tmp_path_factory.mktemp("ofrep"))
    cluster.clock.sleep(WINDOW_S + 120.0)
    now = cluster.clock.now()
    return cluster, TimeWindow(now - WINDOW_S, now)


def test_each_evaluation_is_a_root_post_with_flagds_ofrep_spans_under_it(
    healthy: tuple[SimulatedCluster, TimeWindow],
) -> None:
    spans = _spans(*healthy)
    children: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        children[span.parent_id].append(span)
    roots = _ofrep_roots(spans)
    assert len(roots) >= 50
    for root in roots:
        assert (root.operation, root.kind, root.parent_id) == ("POST", "client", "")
        assert root.status == "unset"
        assert root.attributes == {"http.method": "POST", "http.url": URL, "http.status_code": 200}
        (handler,) = children[root.span_id]
        assert (handler.service, handler.operation, handler.kind) == (
            "flagd",
            "flagd.ofrep",
            "server",
        )
        assert handler.attributes == {
            "server.address": "flagd",
            "http.request.method": "POST",
            "url.scheme": "http",
            "server.port": 8016,
            "url.path": "/ofrep/v1/evaluate/flags/loadGeneratorFloodHomepage",
            "network.protocol.version": "1.1",
            "http.response.status_code": 200,
        }
        (evaluator,) = children[handler.span_id]
        assert (evaluator.operation, evaluator.kind, evaluator.attributes) == (
            "resolveAnyValue",
            "internal",
            {},
        )
        assert not children[evaluator.span_id]
        trace = [s for s in spans if s.trace_id == root.trace_id]
        assert len(trace) == 3  # no task span: the evaluation runs outside every span
        assert root.start <= handler.start <= evaluator.start
        assert evaluator.start + evaluator.duration_s <= handler.start + handler.duration_s + 1e-6
        assert handler.start + handler.duration_s <= root.start + root.duration_s + 1e-6
    assert not any(s.operation == "user_flood_home" for s in spans)  # the flag is off (0)


def test_one_evaluation_per_flood_home_run_at_its_weight_share(
    healthy: tuple[SimulatedCluster, TimeWindow],
) -> None:
    """users / think time task runs a second, 5 of 32 of them ``flood_home``."""
    roots = _ofrep_roots(_spans(*healthy))
    expected = USERS / THINK_S * TASKS["flood_home"][0] / TASK_WEIGHT * WINDOW_S
    assert abs(len(roots) - expected) < 4 * math.sqrt(expected), (len(roots), expected)


def test_a_lower_sample_keeps_a_subset_of_the_same_traces(
    healthy: tuple[SimulatedCluster, TimeWindow],
) -> None:
    full = {s.trace_id: s for s in _ofrep_roots(_spans(*healthy))}
    tenth = _ofrep_roots(_spans(*healthy, sample=0.1))
    assert 0 < len(tenth) < len(full) / 3
    assert all(full[s.trace_id] == s for s in tenth)


def test_the_side_traces_shift_no_other_trace(
    healthy: tuple[SimulatedCluster, TimeWindow], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Their draws are keyed apart: without them, every other span is the same."""
    spans = _spans(*healthy)
    side = {s.trace_id for s in _ofrep_roots(spans)}
    others = [s for s in spans if s.trace_id not in side]
    assert len(others) == len(spans) - 3 * len(side)
    monkeypatch.setattr(span_source, "side_calls", lambda *_args: iter(()))
    assert _spans(*healthy) == others


def test_a_flagd_that_is_down_fails_the_post_and_opens_no_span(tmp_path: Path) -> None:
    spans = spans_with_flagd_down(tmp_path)
    roots = _ofrep_roots(spans)
    assert roots
    for root in roots:
        assert root.status == "error" and "http.status_code" not in root.attributes
        assert root.duration_s < 0.01  # a refused connection, not the 5 s timeout
        assert len([s for s in spans if s.trace_id == root.trace_id]) == 1
    assert "flagd" not in {s.service for s in spans}


def test_a_flipped_flag_changes_the_value_not_the_spans() -> None:
    """The OFREP path carries neither key attribute nor variant: flagd's spans are the same
    whatever it serves, and the request's URL names the flag, not the variant."""
    (side,) = as_tracing.TRACING.side_traces
    flagd = as_tracing.TRACING.services["flagd"]
    client = as_tracing.TRACING.services["load-generator"]
    key = side.evaluation.flag
    off, on = (evaluation_op(as_tracing.OFREP, key, v) for v in ("off", "on"))
    assert flagd.server(off) == flagd.server(on)
    assert client.client("flagd", off) == client.client("flagd", on)
    assert client.client("flagd", evaluation_op("ResolveBoolean", key, "on")) is None


def test_the_ofrep_provider_is_cited_at_the_load_generators_pin(reference_dir: Path) -> None:
    """The provider's source is not in the reference tree: its lines are cited at the tag of
    the version the load generator's requirements pin, on the line the evidence names."""
    traced = as_tracing.TRACING.services["load-generator"]
    outside = {c.tree for c in traced.evidence if c.tree}
    pin = next(c for c in traced.evidence if "openfeature-provider-ofrep==" in c.fragment)
    line = (reference_dir / pin.path).read_text().split("\n")[pin.line - 1]
    version = line.split("==", 1)[1].strip()
    assert outside == {f"open-feature/python-sdk-contrib@openfeature-provider-ofrep/v{version}"}
    (side,) = as_tracing.TRACING.side_traces
    assert side.timeout_ms == 5000.0 and side.share == 5 / 32
