"""The background of a healthy cluster: runtime pauses under CPU limits, by noise level."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from r2act.cluster.sim import SimulatedCluster
from r2act.cluster.sim.background import NOISE_FACTOR, PAUSES, late_share
from r2act.schema import NoiseLevel, TimeWindow, Topology
from r2act.systems import ONLINE_BOUTIQUE

from .conftest import NO_GLITCHES

HOUR = 3600.0


def _healthy(
    tmp_path: Path, noise: NoiseLevel, topology: Topology = ONLINE_BOUTIQUE
) -> tuple[SimulatedCluster, TimeWindow]:
    cluster = SimulatedCluster(
        tmp_path / noise.value, users=27, glitches=NO_GLITCHES, noise=noise, topology=topology
    )
    start = cluster.clock.now()
    cluster.clock.sleep(HOUR + 60)
    return cluster, TimeWindow(start + 30, start + 30 + HOUR)


def _ads_warnings(cluster: SimulatedCluster, window: TimeWindow) -> list[dict[str, object]]:
    found = []
    for batch in cluster.logs(window):
        for line in batch:
            if line.service == "frontend" and "failed to retrieve ads" in line.line:
                found.append(json.loads(line.line))
    return found


def test_pauses_make_a_late_call_only_where_a_runtime_pauses() -> None:
    realistic = NoiseLevel.REALISTIC
    assert late_share("go", "200m", 96.0, realistic) == 0.0
    assert late_share("python", "200m", 96.0, realistic) == 0.0
    java = late_share("java", "300m", 96.0, realistic)
    assert 0 < java < 0.01
    # A tighter limit stretches the same pause; a longer budget lets more of it pass.
    assert late_share("java", "100m", 96.0, realistic) > java
    assert late_share("java", "300m", 1000.0, realistic) < java
    assert late_share("java", "300m", 96.0, NoiseLevel.NONE) == 0.0
    heavy = late_share("java", "300m", 96.0, NoiseLevel.HEAVY)
    assert heavy == pytest.approx(java * NOISE_FACTOR[NoiseLevel.HEAVY])
    assert all(p.why for pauses in PAUSES.values() for p in pauses)


def test_a_healthy_hour_holds_ad_deadline_warnings_unless_noise_is_none(tmp_path: Path) -> None:
    clean, window = _healthy(tmp_path, NoiseLevel.NONE)
    assert _ads_warnings(clean, window) == []
    real, window = _healthy(tmp_path, NoiseLevel.REALISTIC)
    warnings = _ads_warnings(real, window)
    assert warnings
    for record in warnings:
        assert record["severity"] == "warning"
        assert "code = DeadlineExceeded desc = context deadline exceeded" in str(record["error"])
    heavy, window = _healthy(tmp_path, NoiseLevel.HEAVY)
    assert len(_ads_warnings(heavy, window)) > len(warnings)
    # Same seed, same calls: the same background.
    again, window = _healthy(tmp_path / "again", NoiseLevel.REALISTIC)
    assert _ads_warnings(again, window) == warnings


def test_probes_time_out_in_long_pauses(tmp_path: Path) -> None:
    """With a limit tight enough that a pause outlasts the 1 s probe timeout, the prober
    records timeouts; the same pod with noise none records none."""
    deployments = [
        d.model_copy(update={"containers": [d.main.model_copy(update={"cpu_limit": "30m"})]})
        if d.name == "adservice"
        else d
        for d in ONLINE_BOUTIQUE.deployments
    ]
    tight = ONLINE_BOUTIQUE.model_copy(update={"deployments": deployments})
    cluster, window = _healthy(tmp_path, NoiseLevel.HEAVY, tight)
    unhealthy = [e for e in cluster.events(window) if e.reason == "Unhealthy"]
    assert unhealthy
    assert {e.object_name.rsplit("-", 2)[0] for e in unhealthy} == {"adservice"}
    assert all(e.type == "Warning" for e in unhealthy)
    assert all(
        e.message.endswith("probe failed: timeout: health rpc did not complete within 1s")
        for e in unhealthy
    )
    assert cluster.events(window) == cluster.events(window)
    clean, window = _healthy(tmp_path, NoiseLevel.NONE, tight)
    assert not [e for e in clean.events(window) if e.reason == "Unhealthy"]
