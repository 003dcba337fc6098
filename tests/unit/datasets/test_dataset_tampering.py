"""Damage a built dataset in one way; ``validate`` must fail and name the problem."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from r2act.cli import _register_commands, app
from r2act.datasets import validate


def _codes(root: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for problem in validate(root):
        found.setdefault(problem.code, set()).add(problem.where)
    return found


def test_editing_one_byte_is_a_checksum_mismatch_on_that_file(dataset_copy: Path) -> None:
    path = dataset_copy / "observations" / "metrics.parquet"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    assert "observations/metrics.parquet" in _codes(dataset_copy)["CHECKSUM_MISMATCH"]


def test_deleting_an_observation_file_is_named(dataset_copy: Path) -> None:
    (dataset_copy / "observations" / "events.parquet").unlink()
    codes = _codes(dataset_copy)
    assert "observations/events.parquet" in codes["FILE_MISSING"]
    assert "observations/events.parquet" in codes["OBSERVATIONS_MISSING"]


def _rewrite_records(root: Path, rows: Callable[[pa.Table], pa.Table]) -> None:
    path = root / "answers" / "incidents.parquet"
    pq.write_table(rows(pq.read_table(path)), path)


def test_duplicating_an_id_is_named(dataset_copy: Path) -> None:
    _rewrite_records(dataset_copy, lambda t: pa.concat_tables([t, t.slice(0, 1)]))
    codes = _codes(dataset_copy)
    assert "DUPLICATE_ID" in codes
    assert "FOLDS_NOT_PARTITION" not in codes  # the id set itself did not change


def test_removing_a_record_orphans_its_observations_and_breaks_the_folds(
    dataset_copy: Path,
) -> None:
    _rewrite_records(dataset_copy, lambda t: t.slice(1))
    codes = _codes(dataset_copy)
    assert {
        "CHECKSUM_MISMATCH",
        "ORPHAN_OBSERVATIONS",
        "FOLDS_NOT_PARTITION",
        "CARD_MISMATCH",
    } <= codes.keys()


def test_an_extra_file_is_unlisted(dataset_copy: Path) -> None:
    (dataset_copy / "notes.txt").write_text("hello")
    assert _codes(dataset_copy) == {"FILE_UNLISTED": {"notes.txt"}}


def test_a_replaced_figure_no_longer_matches_the_data(dataset_copy: Path) -> None:
    cells = dataset_copy / "figures" / "cells.png"
    (dataset_copy / "figures" / "composition.png").write_bytes(cells.read_bytes())
    assert "figures/composition.png" in _codes(dataset_copy)["FIGURE_MISMATCH"]


def test_validate_command_prints_every_problem_and_exits_2(dataset_copy: Path) -> None:
    _register_commands()
    (dataset_copy / "observations" / "state.parquet").write_text("not parquet\n")
    result = CliRunner().invoke(app, ["dataset", "validate", str(dataset_copy)])
    assert result.exit_code == 2
    assert "UNREADABLE" in result.output and "CHECKSUM_MISMATCH" in result.output


def test_a_case_id_that_is_not_the_hmac_of_its_incident_is_named(dataset_copy: Path) -> None:
    def swap(table: pa.Table) -> pa.Table:
        cases = table.column("case_id").to_pylist()
        cases[0], cases[1] = cases[1], cases[0]
        return table.set_column(0, "case_id", pa.array(cases, pa.string()))

    _rewrite_records(dataset_copy, swap)
    assert "CASE_ID_MISMATCH" in _codes(dataset_copy) or "RECORD_INVALID" in _codes(dataset_copy)


def test_validate_command_accepts_a_clean_dataset(built: Path) -> None:
    _register_commands()
    result = CliRunner().invoke(app, ["dataset", "validate", str(built)])
    assert result.exit_code == 0, result.output
