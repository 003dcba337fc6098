"""Spans of the simulated systems: only instrumented services emit them, with the names and
links their instrumentation gives, faults show in them, and whole traces are sampled.

Online Boutique and the Astronomy Shop are both walked through the one engine
(``cluster/sim/spans``) from their own declarations (``systems/<name>/tracing.py``).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from r2act.cluster.sim import SimulatedCluster
from r2act.schema import FaultType, TimeWindow
from r2act.schema.traces import SPAN_KINDS, SPAN_STATUSES, Span, keeps_trace
from r2act.systems import SYSTEMS, get_system
from r2act.systems.astronomyshop.tracing import FLAGD_RPC_SERVICE
from r2act.systems.tracing import Tracing, evaluation_op

from .conftest import NO_GLITCHES, Run, incident

WINDOW_S = 180.0


def _spans(cluster: SimulatedCluster, window: TimeWindow, sample: float = 1.0) -> list[Span]:
    return [span for batch in cluster.traces(window, sample) for span in batch]


def _healthy(tmp_path: Path, system: str, seed: int = 5) -> tuple[SimulatedCluster, TimeWindow]:
    users = get_system(system).users
    cluster = SimulatedCluster(
        tmp_path, seed=seed, users=users, topology=SYSTEMS[system], glitches=NO_GLITCHES
    )
    cluster.clock.sleep(WINDOW_S + 120.0)
    now = cluster.clock.now()
    return cluster, TimeWindow(now - WINDOW_S, now)


@pytest.fixture(params=["onlineboutique", "astronomyshop"])
def system_spans(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, list[Span]]:
    cluster, window = _healthy(tmp_path, request.param)
    return request.param, _spans(cluster, window)


def _traces(spans: Iterable[Span]) -> dict[str, list[Span]]:
    traces: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        traces[span.trace_id].append(span)
    return traces


# --- shape: which services, which names ---------------------------------------------------


def test_only_instrumented_services_emit_spans(system_spans: tuple[str, list[Span]]) -> None:
    name, spans = system_spans
    tracing = get_system(name).tracing
    names = {t.service_name for t in tracing.services.values()}
    emitted = {s.service for s in spans}
    assert emitted <= names
    assert not emitted & (set(tracing.not_instrumented) | set(tracing.pending))
    assert {"frontend"} <= emitted


def test_online_boutique_has_the_seven_instrumented_services_and_no_other() -> None:
    tracing = get_system("onlineboutique").tracing
    assert set(tracing.services) == {
        "frontend",
        "checkoutservice",
        "productcatalogservice",
        "currencyservice",
        "paymentservice",
        "emailservice",
        "recommendationservice",
    }
    assert {"cartservice", "shippingservice", "adservice", "loadgenerator"} <= set(
        tracing.not_instrumented
    )


def test_every_span_has_its_declared_shape(system_spans: tuple[str, list[Span]]) -> None:
    """Each span's name, kind and fixed attributes are what its service's declaration opens
    for that handler or call (the walk invents no span)."""
    name, spans = system_spans
    tracing = get_system(name).tracing
    by_service = {t.service_name: t for t in tracing.services.values()}
    declared_names = set()
    for deployment, traced in tracing.services.items():
        for calls in get_system(name).route_calls.values():
            for op, callee in _ops(calls):
                declared_names |= (
                    {s.name for s in traced.server(op)} if callee == deployment else set()
                )
                client = traced.client(callee, op)
                if client is not None:
                    declared_names.add(client.name)
        for scope in get_system(name).route_calls:
            declared_names |= {s.name for s in traced.server(scope)}
            if tracing.origin is not None and tracing.origin.deployment == deployment:
                for _, around in tracing.origin.tasks(scope):
                    declared_names |= {s.name for s in around}
                request = traced.client(get_system(name).topology.entrypoint, scope)
                declared_names |= {request.name} if request is not None else set()
        for calls in get_system(name).route_calls.values():
            for op, callee in _ops(calls):
                if deployment in tracing.consumers.get(callee, ()):
                    declared_names |= {s.name for s in traced.server(op)}
        declared_names |= _walked_names(tracing, deployment)
    for span in spans:
        assert span.kind in SPAN_KINDS and span.status in SPAN_STATUSES
        assert span.service in by_service
        assert span.operation in declared_names, span
        assert len(span.trace_id) == 32 and len(span.span_id) == 16
        int(span.trace_id, 16), int(span.span_id, 16)
        assert span.duration_s >= 0


def _walked_names(tracing: Tracing, deployment: str) -> set[str]:
    """The spans of the calls the tracing layer adds to a handler (its flag evaluations,
    with every variant of the flag, and its calls the load model leaves out) and of the
    traced client's side traces: the caller's client span and the callee's server spans."""
    names: set[str] = set()
    flags = {f.key: f for system in SYSTEMS for f in get_system(system).flags.values()}
    client = tracing.origin.deployment if tracing.origin is not None else ""
    sides = [((client, s.task), (s.evaluation,)) for s in tracing.side_traces]
    for (caller, _), evaluations in [*tracing.evaluations.items(), *sides]:
        for evaluation in evaluations:
            for variant in flags[evaluation.flag].variants:
                op = evaluation_op(evaluation.resolve, evaluation.flag, variant.name)
                names |= _call_names(tracing, deployment, caller, tracing.flag_service, op)
    for (caller, _), calls in tracing.handler_calls.items():
        for call in calls:
            names |= _call_names(tracing, deployment, caller, call.callee, call.op)
    return names


def _call_names(tracing: Tracing, deployment: str, caller: str, callee: str, op: str) -> set[str]:
    traced = tracing.services[deployment]
    names = {s.name for s in traced.server(op)} if deployment == callee else set()
    client = traced.client(callee, op) if deployment == caller else None
    return names | ({client.name} if client is not None else set())


def _ops(calls: Iterable[object]) -> Iterable[tuple[str, str]]:
    from r2act.systems.base import Call

    for call in calls:
        assert isinstance(call, Call)
        yield call.op, call.callee
        yield from _ops(call.children)


def test_the_set_ups_and_pins_stand_on_their_cited_lines(reference_dir: Path) -> None:
    problems = []
    for name in ("onlineboutique", "astronomyshop"):
        for deployment, traced in get_system(name).tracing.services.items():
            assert traced.evidence, deployment
            for cited in traced.evidence:
                if cited.tree:  # outside the reference tree: test_sim_spans_flagd checks its tag
                    continue
                path = reference_dir / cited.path
                if not path.is_file():
                    problems.append(f"{deployment}: {cited.path} does not exist")
                    continue
                lines = path.read_text(encoding="utf-8").split("\n")
                if not 0 < cited.line <= len(lines) or cited.fragment not in lines[cited.line - 1]:
                    problems.append(
                        f"{deployment}: {cited.fragment!r} not on {cited.path}:{cited.line}"
                    )
    assert not problems, "\n".join(problems)


def test_uninstrumented_services_say_so_in_their_source(reference_dir: Path) -> None:
    src = reference_dir / "online-boutique/src-v0.10.6"
    shipping = (src / "shippingservice/main.go").read_text().split("\n")
    assert "Tracing enabled, but temporarily unavailable" in shipping[57]
    ad = (src / "adservice/src/main/java/hipstershop/AdService.java").read_text().split("\n")
    assert "Tracing enabled but temporarily unavailable" in ad[213]
    cart = "\n".join(p.read_text() for p in (src / "cartservice").rglob("*.cs"))
    assert "OpenTelemetry" not in cart


def _rpc_names(spans: Iterable[Span]) -> set[tuple[str, str]]:
    found = set()
    for span in spans:
        service, method = span.attributes.get("rpc.service"), span.attributes.get("rpc.method")
        if isinstance(service, str) and isinstance(method, str):
            found.add((service.split(".", 1)[1], method))
    return found


def test_rpc_span_names_are_the_systems_own_methods(reference_dir: Path, tmp_path: Path) -> None:
    """Every gRPC span names a service and method the pinned sources define (Online
    Boutique: a client stub the code calls; the Astronomy Shop: ``pb/demo.proto``)."""
    cluster, window = _healthy(tmp_path / "ob", "onlineboutique")
    ob_sources = "\n".join(
        p.read_text(errors="replace")
        for p in (reference_dir / "online-boutique/src-v0.10.6").rglob("*")
        if p.suffix in (".go", ".py", ".js", ".cs", ".java") and p.is_file()
    )
    for service, method in _rpc_names(_spans(cluster, window)):
        assert f"{service}Client" in ob_sources, service
        assert f"{method}(" in ob_sources or f".{method}" in ob_sources, method
    proto = (reference_dir / "opentelemetry-demo-2.2.0/pb/demo.proto").read_text()
    cluster, window = _healthy(tmp_path / "as", "astronomyshop")
    names = _rpc_names(_spans(cluster, window))
    flagd = {n for n in names if n[0] == FLAGD_RPC_SERVICE.split(".", 1)[1]}
    assert names - flagd
    assert flagd == {
        ("evaluation.v1.Service", "ResolveBoolean"),
        ("evaluation.v1.Service", "ResolveInt"),
    }
    for service, method in names - flagd:
        assert f"service {service} {{" in proto, service
        assert f"rpc {method}(" in proto, method


def test_handmade_span_names_are_in_the_code_that_opens_them(
    system_spans: tuple[str, list[Span]],
) -> None:
    """A span that no library names (an internal or producer span, a hand-made server
    span) carries a name that stands in its service's cited lines."""
    name, spans = system_spans
    tracing = get_system(name).tracing
    by_service = {t.service_name: t for t in tracing.services.values()}
    for span in spans:
        traced = by_service[span.service]
        fragments = " ".join(c.fragment for c in traced.evidence)
        if span.kind in ("internal", "producer") and not span.operation.startswith("executing"):
            stem = span.operation.replace("orders ", "%s ")
            assert stem in fragments or span.operation in fragments, span.operation


# --- structure ------------------------------------------------------------------------------


def test_each_trace_is_one_tree_of_nested_spans(system_spans: tuple[str, list[Span]]) -> None:
    _, spans = system_spans
    traces = _traces(spans)
    assert len(traces) > 50
    for members in traces.values():
        ids = {s.span_id: s for s in members}
        assert len(ids) == len(members)
        roots = [s for s in members if not s.parent_id]
        assert len(roots) == 1
        for span in members:
            if not span.parent_id:
                continue
            parent = ids[span.parent_id]
            assert parent.start <= span.start + 1e-6
            assert span.start + span.duration_s <= parent.start + parent.duration_s + 1e-5


def test_an_uninstrumented_callee_shows_only_as_its_callers_client_span(tmp_path: Path) -> None:
    cluster, window = _healthy(tmp_path, "onlineboutique")
    spans = _spans(cluster, window)
    cart_calls = [s for s in spans if s.attributes.get("rpc.service") == "hipstershop.CartService"]
    assert cart_calls and all(s.kind == "client" for s in cart_calls)
    assert {s.service for s in cart_calls} == {"frontend", "checkoutservice"}
    ids = {s.span_id for s in spans}
    assert not any(s.parent_id in {c.span_id for c in cart_calls} for s in spans)
    assert all(not s.parent_id or s.parent_id in ids for s in spans)


# --- faults ---------------------------------------------------------------------------------


def _run(tmp_path: Path, service: str, fault: str, intensity: str = "severe") -> Run:
    cluster = SimulatedCluster(tmp_path, seed=7, users=27, glitches=NO_GLITCHES)
    return Run(cluster, incident(service, fault, intensity))


def test_a_pod_failure_shows_as_its_callers_failing_client_spans(tmp_path: Path) -> None:
    run = _run(tmp_path, "productcatalogservice", FaultType.POD_FAILURE.value)
    pre, during = _spans(run.cluster, run.pre), _spans(run.cluster, run.during)

    def catalog(spans: list[Span], kind: str) -> list[Span]:
        return [
            s
            for s in spans
            if s.kind == kind
            and s.attributes.get("rpc.service") == "hipstershop.ProductCatalogService"
        ]

    assert catalog(pre, "server") and all(s.status == "unset" for s in catalog(pre, "client"))
    assert not catalog(during, "server")  # nothing is up to open them
    failing = catalog(during, "client")
    assert failing and all(s.status == "error" for s in failing)
    assert {s.attributes["rpc.grpc.status_code"] for s in failing} == {14}  # UNAVAILABLE
    frontend = [s for s in during if s.operation == "frontend"]
    assert any(
        s.status == "error" and s.attributes["http.response.status_code"] == 500 for s in frontend
    )


def test_cpu_saturation_lengthens_the_faulty_services_spans(tmp_path: Path) -> None:
    run = _run(tmp_path, "currencyservice", FaultType.CPU_SATURATION.value)

    def convert_ms(window: TimeWindow) -> float:
        spans = _spans(run.cluster, window)
        took = [
            s.duration_s * 1000
            for s in spans
            if s.service == "currencyservice" and s.operation.endswith("CurrencyService/Convert")
        ]
        return statistics.median(took)

    assert convert_ms(run.during) > 5 * convert_ms(run.pre)


def test_network_delay_shows_on_the_callers_client_span(tmp_path: Path) -> None:
    """Shipping is not instrumented: its delay is seen only as the callers' GetQuote spans."""
    run = _run(tmp_path, "shippingservice", FaultType.NETWORK_DELAY.value, "moderate")
    latency = float(str(run.incident.fault.parameters["latency"]).rstrip("ms"))

    def quote_ms(window: TimeWindow) -> float:
        return statistics.median(
            s.duration_s * 1000
            for s in _spans(run.cluster, window)
            if s.operation == "hipstershop.ShippingService/GetQuote"
        )

    assert quote_ms(run.during) >= quote_ms(run.pre) + 0.8 * latency


# --- answers, sampling, determinism --------------------------------------------------------


def test_no_span_attribute_carries_an_answer(tmp_path: Path) -> None:
    run = _run(tmp_path, "cartservice", FaultType.POD_FAILURE.value)
    answers = {run.incident.id, run.ref.name, "chaos", *(f.value for f in FaultType)}
    answers |= {f.value.replace("_", "-") for f in FaultType}
    spans = _spans(run.cluster, TimeWindow(run.pre.start, run.during.end))
    assert spans
    for span in spans:
        text = " ".join(f"{k}={v}" for k, v in span.attributes.items()).lower()
        text += f" {span.operation.lower()}"
        assert not any(a.lower() in text for a in answers), span


def test_the_kept_share_follows_the_rate_and_keeps_whole_traces(tmp_path: Path) -> None:
    cluster, window = _healthy(tmp_path, "onlineboutique")
    every = _traces(_spans(cluster, window, 1.0))
    kept = _traces(_spans(cluster, window, 0.2))
    assert set(kept) <= set(every)
    assert all(keeps_trace(t, 0.2) for t in kept)
    share = len(kept) / len(every)
    assert 0.15 < share < 0.25, share
    for trace_id, spans in kept.items():
        assert spans == every[trace_id]  # the same spans, none dropped from a kept trace
    assert not _spans(cluster, window, 0.0)


def test_a_rate_keeps_exactly_the_higher_rates_traces_under_its_bound(tmp_path: Path) -> None:
    """Only kept requests are drawn, yet the sampler reads as if every request had an id
    and the rule dropped the rest: at any two rates, the lower one's traces are exactly
    the higher one's whose ids pass the lower bound, span for span."""
    cluster, window = _healthy(tmp_path, "onlineboutique")
    by_rate = {rate: _traces(_spans(cluster, window, rate)) for rate in (1.0, 0.3, 0.05)}
    for high, low in ((1.0, 0.3), (0.3, 0.05), (1.0, 0.05)):
        expected = {t: s for t, s in by_rate[high].items() if keeps_trace(t, low)}
        assert by_rate[low] == expected, (high, low)
    assert len(by_rate[0.05]) > 10


def test_spans_do_not_depend_on_what_was_read_before(
    make_cluster: Callable[..., SimulatedCluster],
) -> None:
    cluster = make_cluster(seed=3, users=27)
    cluster.clock.sleep(400.0)
    now = cluster.clock.now()
    late, early = TimeWindow(now - 100, now), TimeWindow(now - 300, now - 200)
    first = _spans(cluster, late)
    _spans(cluster, early)
    assert _spans(cluster, late) == first
    assert first and all(late.start <= s.start <= late.end for s in first)


def test_another_seed_gives_other_ids(tmp_path: Path) -> None:
    a, window = _healthy(tmp_path / "a", "onlineboutique", seed=1)
    b, _ = _healthy(tmp_path / "b", "onlineboutique", seed=2)
    assert not {s.trace_id for s in _spans(a, window)} & {s.trace_id for s in _spans(b, window)}
