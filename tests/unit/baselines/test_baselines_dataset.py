"""Every baseline on a dataset the real pipeline built: one valid line per incident, etc."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from r2act.baselines import BASELINES, DatasetReader, run_baseline
from r2act.baselines import nb as nb_module
from r2act.datasets import ids
from r2act.errors import DataError, R2actError
from r2act.schema import Prediction


def _read(path: Path) -> list[Prediction]:
    """The predictions, keyed by incident id whichever id (case or incident) a line used."""
    lines = [Prediction.model_validate_json(line) for line in path.read_text().splitlines()]
    return [
        p.model_copy(update={"incident_id": _ALIASES.get(p.incident_id, p.incident_id)})
        for p in lines
    ]


_ALIASES: dict[str, str] = {}


@pytest.fixture(scope="module", autouse=True)
def _aliases(smoke_dataset: Path) -> None:
    _ALIASES.update(ids.aliases(DatasetReader(smoke_dataset).records))


@pytest.fixture(scope="module")
def outputs(smoke_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("predictions")
    return {
        name: run_baseline(name, smoke_dataset, out / f"{name}.jsonl", seed=1).out
        for name in IN_FULL
    }


IN_FULL = [name for name, baseline in BASELINES.items() if baseline.runs_in("full")]
"""The baselines that run in view full (tracerank needs full+traces: test_tracerank.py)."""


@pytest.mark.parametrize("name", IN_FULL)
def test_every_baseline_writes_one_valid_prediction_per_incident_in_record_order(
    name: str, outputs: dict[str, Path], smoke_dataset: Path
) -> None:
    ids = [r.incident_id for r in DatasetReader(smoke_dataset).records]
    predictions = _read(outputs[name])
    assert [p.incident_id for p in predictions] == ids
    assert all(p.method == name for p in predictions)


def test_gold_mapper_rca_is_always_the_label(outputs: dict[str, Path], smoke_dataset: Path) -> None:
    records = {r.incident_id: r for r in DatasetReader(smoke_dataset).records}
    for p in _read(outputs["gold-mapper"]):
        label = records[p.incident_id].labels
        assert (p.rca.service, p.rca.fault_type) == (label.service, label.fault_type.value)


def test_random_is_reproducible_with_a_seed_and_changes_with_another(
    smoke_dataset: Path, tmp_path: Path
) -> None:
    runs = [
        _read(run_baseline("random", smoke_dataset, tmp_path / f"{i}.jsonl", seed=s).out)
        for i, s in enumerate((7, 7, 8))
    ]
    assert runs[0] == runs[1]
    assert [p.rca for p in runs[0]] != [p.rca for p in runs[2]]


def test_nb_never_trains_on_the_fold_it_predicts(
    smoke_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folds = [set(f) for f in DatasetReader(smoke_dataset).folds]
    real_fit, real_predict = nb_module._fit, nb_module._predict
    predicted: list[str] = []

    def fit(ids: list[str], feats: Any, labels: list[str]) -> Any:
        return set(ids), real_fit(ids, feats, labels)

    def predict(fitted: Any, ids: list[str], feats: Any) -> list[str]:
        trained, model = fitted
        fold = next(f for f in folds if ids[0] in f)
        assert set(ids) == fold, "a split predicts exactly one fold"
        assert not trained & fold, "trained on the fold it predicts"
        assert trained == set().union(*(f for f in folds if f is not fold))
        predicted.extend(ids)
        return list(real_predict(model, ids, feats))

    monkeypatch.setattr(nb_module, "_fit", fit)
    monkeypatch.setattr(nb_module, "_predict", predict)
    run_baseline("nb", smoke_dataset, tmp_path / "nb.jsonl")
    assert sorted(set(predicted)) == sorted(set().union(*folds))


def test_majority_answers_each_fold_with_the_other_folds_majority(
    outputs: dict[str, Path], smoke_dataset: Path
) -> None:
    reader = DatasetReader(smoke_dataset)
    fold_of = {
        _ALIASES[i]: k for k, members in enumerate(reader.folds) for i in members
    }  # incident id -> fold
    for p in _read(outputs["majority"]):
        train = [r for r in reader.records if fold_of[r.incident_id] != fold_of[p.incident_id]]
        services = [r.labels.service for r in train]
        assert services.count(p.rca.service or "") == max(map(services.count, services))


def test_rule_diagnoses_better_than_keyword_on_the_smoke_dataset(
    outputs: dict[str, Path], smoke_dataset: Path
) -> None:
    records = {r.incident_id: r for r in DatasetReader(smoke_dataset).records}

    def right(name: str) -> int:
        return sum(
            p.rca.service == records[p.incident_id].labels.service for p in _read(outputs[name])
        )

    assert right("rule") > right("keyword")


def test_the_logs_view_hides_events_metrics_and_state(smoke_dataset: Path) -> None:
    reader = DatasetReader(smoke_dataset, view="logs")
    case = reader.case(reader.records[0])
    assert (case.events, case.metrics, case.states) == (None, None, {})
    assert set(case.logs["phase"]) <= {"pre", "during", "post"} and not case.logs.empty


def test_reader_returns_only_the_asked_incidents_rows(smoke_dataset: Path) -> None:
    reader = DatasetReader(smoke_dataset)
    first, second = reader.records[:2]
    a, b = reader.case(first), reader.case(second)
    assert len(a.logs) == first.observations.log_records
    assert b.metrics is not None
    assert len(b.metrics) == second.observations.metric_samples


def test_unknown_baseline_or_view_is_a_one_line_data_error(
    smoke_dataset: Path, tmp_path: Path
) -> None:
    with pytest.raises(DataError, match="unknown"):
        run_baseline("oracle", smoke_dataset, tmp_path / "x.jsonl")
    with pytest.raises(DataError, match="view"):
        run_baseline("rule", smoke_dataset, tmp_path / "x.jsonl", view="traces")
    assert not (tmp_path / "x.jsonl").exists()


def test_nb_without_scikit_learn_says_how_to_install_it(
    smoke_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "sklearn.naive_bayes", None)
    with pytest.raises(R2actError, match=r"r2act\[baselines\]"):
        run_baseline("nb", smoke_dataset, tmp_path / "nb.jsonl")
    assert not (tmp_path / "nb.jsonl").exists()


def test_reader_separates_incidents_that_share_a_row_group(
    smoke_dataset: Path, tmp_path: Path
) -> None:
    copy = Path(shutil.copytree(smoke_dataset, tmp_path / "dataset"))
    logs = copy / "observations" / "logs.parquet"
    table = pq.read_table(logs)
    pq.write_table(table, logs, row_group_size=table.num_rows)  # one group for all
    records = DatasetReader(copy).records
    reader = DatasetReader(copy)
    for record in records[:3]:
        frame = reader.case(record).logs
        assert len(frame) == record.observations.log_records


def test_cli_lists_baselines_and_writes_predictions(smoke_dataset: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from r2act.cli import _register_commands, app

    _register_commands()
    runner = CliRunner()
    listed = runner.invoke(app, ["baseline", "--list"])
    assert listed.exit_code == 0 and all(name in listed.output for name in BASELINES)
    out = tmp_path / "rule.jsonl"
    done = runner.invoke(
        app, ["baseline", "rule", "--dataset", str(smoke_dataset), "--out", str(out)]
    )
    assert done.exit_code == 0, done.output
    assert len(_read(out)) == len(DatasetReader(smoke_dataset).records)
    logs_only = runner.invoke(
        app,
        ["baseline", "rule", "--dataset", str(smoke_dataset), "--out", str(out), "--view", "logs"],
    )
    assert logs_only.exit_code == 0 and all(p.method == "rule[logs]" for p in _read(out))


def test_out_that_cannot_be_a_file_is_one_line_data_error(
    smoke_dataset: Path, tmp_path: Path
) -> None:
    (tmp_path / "a_dir").mkdir()
    (tmp_path / "a_file").write_text("")
    for out in (tmp_path / "a_dir", tmp_path / "a_file" / "rule.jsonl"):
        with pytest.raises(DataError, match="--out") as raised:
            run_baseline("rule", smoke_dataset, out)
        assert str(out) in str(raised.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_dir", "a_file"]  # no temp left


def test_cli_checks_the_name_first_and_quotes_paths_in_its_hint(
    smoke_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from r2act.cli import _register_commands, app

    _register_commands()
    monkeypatch.chdir(tmp_path)  # no ./r2act-runs here: the name is checked before that
    unknown = CliRunner().invoke(app, ["baseline", "nope"])
    assert isinstance(unknown.exception, DataError) and "baseline 'nope'" in str(unknown.exception)
    out = tmp_path / "with space" / "rule.jsonl"
    done = CliRunner().invoke(
        app, ["baseline", "rule", "--dataset", str(smoke_dataset), "--out", str(out), "-q"]
    )
    assert done.exit_code == 0, done.output
    assert f"r2act evaluate '{out}' --dataset" in " ".join(done.output.split("\n"))
