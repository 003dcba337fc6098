"""Without --dataset, a predictions file in RUN/predictions/ is scored against RUN/dataset.

Two campaigns share incident ids (``cartservice_pod_failure_severe_r01`` is in both), so
scoring against the newest dataset instead would match a few ids and report wrong numbers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from r2act.cli._datasets import dataset_dir
from r2act.errors import DataError


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name, mtime in (("smoke", 1_000), ("other", 2_000)):  # other is the newest
        (tmp_path / "r2act-runs" / name / "predictions").mkdir(parents=True)
        dataset = tmp_path / "r2act-runs" / name / "dataset"
        dataset.mkdir()
        os.utime(dataset, (mtime, mtime))
    return Path("r2act-runs")


def test_a_file_in_run_predictions_uses_that_runs_dataset(runs: Path) -> None:
    rule = runs / "smoke" / "predictions" / "rule.jsonl"
    gold = runs / "smoke" / "predictions" / "gold.jsonl"
    assert dataset_dir(None, [rule]) == runs / "smoke" / "dataset"
    assert dataset_dir(None, [rule, gold]) == runs / "smoke" / "dataset"


def test_files_of_two_runs_or_elsewhere_fall_back_to_the_newest(runs: Path) -> None:
    mixed = [runs / "smoke" / "predictions" / "a.jsonl", runs / "other" / "predictions" / "b.jsonl"]
    assert dataset_dir(None, mixed) == runs / "other" / "dataset"
    assert dataset_dir(None, [Path("mine.jsonl")]) == runs / "other" / "dataset"
    assert dataset_dir(None) == runs / "other" / "dataset"


def test_a_given_dataset_wins_and_a_missing_one_names_the_option(runs: Path) -> None:
    rule = runs / "smoke" / "predictions" / "rule.jsonl"
    assert dataset_dir(runs / "other" / "dataset", [rule]) == runs / "other" / "dataset"
    with pytest.raises(DataError, match=r"nope: dataset directory not found \(pass --dataset"):
        dataset_dir(Path("nope"), [rule])
