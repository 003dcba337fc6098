"""The metric background (issue 22): noisy per series type, GC sawtooths, baseline
throttling, present with no fault; ``noise: none`` keeps the clean room."""

from __future__ import annotations

import itertools
import statistics
from pathlib import Path

from r2act.campaigns.defaults import DEFAULT_QUERIES
from r2act.cluster.sim import SimulatedCluster
from r2act.cluster.sim.metric_noise import (
    REALISTIC,
    Background,
    ContainerLoad,
    poisson_tail,
)
from r2act.schema import MetricSeries, NoiseLevel, TimeWindow
from r2act.systems import ONLINE_BOUTIQUE

from .conftest import NO_GLITCHES

QUERIES = {k: v.replace("$namespace", "default") for k, v in DEFAULT_QUERIES.items()}
MiB = 2**20


def _read(tmp_path: Path, noise: NoiseLevel, seconds: float = 600) -> list[MetricSeries]:
    cluster = SimulatedCluster(tmp_path / noise.value, seed=3, glitches=NO_GLITCHES, noise=noise)
    cluster.clock.sleep(300)
    start = cluster.clock.now()
    cluster.clock.sleep(seconds)
    return list(cluster.metrics(TimeWindow(start, cluster.clock.now()), QUERIES, 15.0))


def _values(series: list[MetricSeries], query: str, app: str) -> list[float]:
    found = [s for s in series if s.query == query and s.labels["pod"].startswith(app + "-")]
    assert len(found) == 1, (query, app)
    return [v for _, v in found[0].points]


def _cv(values: list[float]) -> float:
    return statistics.pstdev(values) / statistics.mean(values)


def test_none_keeps_the_clean_room_the_background_adds_noise(tmp_path: Path) -> None:
    clean, noisy = _read(tmp_path, NoiseLevel.NONE), _read(tmp_path, NoiseLevel.REALISTIC)
    for app in ("frontend", "currencyservice", "adservice"):
        assert _cv(_values(clean, "cpu_usage", app)) < 0.03  # the uniform +-4 % jitter
        assert _cv(_values(noisy, "cpu_usage", app)) > 2 * _cv(_values(clean, "cpu_usage", app))
        # the uniform factor holds the throttling rate at its constant 0.02/s
        assert abs(statistics.mean(_values(clean, "cpu_throttled", app)) - 0.02) < 0.002


def test_noise_differs_by_series_type(tmp_path: Path) -> None:
    noisy = _read(tmp_path, NoiseLevel.REALISTIC)
    # CPython frees by reference counting: a flat working set; V8 shows its old-space swing
    email = _cv(_values(noisy, "memory_working_set", "emailservice"))
    currency = _cv(_values(noisy, "memory_working_set", "currencyservice"))
    assert email < 0.005 < currency
    # CPU is noisier than the working set of the same pod (Poisson calls vs. a heap)
    assert _cv(_values(noisy, "cpu_usage", "emailservice")) > 10 * email


def test_working_set_sawtooth_peaks_at_the_images_figure(tmp_path: Path) -> None:
    noisy = _read(tmp_path, NoiseLevel.REALISTIC, seconds=900)
    for app in ("frontend", "currencyservice", "cartservice"):
        figure = ONLINE_BOUTIQUE.working_set_bytes(app)
        values = _values(noisy, "memory_working_set", app)
        assert max(values) <= figure
        assert max(values) > 0.99 * figure  # a whole cycle fits in the window
        assert max(values) - min(values) > 0.02 * figure  # the heap swings
        if app == "cartservice":
            # .NET's gen0 budget fills in less than cAdvisor's 10 s housekeeping at the
            # shipped load, so scrapes alias the fast sawtooth into a slow one: the drop is
            # hidden between samples, as it would be on a real cluster.
            continue
        drops = sum(1 for a, b in itertools.pairwise(values) if b < a - 0.02 * figure)
        assert drops >= 1  # a collection gave memory back


def test_baseline_throttling_from_gc_on_every_thread(tmp_path: Path) -> None:
    noisy = _read(tmp_path, NoiseLevel.REALISTIC)
    # currencyservice (V8, 200m limit): a mark-compact of its old space burns one quota
    assert statistics.mean(_values(noisy, "cpu_throttled", "currencyservice")) > 0.02
    # redis has no collector and little traffic: no throttling at all
    assert max(_values(noisy, "cpu_throttled", "redis-cart")) == 0.0


def test_heavy_is_noisier_than_realistic(tmp_path: Path) -> None:
    realistic, heavy = _read(tmp_path, NoiseLevel.REALISTIC), _read(tmp_path, NoiseLevel.HEAVY)
    for app in ("frontend", "cartservice", "emailservice"):
        assert _cv(_values(heavy, "cpu_usage", app)) > _cv(_values(realistic, "cpu_usage", app))


def test_throttling_follows_load_and_limit() -> None:
    background = Background(REALISTIC, seed=0)

    def load(calls_s: float, limit: float) -> ContainerLoad:
        return ContainerLoad("python", calls_s, 3.0, limit, 64 * MiB, 100.0)

    # bursts of calls exceed a small quota more often as the rate rises ...
    assert background.throttled_per_s(load(50, 0.1)) > background.throttled_per_s(load(5, 0.1))
    # ... and a bigger quota absorbs them
    assert background.throttled_per_s(load(50, 1.0)) < background.throttled_per_s(load(50, 0.1))
    assert abs(poisson_tail(2.0, 1) - (1 - 2.718281828**-2)) < 1e-9


def test_go_cycles_quicken_with_load_and_are_forced_every_two_minutes() -> None:
    background = Background(REALISTIC, seed=0)

    def cycle(calls_s: float) -> float | None:
        return background.gc_cycle_s(ContainerLoad("go", calls_s, 3.0, 0.2, 57 * MiB, 100.0))

    idle, busy = cycle(0.0), cycle(20.0)
    assert idle == 120.0  # sysmon's forced collection
    assert busy is not None and busy < 10.0
    assert background.gc_cycle_s(ContainerLoad("redis", 5, 0.5, 0.1, 180 * MiB, 10)) is None
