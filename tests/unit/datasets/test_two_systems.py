"""A dataset holding both systems: built from an Online Boutique run and an Astronomy Shop run,
published like any dataset, and scored per system (issue 23 point 6).

The runs are the two smoke campaigns on the simulator (``sim_runs`` in ``tests/conftest.py``).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from r2act.datasets import layout, load_records, validate

SYSTEMS = ("astronomyshop", "onlineboutique")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "r2act", *args], capture_output=True, text=True, check=False
    )


def _ok(*args: str) -> str:
    done = _cli(*args)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def datasets(sim_runs: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The pooled dataset and each system's own, built from the same two runs."""
    root = tmp_path_factory.mktemp("pooled")
    both, boutique = root / "both", root / "boutique"
    _ok("dataset", "build", str(sim_runs.boutique), str(sim_runs.astronomy), "--out", str(both))
    _ok("dataset", "build", str(sim_runs.boutique), "--out", str(boutique), "-q")
    return {
        "both": both,
        "onlineboutique": boutique,
        "astronomyshop": sim_runs.astronomy_dataset,
    }


def test_two_runs_of_two_systems_build_one_valid_dataset(datasets: dict[str, Path]) -> None:
    both = datasets["both"]
    assert validate(both) == []
    records = load_records(both)
    alone = {s: load_records(datasets[s]) for s in SYSTEMS}
    assert {r.metadata.system for r in records} == set(SYSTEMS)
    # every main incident of each run, once; the answers layout is one dataset's
    assert sorted(r.incident_id for r in records) == sorted(
        r.incident_id for s in SYSTEMS for r in alone[s]
    )
    assert all(re.fullmatch(r"case-[0-9a-f]{12}", str(r.case_id)) for r in records)
    assert len({r.case_id for r in records}) == len(records)
    key = json.loads((both / layout.KEY).read_text())
    assert re.fullmatch(r"[0-9a-f]{64}", key["salt"])
    listed = (both / layout.SHA256SUMS).read_text()
    assert layout.INCIDENTS in listed and layout.CASES in listed
    folds = json.loads((both / layout.FOLDS).read_text())["folds"]
    assert sorted(c for f in folds for c in f) == sorted(str(r.case_id) for r in records)


def test_the_card_and_croissant_name_both_systems(datasets: dict[str, Path]) -> None:
    card = (datasets["both"] / layout.README).read_text()
    assert "- 2 systems (Astronomy Shop, Online Boutique), scored per system" in card
    assert "fault injectors: Chaos Mesh, r2act ConfigFault" in card
    croissant = json.loads((datasets["both"] / layout.CROISSANT).read_text())
    assert "2 systems (Astronomy Shop, Online Boutique)" in croissant["description"]
    one = json.loads((datasets["onlineboutique"] / layout.CROISSANT).read_text())
    assert "system" not in one["description"]  # a one-system dataset keeps its sentence


def _evaluate(dataset: Path, predictions: list[Path], out: Path) -> tuple[dict[str, Any], str]:
    printed = _ok(
        "evaluate",
        *map(str, predictions),
        "--dataset",
        str(dataset),
        "--replicates",
        "200",
        "--json",
        str(out),
        "--no-details",
        "--plot",
        str(out.with_suffix(".png")),
    )
    return json.loads(out.read_text()), printed


@pytest.mark.slow
def test_a_two_system_dataset_is_scored_per_system_as_each_alone(
    datasets: dict[str, Path], tmp_path: Path
) -> None:
    def predictions(name: str) -> list[Path]:
        files = []
        for method in ("rule", "gold-mapper", "keyword"):  # no training: folds differ
            path = tmp_path / f"{name}-{method}.jsonl"
            _ok("baseline", method, "--dataset", str(datasets[name]), "--out", str(path), "-q")
            files.append(path)
        return files

    pooled, printed = _evaluate(datasets["both"], predictions("both"), tmp_path / "both.json")
    for system in SYSTEMS:
        assert f"[system {system}]" in printed  # every metric printed per system
        own, _ = _evaluate(datasets[system], predictions(system), tmp_path / f"{system}.json")
        by_name = {m["name"]: m for m in own["methods"]}
        for method in pooled["methods"]:
            per_system = method["by_system"][system]
            alone = by_name[method["name"]]["metrics"]
            assert set(per_system) == set(alone) == set(method["metrics"])
            for metric, value in alone.items():
                assert per_system[metric]["value"] == value["value"], (method["name"], metric)
                assert per_system[metric]["n"] == value["n"]
                assert {"ci_low", "ci_high", "interval"} <= set(per_system[metric])
    # the pool is the two systems' incidents together
    rule = next(m for m in pooled["methods"] if m["name"] == "rule")
    assert rule["metrics"]["rca_s"]["n"] == sum(rule["by_system"][s]["rca_s"]["n"] for s in SYSTEMS)


def test_building_from_several_runs_refuses_ambiguous_input(sim_runs: Any, tmp_path: Path) -> None:
    run = str(sim_runs.astronomy)
    no_out = _cli("dataset", "build", str(sim_runs.boutique), run)
    assert no_out.returncode == 2 and "--out" in no_out.stderr
    twice = _cli("dataset", "build", run, run, "--out", str(tmp_path / "x"))
    assert twice.returncode == 2 and "named twice" in twice.stderr
    copy = tmp_path / "copy"
    shutil.copytree(sim_runs.astronomy / "audit", copy / "audit")
    same = _cli("dataset", "build", run, str(copy), "--out", str(tmp_path / "y"))
    assert same.returncode == 2 and "is also in" in same.stderr
    assert not (tmp_path / "y").exists()


def _exported(dataset: Path, out: Path) -> list[dict[str, str]]:
    _ok("dataset", "export", str(dataset), "--format", "rcaeval", "--out", str(out))
    with (out / "cases.csv").open() as index:
        rows = list(csv.DictReader(index))
    for row in rows:
        case = out / row["folder"]
        data = pd.read_csv(case / "data.csv")
        inject = int((case / "inject_time.txt").read_text())
        assert (data["time"] < inject).any() and (data["time"] >= inject).any()
        assert all(c == "time" or c.count("_") == 1 for c in data.columns)  # RCAEval's split
        assert f"{row['service']}_cpu" in data.columns
        service, fault = case.parent.name.split("_")
        assert (service, fault) == (row["service"], row["fault_type"].replace("_", "-"))
        assert (case / "logs.csv").is_file()
    return rows


def test_the_rcaeval_export_runs_on_the_astronomy_shop_and_on_both(
    datasets: dict[str, Path], tmp_path: Path
) -> None:
    shop = load_records(datasets["astronomyshop"])
    rows = _exported(datasets["astronomyshop"], tmp_path / "shop")
    assert sorted(r["case_id"] for r in rows) == sorted(str(r.case_id) for r in shop)
    assert len({r["folder"] for r in rows}) == len(shop)
    assert not any(r["folder"].startswith("astronomyshop/") for r in rows)  # one system: as is
    pooled = load_records(datasets["both"])
    rows = _exported(datasets["both"], tmp_path / "both")
    assert len(rows) == len(pooled) == len(list((tmp_path / "both").glob("**/data.csv")))
    system = {str(r.case_id): r.metadata.system for r in pooled}
    assert all(r["folder"].startswith(f"{system[r['case_id']]}/") for r in rows)
