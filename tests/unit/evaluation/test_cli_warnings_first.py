"""What qualifies the numbers comes before them, and a file that covers nothing is refused.

``evaluate`` and ``compare`` print the first parse issues with their line numbers and the
unknown/missing-id warnings before any table; a predictions file that covers none of the
incidents scored (a wrong ``--dataset``, ids of another dataset) exits 2 instead of printing
a table of zeros with exit 0.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from evalfixtures import make_record, pred
from typer.testing import CliRunner, Result

import r2act.cli
import r2act.cli.evaluate  # registers evaluate and compare on the app
from r2act import datasets
from r2act.cli.app import app
from r2act.datasets.folds import Folds
from r2act.errors import DataError

RECORDS = [
    make_record(s, f) for s in ("cartservice", "frontend") for f in ("pod_failure", "dns_fault")
]
WIDE = {"COLUMNS": "200"}


@pytest.fixture
def dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "dataset"
    directory.mkdir()
    folds = [[r.incident_id for r in RECORDS[:2]], [r.incident_id for r in RECORDS[2:]]]
    folds_json = Folds(k=2, seed=0, stratify_by=["service"], folds=folds).model_dump_json()
    (directory / "folds.json").write_text(folds_json)
    monkeypatch.setattr(datasets, "validate", lambda d, quick=False: [])
    monkeypatch.setattr(datasets, "load_records", lambda d: list(RECORDS))
    return directory


def write(path: Path, lines: list[object]) -> Path:
    path.write_bytes(
        b"".join((x if isinstance(x, bytes) else json.dumps(x).encode()) + b"\n" for x in lines)
    )
    return path


def run(*args: str) -> Result:
    return CliRunner().invoke(app, [*args, "--replicates", "200"], env=WIDE)


def _flawed(tmp_path: Path) -> Path:
    """Two good lines, a duplicate, two malformed lines and an id from another dataset."""
    return write(
        tmp_path / "flawed.jsonl",
        [
            pred(RECORDS[0]),
            b"{not json",
            pred(RECORDS[1]),
            pred(RECORDS[0]),
            b"[1, 2]",
            {**pred(RECORDS[2]), "incident_id": "onlineboutique_adservice_pod_failure_r09"},
        ],
    )


def _first(output: str, *needles: str) -> int:
    return min(i for i, line in enumerate(output.splitlines()) if any(n in line for n in needles))


@pytest.mark.parametrize("details", ["--details", "--no-details"])
def test_evaluate_prints_issue_lines_and_id_warnings_before_the_tables(
    dataset: Path, tmp_path: Path, details: str
) -> None:
    result = run("evaluate", str(_flawed(tmp_path)), "--dataset", str(dataset), details)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for needle in ("line 2: malformed_json", "line 4: duplicate_id", "line 5: not_an_object"):
        assert any(needle in line for line in lines), (needle, result.output)
    table = _first(result.output, "RCA-S")
    notes = [
        _first(result.output, needle)
        for needle in ("unknown_ids", "missing_ids", "line 2: malformed_json")
    ]
    assert max(notes) < table, result.output
    assert sum("unknown_ids" in line for line in lines) == 1  # not repeated after the tables


def test_compare_prints_issue_lines_and_warnings_before_its_table(
    dataset: Path, tmp_path: Path
) -> None:
    good = write(tmp_path / "good.jsonl", [pred(r) for r in RECORDS])
    result = run("compare", str(_flawed(tmp_path)), str(good), "--dataset", str(dataset))
    assert result.exit_code == 0, result.output
    assert "line 2: malformed_json" in result.output and "line 5: not_an_object" in result.output
    table = _first(result.output, "Pooled")
    assert _first(result.output, "unknown_ids") < table
    assert _first(result.output, "line 4: duplicate_id") < table


def _zero(tmp_path: Path) -> Path:
    """Well-formed predictions, all for ids this dataset does not have."""
    return write(
        tmp_path / "elsewhere.jsonl",
        [{**pred(r), "incident_id": r.incident_id.replace("_r01", "_r02")} for r in RECORDS],
    )


def test_evaluate_refuses_a_file_that_covers_no_incident_with_exit_2(
    dataset: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    zero, report = _zero(tmp_path), tmp_path / "report.json"
    argv = ["r2act", "evaluate", str(zero), "--dataset", str(dataset), "--json", str(report)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exited:
        r2act.cli.main()
    assert exited.value.code == 2
    captured = capsys.readouterr()
    err = [line for line in captured.err.splitlines() if line.strip()]
    assert len(err) == 1 and str(zero) in err[0] and "covers none of the 4 incidents" in err[0]
    assert "unknown_ids" in captured.out and "RCA-S" not in captured.out  # why, but no zeros
    assert not report.exists()


def test_a_file_with_no_attributable_line_and_a_fold_it_misses_are_refused(
    dataset: Path, tmp_path: Path
) -> None:
    unattributable = write(tmp_path / "bad-ids.jsonl", [{**pred(RECORDS[0]), "incident_id": 7}])
    result = run("evaluate", str(unattributable), "--dataset", str(dataset))
    assert isinstance(result.exception, DataError), result.output
    assert "covers none" in str(result.exception)
    first_fold = write(tmp_path / "fold0.jsonl", [pred(r) for r in RECORDS[:2]])
    result = run("evaluate", str(first_fold), "--dataset", str(dataset), "--fold", "1")
    assert isinstance(result.exception, DataError)
    assert "covers none of the 2 incidents" in str(result.exception)
    assert "fold 1" in str(result.exception)
    assert run("evaluate", str(first_fold), "--dataset", str(dataset), "--fold", "0").exit_code == 0


def test_compare_refuses_a_side_that_covers_no_incident(dataset: Path, tmp_path: Path) -> None:
    good = write(tmp_path / "good.jsonl", [pred(r) for r in RECORDS])
    result = run("compare", str(good), str(_zero(tmp_path)), "--dataset", str(dataset))
    assert isinstance(result.exception, DataError) and result.exception.exit_code == 2
    assert "elsewhere.jsonl: covers none" in str(result.exception)
    assert "Pooled" not in result.output


def test_help_says_which_exit_code_zero_coverage_gets() -> None:
    result = CliRunner().invoke(app, ["evaluate", "--help"], env={"COLUMNS": "300"})
    text = " ".join(result.output.split())
    assert "2 on bad input, including a file that covers none of the incidents" in text
