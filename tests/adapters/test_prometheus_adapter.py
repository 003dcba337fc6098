"""PrometheusMetrics against a real Prometheus server with backfilled history.

Series - a few synthetic ones and ten minutes of the simulated cluster's metrics - are
written as OpenMetrics, turned into TSDB blocks with ``promtool tsdb create-blocks-from
openmetrics`` and served by ``prometheus``; the adapter's range queries must give back
exactly the points written, and the ``metrics.parquet`` the collector writes from them must
equal the one written from the simulated series directly. Skips, saying why, without the
binaries.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from r2act.cluster.prometheus import PrometheusMetrics, format_step
from r2act.cluster.retry import NO_WAIT
from r2act.errors import PermanentClusterError, TransientClusterError
from r2act.schema import MetricSeries, TimeWindow

pytestmark = pytest.mark.prometheus

STEP = 15.0
# A day ago, aligned to the step: older than the head block, well inside retention.
START = (int(time.time()) - 86_400) // 900 * 900
POINTS = 40
SERIES = {
    ("container_memory_working_set_bytes", "cartservice-5f6b-fghij", "server"): [
        60e6 + 1e6 * i for i in range(POINTS)
    ],
    ("container_memory_working_set_bytes", "frontend-7d9c-abcde", "server"): [
        30e6 + (i % 7) * 5e5 for i in range(POINTS)
    ],
    ("kube_pod_container_status_restarts_total", "cartservice-5f6b-fghij", "server"): [
        float(i // 10) for i in range(POINTS)
    ],
}


def _openmetrics(series: list[MetricSeries]) -> str:
    """OpenMetrics text of the series (metric name from ``__name__``), grouped by family."""
    lines: list[str] = []
    families = sorted({s.labels["__name__"] for s in series})
    for family in families:
        lines.append(f"# TYPE {family} gauge")
        for one in series:
            if one.labels["__name__"] != family:
                continue
            labels = ",".join(
                f'{k}="{v}"' for k, v in sorted(one.labels.items()) if k != "__name__"
            )
            lines.extend(f"{family}{{{labels}}} {v!r} {t:.3f}" for t, v in one.points)
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


SIM_PREFIX = "r2act_sim_"


def _sim_series(work: Path) -> list[MetricSeries] | str:
    """Ten minutes of the simulated cluster's metrics, or why they cannot be had."""
    try:
        from r2act.campaigns import GlitchRates
        from r2act.campaigns.defaults import DEFAULT_QUERIES, NAMESPACE_PLACEHOLDER
        from r2act.cluster.sim import SimulatedCluster

        quiet = GlitchRates(injection_failure=0, metric_gap=0, slow_recovery=0)
        sim = SimulatedCluster(work / "sim", seed=5, namespace="boutique", glitches=quiet)
        start = sim.clock.now()
        sim.clock.sleep(600)
        queries = {
            k: v.replace(NAMESPACE_PLACEHOLDER, "boutique") for k, v in DEFAULT_QUERIES.items()
        }
        series = list(sim.metrics(TimeWindow(start, sim.clock.now()), queries, STEP))
    except Exception as exc:  # the simulator is another package's; say why and skip
        return f"simulated cluster unavailable: {type(exc).__name__}: {exc}"
    if not series or start > time.time() - 7200:
        return "simulated cluster produced no backfillable series"
    return series


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Backfilled:
    """A running server and the simulated series it holds (or why it holds none)."""

    url: str
    sim: list[MetricSeries] | str


def _as_backfilled(series: MetricSeries) -> MetricSeries:
    """A simulated series stored under a metric name derived from its query."""
    return series._replace(labels={**series.labels, "__name__": SIM_PREFIX + series.query})


@pytest.fixture(scope="module")
def backfilled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backfilled]:
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if prometheus is None or promtool is None:
        pytest.skip(
            "prometheus/promtool not installed (Debian package 'prometheus'; scripts/test "
            "installs it when run as root)"
        )
    work = tmp_path_factory.mktemp("prometheus")
    data, source, config = work / "data", work / "series.om", work / "prometheus.yml"
    sim = _sim_series(work)
    backfill = _expected() + ([_as_backfilled(s) for s in sim] if isinstance(sim, list) else [])
    source.write_text(_openmetrics(backfill))
    config.write_text("global:\n  scrape_interval: 15s\nscrape_configs: []\n")
    subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(source), str(data)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    port = _free_port()
    log = (work / "prometheus.log").open("wb")
    process = subprocess.Popen(
        [
            prometheus,
            f"--config.file={config}",
            f"--storage.tsdb.path={data}",
            "--storage.tsdb.retention.time=100y",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"prometheus did not start: {(work / 'prometheus.log').read_text()}")
            time.sleep(0.2)
        yield Backfilled(url, sim)
    finally:
        process.terminate()
        process.wait(10)
        log.close()


@pytest.fixture
def prometheus_url(backfilled: Backfilled) -> str:
    """URL of the module's Prometheus."""
    return backfilled.url


def _expected() -> list[MetricSeries]:
    out = []
    for (metric, pod, container), values in sorted(SERIES.items()):
        labels = {"__name__": metric, "container": container, "namespace": "boutique", "pod": pod}
        points = [(float(START + i * int(STEP)), v) for i, v in enumerate(values)]
        out.append(MetricSeries(query=metric, labels=labels, points=points))
    return out


def _key(series: MetricSeries) -> tuple[str, str]:
    return series.query, series.labels["pod"]


def test_range_queries_return_exactly_the_backfilled_series(prometheus_url: str) -> None:
    metrics = PrometheusMetrics(prometheus_url, retry=NO_WAIT)
    window = TimeWindow(float(START), float(START + (POINTS - 1) * int(STEP)))
    queries = {
        "container_memory_working_set_bytes": (
            'container_memory_working_set_bytes{namespace="boutique"}'
        ),
        "kube_pod_container_status_restarts_total": "kube_pod_container_status_restarts_total",
    }
    got = sorted(metrics.query_range(window, queries, STEP), key=_key)
    assert got == sorted(_expected(), key=_key)


def test_the_step_of_the_manifest_is_the_step_of_the_points(prometheus_url: str) -> None:
    metrics = PrometheusMetrics(prometheus_url, retry=NO_WAIT)
    window = TimeWindow(float(START), float(START + 300))
    (series,) = list(
        metrics.query_range(
            window,
            {"restarts": 'kube_pod_container_status_restarts_total{pod="cartservice-5f6b-fghij"}'},
            60.0,
        )
    )
    assert [ts for ts, _ in series.points] == [float(START + 60 * i) for i in range(6)]
    assert series.query == "restarts"


def test_reachable_checks_every_campaign_query(prometheus_url: str) -> None:
    metrics = PrometheusMetrics(prometheus_url, retry=NO_WAIT)
    assert metrics.reachable({"ok": "up"})
    assert not metrics.reachable({"broken": "rate(up[1m]"})


def test_a_malformed_query_is_permanent_not_retried(prometheus_url: str) -> None:
    metrics = PrometheusMetrics(prometheus_url, retry=NO_WAIT)
    with pytest.raises(PermanentClusterError, match="HTTP Status Code 400"):
        list(metrics.query_range(TimeWindow(START, START + 60), {"bad": "sum("}, STEP))


def test_an_unreachable_server_is_transient_after_bounded_retries() -> None:
    calls: list[float] = []
    from dataclasses import replace

    metrics = PrometheusMetrics(
        f"http://127.0.0.1:{_free_port()}", retry=replace(NO_WAIT, sleep=calls.append)
    )
    with pytest.raises(TransientClusterError, match="unreachable"):
        list(metrics.query_range(TimeWindow(0, 60), {"q": "up"}, STEP))
    assert len(calls) == NO_WAIT.attempts - 1
    assert not metrics.reachable()


def test_step_is_sent_in_a_form_prometheus_accepts() -> None:
    assert format_step(15.0) == "15" and format_step(0.5) == "0.5"
    with pytest.raises(ValueError):
        format_step(0)


def test_metrics_parquet_from_prometheus_equals_the_one_written_from_the_series(
    prometheus_url: str, tmp_path: Path
) -> None:
    import pandas as pd

    from r2act.collector.store import write_metrics

    metrics = PrometheusMetrics(prometheus_url, retry=NO_WAIT)
    window = TimeWindow(float(START), float(START + (POINTS - 1) * int(STEP)))
    queries = {m: m for m in sorted({m for m, _, _ in SERIES})}
    write_metrics(tmp_path / "queried.parquet", metrics.query_range(window, queries, STEP))
    write_metrics(tmp_path / "written.parquet", _expected())

    def frame(name: str) -> pd.DataFrame:
        df = pd.read_parquet(tmp_path / name)
        return df.sort_values(["query", "labels", "ts"]).reset_index(drop=True)

    pd.testing.assert_frame_equal(frame("queried.parquet"), frame("written.parquet"))


def test_simulated_series_backfilled_come_back_equal_and_write_the_same_parquet(
    backfilled: Backfilled, tmp_path: Path
) -> None:
    import pandas as pd

    from r2act.collector.store import write_metrics

    if isinstance(backfilled.sim, str):
        pytest.skip(backfilled.sim)
    sim = backfilled.sim
    start = min(t for s in sim for t, _ in s.points)
    end = max(t for s in sim for t, _ in s.points)
    names = sorted({s.query for s in sim})
    metrics = PrometheusMetrics(backfilled.url, retry=NO_WAIT)
    queried = [
        s._replace(labels={k: v for k, v in s.labels.items() if k != "__name__"})
        for s in metrics.query_range(
            TimeWindow(start, end), {n: SIM_PREFIX + n for n in names}, STEP
        )
    ]

    def key(s: MetricSeries) -> tuple[str, str]:
        return s.query, json.dumps(s.labels, sort_keys=True)

    assert sorted(queried, key=key) == sorted(sim, key=key)
    write_metrics(tmp_path / "prometheus.parquet", queried)
    write_metrics(tmp_path / "sim.parquet", sim)

    def frame(name: str) -> pd.DataFrame:
        df = pd.read_parquet(tmp_path / name)
        return df.sort_values(["query", "labels", "ts"]).reset_index(drop=True)

    pd.testing.assert_frame_equal(frame("prometheus.parquet"), frame("sim.parquet"))
