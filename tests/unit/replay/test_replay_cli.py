"""The replay command: which target it picks, and that an unsafe target is refused unwritten."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

import r2act.cli.replay  # noqa: F401 - registers replay on the app
from r2act import datasets
from r2act.cli.app import app
from r2act.cli.replay import replay_conditions
from r2act.cluster import kube
from r2act.errors import DataError, SafetyError
from r2act.schema import BenchmarkRecord, NoiseLevel

REPO = Path(__file__).resolve().parents[3]


def _predictions(path: Path, records: list[BenchmarkRecord]) -> Path:
    lines = [
        {"incident_id": r.incident_id, "plan": r.gold_plan.model_dump(mode="json")} for r in records
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _run(*args: str) -> Result:
    return CliRunner().invoke(app, ["replay", *args])


@pytest.fixture
def kube_records(
    smoke_records: list[BenchmarkRecord], monkeypatch: pytest.MonkeyPatch
) -> list[BenchmarkRecord]:
    records = [
        r.model_copy(
            update={"metadata": r.metadata.model_copy(update={"target_kind": "kubernetes"})}
        )
        for r in smoke_records[:2]
    ]
    monkeypatch.setattr(datasets, "load_records", lambda _d: list(records))
    monkeypatch.setattr(datasets, "validate", lambda _d: [])  # records only, no files
    return records


class _UnlabelledNamespaceApi:
    """A Kubernetes API whose namespace lacks the opt-in label; any write would fail loudly."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def read_namespace(self) -> dict[str, Any]:
        self.calls.append("read_namespace")
        return {"metadata": {"name": "boutique", "labels": {}}}


def test_kubernetes_dataset_without_a_target_is_refused_not_replayed_on_the_simulator(
    kube_records: list[BenchmarkRecord], tmp_path: Path
) -> None:
    predictions = _predictions(tmp_path / "gold.jsonl", kube_records)
    out = tmp_path / "out"
    result = _run(str(predictions), "--dataset", str(tmp_path), "--out", str(out))
    assert isinstance(result.exception, DataError), result.output
    assert "--target CAMPAIGN.yaml" in str(result.exception)
    assert not out.exists()


def test_kubernetes_target_without_the_opt_in_label_is_refused_before_any_write(
    kube_records: list[BenchmarkRecord], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = _UnlabelledNamespaceApi()

    def from_target(target: Any, **_options: Any) -> kube.KubeCluster:
        cluster = kube.KubeCluster.__new__(kube.KubeCluster)
        cluster._api = api  # type: ignore[assignment]
        cluster._context = cluster._expected_context = target.context
        cluster._namespace = target.namespace
        return cluster

    monkeypatch.setattr(kube.KubeCluster, "from_target", staticmethod(from_target))
    predictions = _predictions(tmp_path / "gold.jsonl", kube_records)
    out = tmp_path / "out"
    manifest = REPO / "campaigns" / "kind-demo.yaml"
    result = _run(
        str(predictions), "--dataset", str(tmp_path), "--out", str(out), "--target", str(manifest)
    )
    assert isinstance(result.exception, SafetyError), result.output
    assert "r2act.io/chaos-allowed" in str(result.exception)
    assert api.calls == ["read_namespace"]  # the safety check, and nothing after it
    assert not out.exists()


def test_a_simulated_dataset_replays_on_a_simulated_cluster_with_its_recorded_seed(
    smoke_records: list[BenchmarkRecord], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [
        r.model_copy(update={"metadata": r.metadata.model_copy(update={"target_seed": 4242})})
        for r in smoke_records[:1]
    ]
    monkeypatch.setattr(datasets, "load_records", lambda _d: list(records))
    monkeypatch.setattr(datasets, "validate", lambda _d: [])  # records only, no files
    predictions = _predictions(tmp_path / "gold.jsonl", records)
    out = tmp_path / "out"
    result = _run(str(predictions), "--dataset", str(tmp_path), "--out", str(out), "-q")
    assert result.exit_code == 0, result.output
    states = list(out.glob(".sim/*/state.json"))
    assert len(states) == 1
    assert json.loads(states[0].read_text())["seed"] == 4242


def _with(record: BenchmarkRecord, **update: Any) -> BenchmarkRecord:
    return record.model_copy(update={"metadata": record.metadata.model_copy(update=update)})


def test_a_simulated_replay_uses_the_datasets_noise_level_and_users(
    smoke_records: list[BenchmarkRecord], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from r2act.cluster import connect as connect_module

    first = smoke_records[0]
    records = [_with(first, noise=NoiseLevel.HEAVY, load_profile={"users": 25})]
    monkeypatch.setattr(datasets, "load_records", lambda _d: list(records))
    monkeypatch.setattr(datasets, "validate", lambda _d: [])
    seen: dict[str, Any] = {}
    real = connect_module.connect

    def spy(target: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        return real(target, **kwargs)

    monkeypatch.setattr(connect_module, "connect", spy)
    predictions = _predictions(tmp_path / "gold.jsonl", records)
    result = _run(str(predictions), "--dataset", str(tmp_path), "--out", str(tmp_path / "o"), "-q")
    assert result.exit_code == 0, result.output
    assert (seen["noise"], seen["users"]) == (NoiseLevel.HEAVY, 25)


def test_records_without_a_noise_level_replay_in_the_clean_room_they_came_from(
    smoke_records: list[BenchmarkRecord],
) -> None:
    old = [_with(r, noise=None, load_profile={"users": 10}) for r in smoke_records[:3]]
    assert replay_conditions(old) == (NoiseLevel.NONE, 10)
    mixed = [*old, _with(smoke_records[0], noise=NoiseLevel.HEAVY, load_profile={"users": 4})]
    assert replay_conditions(mixed) == (NoiseLevel.NONE, 10)  # the most common
