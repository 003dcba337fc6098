"""Spans on the real path: TracedKubeCluster reading Jaeger through the API server's service
proxy (the kmock API emulator forwarding to the Jaeger emulator), or at ``traces.store``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import kmock
import pytest
from jaeger_emulator import BASE_PATH, JaegerServer, JaegerStore
from kube_harness import CONTEXT, NOW, NS, Harness
from kubernetes import client as k8s
from test_jaeger_adapter import checkout_trace
from test_kube_adapter import write_kubeconfig

from r2act.campaigns import KubernetesTarget
from r2act.campaigns.manifest import TracesConfig
from r2act.cluster.base import TraceSource
from r2act.cluster.kube import KubeCluster
from r2act.cluster.kube.cluster import TRACE_FLUSH_S, TracedKubeCluster, connect_kubernetes
from r2act.cluster.retry import NO_WAIT
from r2act.errors import PermanentClusterError, SafetyError, TransientClusterError
from r2act.schema import TimeWindow
from r2act.systems import INSTALLED

PROXY = f"/api/v1/namespaces/{NS}/services/jaeger:16686/proxy"


@pytest.fixture
def store(harness: Harness) -> JaegerStore:
    """The Jaeger emulator's store behind the API server's proxy to service jaeger:16686."""
    jaeger = JaegerStore()

    def serve(request: kmock.Request) -> bytes:
        path = request.url.path[len(PROXY) :]
        if not path.startswith(BASE_PATH + "/"):
            raise kmock.KubernetesError(status=404, reason="NotFound", message="no such page")
        params = {str(k): str(v) for k, v in request.params.items()}
        status, body = jaeger.answer(path[len(BASE_PATH) :], params)
        if status != 200:
            raise kmock.KubernetesError(status=status, reason="Injected", message=body.decode())
        return body

    harness.kmock[f"get {PROXY}/*"] << serve
    return jaeger


def traced(harness: Harness, **options: object) -> TracedKubeCluster:
    configuration = k8s.Configuration(host=harness.emulator.url)
    configuration.retries = False
    return TracedKubeCluster(
        k8s.ApiClient(configuration),
        namespace=NS,
        context=CONTEXT,
        expected_context=CONTEXT,
        clock=harness.clock,
        retry=NO_WAIT,
        request_timeout_s=5.0,
        **options,  # type: ignore[arg-type]
    )


def test_spans_are_read_through_the_service_proxy_of_the_systems_jaeger(
    harness: Harness, store: JaegerStore
) -> None:
    store.traces = [checkout_trace("12" * 16, NOW - 30), checkout_trace("34" * 16, NOW - 400)]
    cluster = traced(harness)
    assert isinstance(cluster, TraceSource)
    spans = [s for b in cluster.traces(TimeWindow(start=NOW - 60, end=NOW), 1.0) for s in b]
    # a window that just ended waits for its last spans' export; an older one does not
    assert harness.clock.sleeps == [TRACE_FLUSH_S]
    list(cluster.traces(TimeWindow(start=NOW - 60, end=NOW - 30), 1.0))
    assert harness.clock.sleeps == [TRACE_FLUSH_S]
    assert {s.trace_id for s in spans} == {"12" * 16} and len(spans) == 3
    paths = {r.url.path for r in harness.requests() if r.url.path.startswith(PROXY)}
    assert paths == {f"{PROXY}{BASE_PATH}/api/services", f"{PROXY}{BASE_PATH}/api/traces"}
    assert harness.writes() == []  # reading spans writes nothing
    assert cluster.trace_store == f"services/jaeger:16686/proxy{BASE_PATH} in namespace {NS!r}"
    # The store Online Boutique's deploy/ installs is where the adapter looked.
    declared = INSTALLED["onlineboutique"].trace_store
    assert declared is not None and f"{declared.service}:{declared.port}" == "jaeger:16686"


def test_a_5xx_through_the_proxy_is_retried(harness: Harness, store: JaegerStore) -> None:
    store.traces = [checkout_trace("56" * 16, NOW - 10)]
    store.failures = [503, 500]
    spans = [s for b in traced(harness).traces(TimeWindow(start=NOW - 60, end=NOW), 1.0) for s in b]
    assert len(spans) == 3


def test_a_missing_or_unready_trace_store_fails_with_the_fix(harness: Harness) -> None:
    window = TimeWindow(start=NOW - 60, end=NOW)
    # No Service jaeger: the API server answers 404, which no retry mends.
    with pytest.raises(PermanentClusterError, match=r"jaeger:16686.*404.*deploy/tracing"):
        next(iter(traced(harness).traces(window, 1.0)))
    # A Service without ready pods: "no endpoints available" (503), retried, then said.
    harness.fail(f"get {PROXY}/*", [503] * 5, "no endpoints available for service jaeger")
    with pytest.raises(TransientClusterError, match=r"unreachable.*no endpoints.*traces.store"):
        next(iter(traced(harness).traces(window, 1.0)))


def test_preflight_passes_with_recent_spans_and_fails_with_a_fix_without(
    harness: Harness, store: JaegerStore
) -> None:
    cluster = traced(harness)
    report = cluster.preflight({})
    assert not report.ok
    assert report.traces_problem is not None
    assert "no spans of an instrumented service" in report.traces_problem
    assert report.traces_problem in report.problems()
    store.traces = [checkout_trace("78" * 16, NOW - 20)]
    report = cluster.preflight({})
    assert report.traces_problem is None and report.ok, report.problems()
    store.traces = [checkout_trace("78" * 16, NOW - 3600)]  # the collector stopped an hour ago
    report = cluster.preflight({})
    assert report.traces_problem is not None and "no span in the last 120s" in report.traces_problem


def test_a_plain_kube_cluster_is_no_trace_source(harness: Harness) -> None:
    cluster = harness.cluster()
    assert not isinstance(cluster, TraceSource)
    assert cluster.preflight({}).traces_problem is None


@pytest.fixture
def server() -> Iterator[tuple[JaegerStore, JaegerServer]]:
    jaeger = JaegerStore()
    with JaegerServer(jaeger) as running:
        yield jaeger, running


def test_connect_with_a_traces_section_reads_the_store_url_it_names(
    harness: Harness, tmp_path: Path, server: tuple[JaegerStore, JaegerServer]
) -> None:
    jaeger, running = server
    jaeger.traces = [checkout_trace("9a" * 16, NOW - 5)]
    kubeconfig = write_kubeconfig(tmp_path / "kc", harness.emulator.url)
    target = KubernetesTarget(kind="kubernetes", context=CONTEXT, namespace=NS)
    options = {"kubeconfig": kubeconfig, "clock": harness.clock, "retry": NO_WAIT}
    cluster = connect_kubernetes(
        target, namespace=NS, traces=TracesConfig(sample=1.0, store=running.url), **options
    )
    assert isinstance(cluster, TracedKubeCluster) and cluster.trace_store == running.url
    spans = [s for b in cluster.traces(TimeWindow(start=NOW - 60, end=NOW), 1.0) for s in b]
    assert len(spans) == 3
    assert not any(r.url.path.startswith(PROXY) for r in harness.requests())
    assert cluster.preflight({}).traces_problem is None
    # Without a traces section, and for cleanup, the adapter reads no spans.
    plain = connect_kubernetes(target, namespace=NS, **options)
    assert type(plain) is KubeCluster
    sweeping = connect_kubernetes(
        target, namespace=NS, reverting=True, traces=TracesConfig(), **options
    )
    assert type(sweeping) is KubeCluster
    harness.namespace_labels.clear()
    with pytest.raises(SafetyError, match="chaos-allowed"):
        connect_kubernetes(target, namespace=NS, traces=TracesConfig(), **options)


def test_connect_passes_traces_and_the_manifests_system(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from r2act.cluster.connect import connect

    monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path / "kc", harness.emulator.url)))
    monkeypatch.setenv("R2ACT_PROMETHEUS_URL", "http://127.0.0.1:9")
    target = KubernetesTarget(kind="kubernetes", context=CONTEXT, namespace=NS)
    shop = INSTALLED["astronomyshop"]
    cluster = connect(
        target, namespace=NS, workspace=tmp_path, traces=TracesConfig(), topology=shop.topology
    )
    assert isinstance(cluster, TracedKubeCluster)
    assert cluster._topology is shop.topology
    assert shop.trace_store is not None and shop.trace_store.base_path == BASE_PATH
