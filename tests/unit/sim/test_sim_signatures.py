"""Every fault type shows its signature at the root cause and symptoms at a caller.

Pre-fault windows are clean apart from background noise; during the fault, the injected
service (or, for route and name-resolution rules, the pods the rule lives on) shows the
mechanism, and at least one caller shows what it costs them.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from r2act.cluster.sim import SimulatedCluster
from r2act.schema import KubeEvent, LogLine, TimeWindow
from r2act.systems import ONLINE_BOUTIQUE

from .conftest import NO_GLITCHES, Run, config_fault, incident, memory_stress


def _is_error(line: LogLine) -> bool:
    text = line.line
    return (
        '"severity":"error"' in text
        or '"severity": "ERROR"' in text
        or '"http.resp.status":5' in text
        or text.startswith(("Exception calling application", "      Error status code"))
    )


def _errors(lines: list[LogLine]) -> Counter[str]:
    return Counter(line.service for line in lines if _is_error(line))


def _took_ms(lines: list[LogLine]) -> float:
    took = [
        json.loads(line.line)["http.resp.took_ms"]
        for line in lines
        if line.service == "frontend"
        and "request complete" in line.line
        and "/_healthz" not in line.line
    ]
    return statistics.median(took)


def _warnings(events: list[KubeEvent]) -> list[KubeEvent]:
    return [e for e in events if e.type == "Warning"]


@pytest.fixture
def run_of(tmp_path: Path) -> Callable[..., Run]:
    def make(
        service: str,
        fault: str,
        intensity: str = "severe",
        injected: dict[str, object] | None = None,
    ) -> Run:
        cluster = SimulatedCluster(tmp_path / f"{service}-{fault}", glitches=NO_GLITCHES)
        return Run(cluster, incident(service, fault, intensity), injected)

    return make


def _assert_clean_pre(run: Run) -> None:
    """Only background noise before the fault: a few users giving up mid-request."""
    pre = run.lines(run.pre)
    errors = [line.line for line in pre if _is_error(line)]
    assert all("context canceled" in e or '"http.resp.status":500' in e for e in errors)
    assert len(errors) <= 0.001 * len(pre), "pre-fault window has more than noise"
    assert not _warnings(run.cluster.events(run.pre))
    assert {line.service for line in pre} >= {"frontend", "cartservice", "loadgenerator"}


def _pod_events(run: Run, app: str) -> Counter[str]:
    return Counter(
        e.reason for e in run.cluster.events(run.during) if e.object_name.startswith(app + "-")
    )


def _metric(run: Run, promql: str, window: TimeWindow, pod_prefix: str) -> list[float]:
    return [
        value
        for series in run.cluster.metrics(window, {"q": promql}, 15.0)
        if series.labels.get("pod", "").startswith(pod_prefix)
        for _, value in series.points
    ]


def test_pod_failure_stops_the_pods_and_callers_see_unavailable(run_of: Callable[..., Run]) -> None:
    run = run_of("cartservice", "pod_failure")
    _assert_clean_pre(run)
    pods = [p for p in run.cluster.state().pods if p.app == "cartservice"]
    assert pods and not any(p.ready for p in pods)
    assert pods[0].containers[0].image.endswith("pause:latest")
    assert {"Killing", "BackOff", "Unhealthy"} <= set(_pod_events(run, "cartservice"))
    during = run.lines(run.during)
    assert not [line for line in during if line.service == "cartservice"]
    errors = [line.line for line in during if line.service == "frontend" and _is_error(line)]
    failed = [e for e in errors if "request error" in e and "context canceled" not in e]
    assert failed and all("Unavailable" in e for e in failed)
    assert _errors(during).most_common(1)[0][0] != "cartservice"


def test_cpu_stress_saturates_the_pod_and_slows_callers(run_of: Callable[..., Run]) -> None:
    run = run_of("productcatalogservice", "cpu_saturation", "moderate")
    _assert_clean_pre(run)
    cpu = 'rate(container_cpu_usage_seconds_total{namespace="default",container!=""}[1m])'
    assert max(_metric(run, cpu, run.pre, "productcatalogservice")) < 0.05
    assert (
        min(
            _metric(
                run, cpu, TimeWindow(run.during.start + 15, run.during.end), "productcatalogservice"
            )
        )
        > 0.18
    )
    throttled = "rate(container_cpu_cfs_throttled_periods_total[1m])"
    assert max(_metric(run, throttled, run.during, "productcatalogservice")) > 5
    assert _took_ms(run.lines(run.during)) > 3 * _took_ms(run.lines(run.pre))


def test_memory_stress_beyond_the_limit_oom_kills_the_group_once(
    run_of: Callable[..., Run],
) -> None:
    run = run_of("cartservice", "memory_pressure", injected=memory_stress("cartservice"))
    _assert_clean_pre(run)
    working_set = 'container_memory_working_set_bytes{namespace="default"}'
    limit = 128 * 2**20
    assert max(_metric(run, working_set, run.pre, "cartservice")) < 0.6 * limit
    assert _metric(run, working_set, run.during, "cartservice")[-1] < 0.6 * limit
    reason = "kube_pod_container_status_last_terminated_reason"
    oom = [
        s
        for s in run.cluster.metrics(run.during, {"r": reason}, 15.0)
        if s.labels.get("reason") == "OOMKilled"
    ]
    assert oom and oom[0].labels["pod"].startswith("cartservice-")
    events = _pod_events(run, "cartservice")
    assert "OOMKilling" not in events and "BackOff" not in events
    containers = [
        c for pod in run.cluster.state().pods if pod.app == "cartservice" for c in pod.containers
    ]
    assert [c.last_terminated_reason for c in containers] == ["OOMKilled"]
    restarts = _metric(run, "kube_pod_container_status_restarts_total", run.during, "cartservice")
    assert restarts[-1] == 1
    assert run.cluster.health().healthy


def test_network_delay_slows_callers_and_at_severe_fails_probes(run_of: Callable[..., Run]) -> None:
    moderate = run_of("cartservice", "network_delay", "moderate")
    _assert_clean_pre(moderate)
    assert _took_ms(moderate.lines(moderate.during)) > _took_ms(moderate.lines(moderate.pre)) + 150
    severe = run_of("productcatalogservice", "network_delay", "severe")
    assert "Unhealthy" in _pod_events(severe, "productcatalogservice")
    during = severe.lines(severe.during)
    deadline = [line for line in during if "DeadlineExceeded" in line.line]
    unavailable = [line for line in during if "Unavailable" in line.line]
    assert deadline or unavailable
    assert _errors(during)["frontend"] > 10


def _locust_fails(lines: list[LogLine], name: str) -> int:
    """The '# fails' count of the last stats-table row for request ``name`` in ``lines``."""
    rows = [
        line.line
        for line in lines
        if line.service == "loadgenerator"
        and line.line.split("  ")[0].strip() in ("GET", "POST")
        and line.line[9:85].strip() == name
    ]
    return int(rows[-1][94:106].strip().split("(")[0]) if rows else 0


def _frontend_statuses(lines: list[LogLine]) -> Counter[tuple[str, int]]:
    return Counter(
        (json.loads(line.line)["http.req.path"], json.loads(line.line)["http.resp.status"])
        for line in lines
        if line.service == "frontend" and "request complete" in line.line
    )


def test_http_error_reaches_users_who_open_a_connection_per_request(
    run_of: Callable[..., Run],
) -> None:
    """The shipped load generator sends ``Connection: close``: each user request is a new
    connection, so the HTTPChaos proxy meets it and Locust counts the replaced code as a
    failure of the route, while the frontend still logs the 200 it answered before the
    proxy replaced it (no error line anywhere: the signal is the users' failures)."""
    run = run_of("frontend", "http_error")
    _assert_clean_pre(run)
    during = run.lines(run.during)
    statuses = _frontend_statuses(during)
    assert statuses[("/", 200)] > 0 and not any(code >= 500 for _, code in statuses)
    gained = _locust_fails(during, "/") - _locust_fails(run.lines(run.pre), "/")
    assert gained > 0
    assert _locust_fails(during, "/cart") == _locust_fails(run.lines(run.pre), "/cart")
    health = run.cluster.health()
    assert not health.healthy and "GET /" in health.detail


def test_http_error_misses_stock_locusts_kept_alive_connections_but_not_the_prober(
    tmp_path: Path,
) -> None:
    """With stock Locust (``FastHttpUser`` keeps each user's connection from spawn on) the
    rule meets no user request: only the prober's fresh connections see the code."""
    stock = ONLINE_BOUTIQUE.model_copy(update={"load_connection_reuse": True})
    cluster = SimulatedCluster(tmp_path / "stock", glitches=NO_GLITCHES, topology=stock)
    run = Run(cluster, incident("frontend", "http_error", "severe"), None)
    _assert_clean_pre(run)
    during = run.lines(run.during)
    assert not any(code >= 500 for _, code in _frontend_statuses(during))
    assert _locust_fails(during, "/") == _locust_fails(run.lines(run.pre), "/")
    health = run.cluster.health()
    assert not health.healthy and "GET /" in health.detail


def test_http_abort_stops_the_routes_requests_before_the_frontend(
    run_of: Callable[..., Run],
) -> None:
    """An abort closes the new connection in the proxy: Locust counts the route's requests
    as failures and the frontend never sees them (no line for the route at all), while the
    other routes and the backends they reach carry on."""
    run = run_of("frontend", "http_abort")
    _assert_clean_pre(run)
    pre, during = run.lines(run.pre), run.lines(run.during)
    assert _frontend_statuses(pre)[("/", 200)] > 0
    assert not [path for path, _ in _frontend_statuses(during) if path == "/"]
    assert _locust_fails(during, "/") > _locust_fails(pre, "/")
    pre_rate = len([x for x in pre if x.service == "cartservice"]) / 300
    during_rate = len([x for x in during if x.service == "cartservice"]) / 120
    assert during_rate > 0.8 * pre_rate
    assert not run.cluster.health().healthy


@pytest.mark.parametrize(
    ("fault", "symptom"),
    [("dns_fault", "name resolver error: produced zero addresses"), ("dns_random", "i/o timeout")],
)
def test_a_broken_address_fails_only_its_caller(
    run_of: Callable[..., Run], fault: str, symptom: str
) -> None:
    """grpc-go reports a name that does not resolve as 'produced zero addresses' (no host
    named) and an address nobody answers as an i/o timeout; only the caller whose env was
    changed fails, the service itself keeps serving its other callers."""
    run = run_of("cartservice", fault, injected=config_fault("cartservice", fault))
    _assert_clean_pre(run)
    during = run.lines(run.during)
    callers = {line.service for line in during if symptom in line.line}
    assert callers == {"frontend"}
    front = [line.line for line in during if line.service == "frontend" and symptom in line.line]
    assert any("could not retrieve cart: " in text for text in front)
    assert [line for line in during if line.service == "cartservice"]  # checkout still calls
    loudest = _errors(during).most_common(1)[0][0]
    assert loudest == "frontend"
