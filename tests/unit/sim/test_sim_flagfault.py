"""FlagFaults on the simulated cluster: the flag's effect acts on its reader from the flag
service's restart on, survives a restart of the reader, and only a revert of the flag (the
object's deletion or a plan ``rollback_config`` naming it) recovers the system."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from r2act.cluster.base import MANAGED_BY, MANAGED_BY_LABEL
from r2act.cluster.flag_fault_object import FlagChange, render
from r2act.cluster.sim.cluster import SimulatedCluster
from r2act.cluster.sim.flagfault import call_share, effect_fault
from r2act.errors import PermanentClusterError
from r2act.schema import RestartService, RollbackConfig, TimeWindow, memory_bytes
from r2act.systems.astronomyshop import ASTRONOMY_SHOP, SYSTEM
from r2act.systems.flags import FeatureFlag, FlagEffect

SETTLE_S = 60.0
"""Longer than any pod's start-up, so a restarted flag service serves again."""


def _graded_call_errors() -> FeatureFlag:
    """A realizable, user-visible CALL_ERRORS flag whose variant is the failing share."""
    return next(
        f
        for f in SYSTEM.flags.values()
        if f.realizable
        and f.user_visible
        and f.effect is FlagEffect.CALL_ERRORS
        and f.share is None
    )


def _cluster(tmp_path: Path) -> SimulatedCluster:
    return SimulatedCluster(tmp_path, topology=ASTRONOMY_SHOP, namespace="astronomy", seed=3)


def _inject(cluster: SimulatedCluster, flag: str, variant: str) -> object:
    store = SYSTEM.flag_store
    assert store is not None
    change = FlagChange(flag, variant, store.config_map, store.key, store.deployment)
    ref = cluster.inject(render("ff-test", "astronomy", change, {MANAGED_BY_LABEL: MANAGED_BY}))
    cluster.clock.sleep(SETTLE_S)
    return ref


def _op_share(cluster: SimulatedCluster, flag: FeatureFlag) -> float:
    assert flag.operation is not None
    view = cluster.scene_at(cluster.clock.now()).services[flag.service]
    return view.op_fail.get(flag.operation, (0.0, ""))[0]


@pytest.mark.parametrize("intensity", [0, 1])
def test_reader_operation_fails_at_the_variants_share(tmp_path: Path, intensity: int) -> None:
    flag = _graded_call_errors()
    variant = flag.intensities[intensity][1]
    value = next(v.value for v in flag.variants if v.name == variant)
    cluster = _cluster(tmp_path)
    assert _op_share(cluster, flag) == 0.0
    background = cluster.health_now().error_rate
    _inject(cluster, flag.key, variant)
    assert _op_share(cluster, flag) == pytest.approx(call_share(flag, value))
    assert cluster.health_now().error_rate > background + 0.01  # the users see it


def test_survives_a_reader_restart_and_only_a_revert_recovers(tmp_path: Path) -> None:
    flag = _graded_call_errors()
    severe = flag.intensities[-1][1]
    cluster = _cluster(tmp_path)
    _inject(cluster, flag.key, severe)
    share = _op_share(cluster, flag)
    assert share > 0 and not cluster.health_now().healthy
    cluster.apply_plan(RestartService(operation="restart_service", target=flag.service))
    cluster.clock.sleep(SETTLE_S)
    assert _op_share(cluster, flag) == pytest.approx(share)
    assert not cluster.health_now().healthy
    effect = cluster.apply_plan(
        RollbackConfig(operation="rollback_config", target=flag.service, scope=flag.key)
    )
    assert [c.kind for c in effect.changes] == ["chaos_removed"]
    cluster.clock.sleep(SETTLE_S)
    assert _op_share(cluster, flag) == 0.0
    assert cluster.health_now().healthy
    assert cluster.leftovers() == []


def test_another_flag_does_not_revert_it(tmp_path: Path) -> None:
    flag = _graded_call_errors()
    other = next(k for k in SYSTEM.flags if k != flag.key)
    cluster = _cluster(tmp_path)
    _inject(cluster, flag.key, flag.intensities[-1][1])
    wrong = RollbackConfig(operation="rollback_config", target=flag.service, scope=other)
    cluster.apply_plan(wrong)
    cluster.clock.sleep(SETTLE_S)
    assert _op_share(cluster, flag) > 0


def test_deleting_the_fault_restores_the_flag(tmp_path: Path) -> None:
    flag = _graded_call_errors()
    cluster = _cluster(tmp_path)
    ref = _inject(cluster, flag.key, flag.intensities[-1][1])
    assert cluster.chaos_status(ref).exists  # type: ignore[arg-type]
    assert [r.name for r in cluster.leftovers()] == ["ff-test"]
    cluster.remove(ref)  # type: ignore[arg-type]
    cluster.clock.sleep(SETTLE_S)
    assert _op_share(cluster, flag) == 0.0
    assert cluster.health_now().healthy
    assert cluster.leftovers() == []


def test_every_realizable_user_visible_flag_hurts_and_restart_does_not_heal(
    tmp_path: Path,
) -> None:
    for index, flag in enumerate(f for f in SYSTEM.flags.values() if f.realizable):
        cluster = SimulatedCluster(
            tmp_path / str(index), topology=ASTRONOMY_SHOP, namespace="astronomy", seed=3
        )
        _inject(cluster, flag.key, flag.intensities[-1][1])
        scene = cluster.scene_at(cluster.clock.now())
        hurt = any(scene.call_errors.values()) or not cluster.health_now().healthy
        assert hurt, flag.key  # some failure shows where the engine shows failures
        before = cluster.health_now().healthy
        cluster.apply_plan(RestartService(operation="restart_service", target=flag.service))
        cluster.clock.sleep(SETTLE_S)
        assert cluster.health_now().healthy == before, flag.key


def test_unknown_flag_or_variant_is_refused(tmp_path: Path) -> None:
    flag = _graded_call_errors()
    cluster = _cluster(tmp_path)
    with pytest.raises(PermanentClusterError, match="no flag"):
        _inject(cluster, "noSuchFlag", "on")
    with pytest.raises(PermanentClusterError, match="no variant"):
        _inject(cluster, flag.key, "no-such-variant")


def test_a_leak_flags_working_set_climbs_to_the_limit_then_restarts_from_its_baseline(
    tmp_path: Path,
) -> None:
    """cAdvisor's working set of a leaking reader rises at the leak's rate from the effect's
    start until the OOM kill, and the restarted container starts again from its baseline."""
    flag = next(
        f for f in SYSTEM.flags.values() if f.realizable and f.effect is FlagEffect.MEMORY_LEAK
    )
    variant = flag.intensities[0][1]
    value = next(v.value for v in flag.variants if v.name == variant)
    fault = effect_fault(ASTRONOMY_SHOP, flag, value)
    assert fault is not None
    rate = fault.leak_bytes_per_s
    spec = ASTRONOMY_SHOP.deployment(flag.service)
    limit = memory_bytes(spec.main.memory_limit)
    baseline = ASTRONOMY_SHOP.working_set_bytes(flag.service)
    assert (limit - baseline) / rate > 20  # the leak needs several samples to fill
    cluster = _cluster(tmp_path)
    start = cluster.clock.now()
    cluster.clock.sleep(30)
    _inject(cluster, flag.key, variant)
    cluster.clock.sleep(300)
    query = {"ws": f'container_memory_working_set_bytes{{container="{spec.main.name}"}}'}
    instances = [
        s.points for s in cluster.metrics(TimeWindow(start, cluster.clock.now()), query, 5.0)
    ]
    assert len(instances) >= 3  # before the flag, then one per OOM-killed container
    before = instances[0]
    assert max(v for _, v in before[:5]) <= baseline * 1.05  # healthy, under the limit
    for points in instances[1:-1]:  # each complete leaking instance
        (t0, v0), (t1, v1) = points[0], points[-1]
        assert v0 <= baseline * 1.05  # a new process starts from the baseline
        assert v1 >= limit * 0.97  # and is killed at the limit
        values = [v for _, v in points]
        assert all(b >= a - 0.01 * baseline for a, b in pairwise(values))
        slope = (v1 - v0) / (t1 - t0)
        assert slope == pytest.approx(rate, rel=0.15)
