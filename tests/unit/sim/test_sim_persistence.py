"""State outlives the process: a new instance sees chaos objects, plans and the clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from r2act.cluster.sim import SimulatedCluster
from r2act.errors import DataError
from r2act.schema import RestartService

from .conftest import NO_GLITCHES, chaos, incident


def test_leftover_chaos_survives_a_new_instance_and_preflight_reports_it(tmp_path: Path) -> None:
    crashed = SimulatedCluster(tmp_path, glitches=NO_GLITCHES)
    ref = crashed.inject(chaos(incident("cartservice", "dns_fault")))
    del crashed
    reopened = SimulatedCluster(tmp_path, glitches=NO_GLITCHES)
    report = reopened.preflight({})
    assert [r.name for r in report.leftovers] == [ref.name]
    assert report.leftovers[0].incident_id == "onlineboutique_cartservice_dns_fault_severe_r01"
    assert not report.ok
    assert reopened.leftovers() == report.leftovers
    reopened.remove(report.leftovers[0])
    assert SimulatedCluster(tmp_path).leftovers() == []


def test_clock_deployments_and_pods_are_reloaded(tmp_path: Path) -> None:
    first = SimulatedCluster(tmp_path, glitches=NO_GLITCHES)
    first.clock.sleep(123)
    first.apply_plan(RestartService(operation="restart_service", target="adservice"))
    second = SimulatedCluster(tmp_path, glitches=NO_GLITCHES)
    assert second.clock.now() == first.clock.now()
    assert second.pod_names() == first.pod_names()
    assert second.state() == first.state()


def test_named_clusters_in_one_workspace_are_independent(tmp_path: Path) -> None:
    one = SimulatedCluster(tmp_path, name="one")
    two = SimulatedCluster(tmp_path, name="two")
    one.inject(chaos(incident("cartservice", "pod_failure")))
    assert two.leftovers() == []
    assert len(SimulatedCluster(tmp_path, name="one").leftovers()) == 1


def test_state_is_written_atomically_without_stray_files(tmp_path: Path) -> None:
    cluster = SimulatedCluster(tmp_path)
    cluster.clock.sleep(5)
    files = sorted(p.name for p in (tmp_path / ".sim" / "default").iterdir())
    assert files == ["state.json"]


def test_an_unreadable_state_file_is_a_data_error_naming_the_fix(tmp_path: Path) -> None:
    SimulatedCluster(tmp_path)
    (tmp_path / ".sim" / "default" / "state.json").write_text("{not json")
    with pytest.raises(DataError, match="delete the file"):
        SimulatedCluster(tmp_path)


def test_an_existing_cluster_keeps_its_seed_and_refuses_another_namespace(tmp_path: Path) -> None:
    SimulatedCluster(tmp_path, seed=1)
    assert SimulatedCluster(tmp_path, seed=2).fingerprint == "sim:default:seed=1"
    with pytest.raises(DataError, match="namespace"):
        SimulatedCluster(tmp_path, namespace="boutique")
