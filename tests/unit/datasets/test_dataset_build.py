"""The built dataset: layout, determinism, folds, provenance split, card and Croissant."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from r2act.datasets import build_dataset, compose, load, load_records, make_folds, validate
from r2act.datasets.card import embedded_composition
from r2act.schema import BenchmarkRecord


def _records(root: Path) -> list[BenchmarkRecord]:
    return load_records(root)


def test_fresh_build_validates_clean(built: Path) -> None:
    assert validate(built) == []


def test_layout_matches_the_design(built: Path) -> None:
    for name in (
        "README.md",
        "croissant.json",
        "cases.parquet",
        "folds.json",
        "SHA256SUMS",
        "observations/logs.parquet",
        "observations/events.parquet",
        "observations/metrics.parquet",
        "observations/state.parquet",
        "answers/incidents.parquet",
        "answers/key.json",
        "answers/audit_trail.parquet",
        "answers/provenance/chaos_events.parquet",
        "answers/provenance/chaos_objects.parquet",
        "answers/provenance/chaos_status.parquet",
        "answers/provenance/annotations.parquet",
        "schema/benchmark_record.schema.json",
        "figures/cells.png",
    ):
        assert (built / name).is_file(), name
    assert len(_records(built)) == 13
    data = [p for p in built.rglob("*") if p.is_file() and p.parent.name != "figures"]
    tables = [p for p in data if p.suffix not in {".md", ".json"} and p.name != "SHA256SUMS"]
    assert all(p.suffix == ".parquet" for p in tables), tables  # every table is Parquet
    trail = pq.read_table(built / "answers/audit_trail.parquet").column("group").to_pylist()
    assert sorted(trail) == ["failed", "failed", "warning"]


def test_rebuild_is_byte_identical(audited_run: Path, built: Path, tmp_path: Path) -> None:
    again = build_dataset(audited_run, tmp_path / "again", workers=1).out
    first = {p.relative_to(built): p.read_bytes() for p in built.rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []


def test_parallel_build_writes_the_same_bytes(
    audited_run: Path, built: Path, tmp_path: Path
) -> None:
    again = build_dataset(audited_run, tmp_path / "par", workers=2).out
    assert (again / "SHA256SUMS").read_bytes() == (built / "SHA256SUMS").read_bytes()


def test_method_visible_events_never_mention_chaos(built: Path) -> None:
    events = pq.read_table(built / "observations/events.parquet").to_pylist()
    assert events and not any("Chaos" in e["object_kind"] for e in events)
    provenance = pq.read_table(built / "answers/provenance/chaos_events.parquet")
    assert any("Chaos" in d for d in provenance.column("data").to_pylist())


def test_observations_are_keyed_by_case_and_phase(built: Path) -> None:
    logs = pq.read_table(built / "observations/logs.parquet", columns=["case_id", "phase"])
    keys = set(zip(*(logs.column(c).to_pylist() for c in ("case_id", "phase")), strict=True))
    assert keys == {(r.case_id, p) for r in _records(built) for p in ("pre", "during", "post")}


def test_folds_partition_the_main_set_and_spread_each_cell(built: Path) -> None:
    folds = json.loads((built / "folds.json").read_text())["folds"]
    members = [i for fold in folds for i in fold]
    records = _records(built)
    assert sorted(members) == sorted(str(r.case_id) for r in records)
    assert max(map(len, folds)) - min(map(len, folds)) <= 1
    for fold in folds:  # a cell of <= 5 incidents never has two in one fold
        cells = [next(r for r in records if r.case_id == i).labels for i in fold]
        keys = [(c.service, c.fault_type) for c in cells]
        assert len(keys) == len(set(keys))


def test_folds_depend_on_the_seed_only(built: Path) -> None:
    records = _records(built)
    assert make_folds(records, seed=1) == make_folds(list(reversed(records)), seed=1)
    assert make_folds(records, seed=1) != make_folds(records, seed=2)


def test_card_front_matter_and_composition(built: Path) -> None:
    card = (built / "README.md").read_text()
    assert card.startswith("---\nlicense: cc-by-4.0\n")
    claimed = embedded_composition(card)
    assert claimed == compose(_records(built))
    assert f"| log records | {claimed.log_records.total:,} |" in card


def test_every_hugging_face_config_is_loadable_one_format_one_schema_each(built: Path) -> None:
    # `datasets` rejects a config whose files differ in format and casts all of its splits
    # to the first file's schema, so a config mixing tables cannot load.
    card = (built / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    assert {"license", "task_categories", "size_categories", "configs"} <= header.keys()
    configs = {c["config_name"]: [f["path"] for f in c["data_files"]] for c in header["configs"]}
    assert [n for n, c in zip(configs, header["configs"], strict=True) if c.get("default")] == [
        "cases"
    ]
    for name, paths in configs.items():
        assert all((built / path).is_file() for path in paths), name
        assert {Path(path).suffix for path in paths} == {".parquet"}, name
        schemas = [pq.read_schema(built / p) for p in paths]
        assert all(s.equals(schemas[0]) for s in schemas), name
    listed = {path for paths in configs.values() for path in paths}
    on_disk = {p.relative_to(built).as_posix() for p in built.rglob("*.parquet")}
    empty = {p for p in on_disk if pq.ParquetFile(built / p).metadata.num_rows == 0}
    assert listed == on_disk - empty  # datasets cannot load a config without rows
    assert all(f"`{p}`" in card for p in empty)
    for view in ("`logs` = ", "`logs+events` = ", "`full` = "):
        assert view in card


def test_load_returns_only_the_views_modalities(built: Path) -> None:
    logs_only = load(built, view="logs")
    assert logs_only.events is None and logs_only.metrics is None and logs_only.state is None
    assert logs_only.requests is None
    full = load(built, view="full")
    assert full.events is not None and full.metrics is not None and full.state is not None
    assert full.requests is not None and "route" in full.requests.columns
    records = _records(built)
    assert len(full.logs) == sum(r.observations.log_records for r in records)
    assert len(full.cases) == len(records) and "incident_id" not in full.cases.columns
    one = str(records[0].case_id)
    subset = load(built, view="logs+events", incidents=[one])
    assert set(subset.logs.case_id) == {one} and list(subset.cases.case_id) == [one]
    by_incident = load(built, view="logs", incidents=[records[0].incident_id])
    assert set(by_incident.logs.case_id) == {one}  # either id selects the case
    nothing = load(built, view="full", incidents=[])
    assert nothing.cases.empty and nothing.logs.empty
    assert list(nothing.logs.columns)[:2] == ["case_id", "phase"]
    assert isinstance(full.logs.service.dtype, pd.CategoricalDtype)


def test_staged_logs_and_raw_logs_build_the_same_dataset(
    audited_run: Path, built: Path, tmp_path: Path
) -> None:
    import shutil

    run = Path(
        shutil.copytree(audited_run, tmp_path / "run", ignore=shutil.ignore_patterns("dataset"))
    )
    staged = sorted(p.name for p in (run / "audit" / "logs").iterdir())
    assert len(staged) == 13  # one per main incident
    shutil.rmtree(run / "audit" / "logs")
    again = build_dataset(run, tmp_path / "from-raw", workers=1).out
    for name in ("observations/logs.parquet", "answers/incidents.parquet", "cases.parquet"):
        assert (again / name).read_bytes() == (built / name).read_bytes(), name


def test_public_surfaces_export_what_they_list() -> None:
    import r2act.datasets
    import r2act.quality_gate

    for module in (r2act.datasets, r2act.quality_gate):
        assert all(hasattr(module, name) for name in module.__all__), module.__name__


def test_load_records_reads_only_the_records(built: Path) -> None:
    from r2act.datasets import load_records

    assert [r.incident_id for r in load_records(built)] == [r.incident_id for r in _records(built)]


def test_build_refuses_to_replace_a_directory_that_is_not_a_dataset(
    audited_run: Path, tmp_path: Path
) -> None:
    from r2act.errors import DataError

    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    with pytest.raises(DataError, match="not an r2act dataset"):
        build_dataset(audited_run, precious, workers=1)
    assert (precious / "notes.txt").read_text() == "keep me"


def test_runs_collected_before_noise_levels_audit_and_the_card_says_not_recorded(
    built: Path,
) -> None:
    # the fixture writes incident.json as releases before the noise key did (no target.noise)
    assert {r.metadata.noise for r in _records(built)} == {None}
    card = (built / "README.md").read_text()
    assert "- noise level(s): not recorded (" in card
