"""The baselines on a second system, and the policy an RCA-only diagnosis is mapped under.

Every RCA-only baseline (the floors, keyword, rule, nb) carries its diagnosis through the
mapper of the record's own policy, as the gold control and RCAEval do: on a dataset labelled
under ``paper-table-ii/1`` its plans are that policy's, not ``r2act-mechanics/3``'s.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from r2act.actions import DEFAULT_POLICY, map_rca, policy_named
from r2act.baselines import DatasetReader, run_baseline
from r2act.baselines.base import fault_types
from r2act.datasets import ids
from r2act.schema import FaultType, Prediction
from r2act.systems import SYSTEMS

RCA_ONLY = ("random", "majority", "keyword", "rule", "nb")


def _predictions(dataset: Path, name: str, out: Path) -> list[tuple[Prediction, Any]]:
    """Each prediction with its record, whichever id the line used."""
    reader = DatasetReader(dataset)
    aliases = ids.aliases(reader.records)
    records = {r.incident_id: r for r in reader.records}
    path = run_baseline(name, dataset, out / f"{name}.jsonl", seed=1).out
    lines = [Prediction.model_validate_json(x) for x in path.read_text().splitlines()]
    assert [aliases[p.incident_id] for p in lines] == [r.incident_id for r in reader.records]
    return [(p, records[aliases[p.incident_id]]) for p in lines]


def _policy_plan(prediction: Prediction, record: Any, policy: Any) -> Any:
    assert prediction.rca.service is not None and prediction.rca.fault_type is not None
    return map_rca(
        prediction.rca.service,
        FaultType(prediction.rca.fault_type),
        record.action_space,
        SYSTEMS[record.metadata.system],
        policy,
    )


@pytest.mark.parametrize("name", [*RCA_ONLY, "gold-mapper"])
def test_every_baseline_runs_on_the_astronomy_shop_in_its_label_space(
    name: str, astronomy_dataset: Path, tmp_path: Path
) -> None:
    space = {f.value for f in fault_types(SYSTEMS["astronomyshop"])}
    for prediction, record in _predictions(astronomy_dataset, name, tmp_path):
        assert record.metadata.system == "astronomyshop"
        assert prediction.rca.fault_type in space
        assert prediction.rca.service in record.action_space.targets
        assert prediction.plan == _policy_plan(prediction, record, policy_named(record.policy))


def test_rca_only_baselines_map_under_the_records_policy(sim_runs: Any, tmp_path: Path) -> None:
    run, dataset = tmp_path / "run", tmp_path / "dataset"
    shutil.copytree(sim_runs.boutique, run)
    for args in (
        ("audit", str(run), "--policy", "paper-table-ii/1", "--workers", "1"),
        ("dataset", "build", str(run), "--out", str(dataset), "-q"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "r2act", *args], capture_output=True, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
    paper = policy_named("paper-table-ii/1")
    for name in RCA_ONLY:
        differ = 0
        for prediction, record in _predictions(dataset, name, tmp_path):
            assert record.policy == "paper-table-ii/1"
            assert prediction.plan == _policy_plan(prediction, record, paper), name
            differ += prediction.plan != _policy_plan(prediction, record, DEFAULT_POLICY)
        assert differ > 0, f"{name}: no plan tells the two policies apart on this dataset"
