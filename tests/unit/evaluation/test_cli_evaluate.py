"""The evaluate and compare commands: exit codes, written artefacts, fold selection.

The dataset's validation and record loader are replaced by records built in memory (only
folds.json is a real file), so these tests exercise only the command layer and the
evaluation core.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalfixtures import make_record, pred
from typer.testing import CliRunner, Result

import r2act.cli.evaluate  # noqa: F401 - registers evaluate and compare on the app
from r2act import datasets
from r2act.cli.app import app
from r2act.datasets.folds import Folds
from r2act.errors import DataError
from r2act.evaluation import REPORT_SCHEMA_VERSION
from r2act.quality_gate.problems import error

RECORDS = [
    make_record(s, f) for s in ("cartservice", "frontend") for f in ("pod_failure", "dns_fault")
]


@pytest.fixture
def dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "dataset"
    directory.mkdir()
    folds = [[r.incident_id for r in RECORDS[:2]], [r.incident_id for r in RECORDS[2:]]]
    folds_json = Folds(k=2, seed=0, stratify_by=["service"], folds=folds).model_dump_json()
    (directory / "folds.json").write_text(folds_json)
    monkeypatch.setattr(datasets, "validate", lambda d, quick=False: [])
    monkeypatch.setattr(datasets, "load_records", lambda d: list(RECORDS))
    monkeypatch.setattr(datasets, "load", None)  # scoring must not read observations
    return directory


def write(path: Path, lines: list[object]) -> Path:
    path.write_bytes(
        b"".join((x if isinstance(x, bytes) else json.dumps(x).encode()) + b"\n" for x in lines)
    )
    return path


def run(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def test_bad_lines_exit_zero_and_json_has_every_number_with_ci_and_n(
    dataset: Path, tmp_path: Path
) -> None:
    preds = write(tmp_path / "p.jsonl", [pred(RECORDS[0]), b"\xff garbage", b"{"])
    out = tmp_path / "report.json"
    result = run(
        "evaluate", str(preds), "--dataset", str(dataset), "--json", str(out), "--replicates", "200"
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["schema_version"] == REPORT_SCHEMA_VERSION and report["incidents"] == 4
    method = report["methods"][0]
    assert method["parse"]["issues_by_kind"] == {"not_utf8": 1, "malformed_json": 1}
    assert [i["line"] for i in method["parse"]["issues"]] == [2, 3]
    for estimate in method["metrics"].values():
        assert {"value", "ci_low", "ci_high", "n"} <= set(estimate)


def test_missing_predictions_file_is_a_data_error(dataset: Path, tmp_path: Path) -> None:
    result = run("evaluate", str(tmp_path / "absent.jsonl"), "--dataset", str(dataset))
    assert isinstance(result.exception, DataError) and result.exception.exit_code == 2


def test_dataset_failing_validation_is_a_data_error(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        datasets,
        "validate",
        lambda d, quick=False: [error("BAD_RECORD", "bad record", "incidents.jsonl:3")],
    )
    preds = write(tmp_path / "p.jsonl", [pred(RECORDS[0])])
    result = run("evaluate", str(preds), "--dataset", str(dataset))
    assert isinstance(result.exception, DataError)
    assert "fails validation" in str(result.exception)


def test_several_files_give_one_row_each_markdown_and_a_png(dataset: Path, tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", [pred(r) for r in RECORDS])
    b = write(tmp_path / "b.jsonl", [pred(r, service="frontend") for r in RECORDS])
    md = tmp_path / "out" / "report.md"
    result = run(
        "evaluate",
        str(a),
        str(b),
        "--dataset",
        str(dataset),
        "--markdown",
        str(md),
        "--replicates",
        "200",
        "--no-details",
    )
    assert result.exit_code == 0, result.output
    text = md.read_text()
    assert "| a |" in text and "| b |" in text
    assert (tmp_path / "out" / "report.png").read_bytes().startswith(b"\x89PNG")


def test_fold_restricts_the_denominator(dataset: Path, tmp_path: Path) -> None:
    preds = write(tmp_path / "p.jsonl", [pred(r) for r in RECORDS])
    out = tmp_path / "fold.json"
    result = run(
        "evaluate",
        str(preds),
        "--dataset",
        str(dataset),
        "--fold",
        "1",
        "--json",
        str(out),
        "--replicates",
        "200",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["incidents"] == 2 and report["fold"] == 1
    assert report["methods"][0]["warnings"] == []


def test_unknown_fold_is_a_data_error(dataset: Path, tmp_path: Path) -> None:
    preds = write(tmp_path / "p.jsonl", [pred(RECORDS[0])])
    result = run("evaluate", str(preds), "--dataset", str(dataset), "--fold", "7")
    assert isinstance(result.exception, DataError) and "no fold 7" in str(result.exception)


def test_compare_writes_summary_lines(dataset: Path, tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", [pred(r) for r in RECORDS])
    b = write(tmp_path / "b.jsonl", [pred(r, plan_=None) for r in RECORDS])
    md, js = tmp_path / "cmp.md", tmp_path / "cmp.json"
    result = run(
        "compare",
        str(a),
        str(b),
        "--dataset",
        str(dataset),
        "--by",
        "service",
        "--markdown",
        str(md),
        "--json",
        str(js),
        "--replicates",
        "200",
    )
    assert result.exit_code == 0, result.output
    assert "Valid by service: +1.000" in md.read_text()
    assert json.loads(js.read_text())["by"] == "service"


def test_markup_in_untrusted_method_names_is_printed_literally(
    dataset: Path, tmp_path: Path
) -> None:
    line = {**pred(RECORDS[0]), "method": "[bold red]evil[/]"}
    preds = write(tmp_path / "p.jsonl", [line])
    result = run("evaluate", str(preds), "--dataset", str(dataset), "--replicates", "200")
    assert result.exit_code == 0
    assert "[bold red]evil[/]" in result.output


def test_hostile_strings_survive_to_every_output(dataset: Path, tmp_path: Path) -> None:
    hostile = [
        b'{"incident_id": "\\ud800bad", "rca": {"service": "x"}}',
        b'{"incident_id": "onlineboutique_\\u202efoo_pod_failure_moderate_r01"}',
        json.dumps({**pred(RECORDS[1]), "rca": {"service": "\ud800[red]x"}}).encode(),
        json.dumps({**pred(RECORDS[2]), "\ud800k[/]": 1, "method": "m\u202e"}).encode(),
        json.dumps({"incident_id": "unknown_[bold]id_pod_failure_moderate_r01"}).encode(),
    ]
    preds = write(tmp_path / "p.jsonl", [pred(RECORDS[0]), *hostile])
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    args = ["--dataset", str(dataset), "--json", str(out), "--markdown", str(md)]
    result = run("evaluate", str(preds), *args, "--replicates", "200")
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["methods"][0]["parse"]["issues_by_kind"]["bad_incident_id"] == 2
    assert "unknown_ids" in md.read_text()


def test_scoring_asks_for_quick_validation_and_reads_only_records(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Path, bool]] = []

    def validate(directory: Path, quick: bool = False) -> list[object]:
        calls.append((directory, quick))
        return []

    monkeypatch.setattr(datasets, "validate", validate)
    preds = write(tmp_path / "p.jsonl", [pred(r) for r in RECORDS])
    result = run(
        "evaluate", str(preds), "--dataset", str(dataset), "--fold", "1", "--replicates", "200"
    )
    assert result.exit_code == 0, result.output  # datasets.load is None: it was never called
    assert calls == [(dataset, True)]


def test_no_details_still_prints_parse_issues_and_warnings(dataset: Path, tmp_path: Path) -> None:
    preds = write(tmp_path / "p.jsonl", [pred(RECORDS[0]), b"{", {"incident_id": "nope"}])
    result = run(
        "evaluate", str(preds), "--dataset", str(dataset), "--no-details", "--replicates", "200"
    )
    assert result.exit_code == 0, result.output
    assert "parse issues: malformed_json 1" in result.output
    assert "missing_ids" in result.output and "unknown_ids" in result.output
    assert "by fault type" not in result.output


def test_without_dataset_a_run_predictions_file_is_scored_on_its_own_run(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    monkeypatch.chdir(tmp_path)
    for name, mtime in (("smoke", 1_000), ("newer", 2_000)):
        own = tmp_path / "r2act-runs" / name / "dataset"
        own.mkdir(parents=True)
        (own / "folds.json").write_bytes((dataset / "folds.json").read_bytes())
        os.utime(own, (mtime, mtime))
    preds = tmp_path / "r2act-runs" / "smoke" / "predictions" / "rule.jsonl"
    preds.parent.mkdir()
    write(preds, [pred(r) for r in RECORDS])
    relative = preds.relative_to(tmp_path)
    result = run("evaluate", str(relative), "--no-details", "--replicates", "200")
    assert result.exit_code == 0, result.output
    assert "using dataset r2act-runs/smoke/dataset" in result.output


def test_replicates_too_large_for_memory_is_one_line_exit_2(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from r2act import evaluation

    def out_of_memory(*_args: object, **_kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(evaluation, "evaluate", out_of_memory)
    monkeypatch.setattr(evaluation, "compare", out_of_memory)
    preds = write(tmp_path / "p.jsonl", [pred(r) for r in RECORDS])
    for args in (["evaluate", str(preds)], ["compare", str(preds), str(preds)]):
        result = run(*args, "--dataset", str(dataset), "--replicates", "99999999")
        assert isinstance(result.exception, DataError), result.output
        assert str(result.exception).startswith("--replicates 99999999: not enough memory")


def test_piped_output_keeps_the_intervals_and_a_set_columns_is_obeyed(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preds = write(tmp_path / "p.jsonl", [pred(r) for r in RECORDS])
    args = ("evaluate", str(preds), "--dataset", str(dataset), "--replicates", "200")
    monkeypatch.delenv("COLUMNS", raising=False)
    piped = run(*args)  # CliRunner's output is not a terminal: like `| tee log`
    assert piped.exit_code == 0, piped.output
    assert "terminal too narrow" not in piped.output
    assert "[.51,1.00]†" in piped.output  # four incidents: Wilson's interval of 4/4
    monkeypatch.setenv("COLUMNS", "60")
    narrow = run(*args)
    assert "terminal too narrow for the intervals" in narrow.output


def test_evaluate_writes_csv_latex_and_a_pdf_plot(dataset: Path, tmp_path: Path) -> None:
    preds = write(tmp_path / "p.jsonl", [pred(r) for r in RECORDS])
    out = tmp_path / "out"
    result = run(
        "evaluate",
        str(preds),
        "--dataset",
        str(dataset),
        "--csv",
        str(out / "r.csv"),
        "--latex",
        str(out / "r.tex"),
        "--plot",
        str(out / "fig.pdf"),
        "--replicates",
        "200",
    )
    assert result.exit_code == 0, result.output
    header = (out / "r.csv").read_text().splitlines()[0]
    assert header.startswith("method,breakdown,stratum,metric,label,value,ci_low,ci_high")
    assert r"\toprule" in (out / "r.tex").read_text()
    assert (out / "fig.pdf").read_bytes().startswith(b"%PDF")


def test_compare_writes_csv_and_latex(dataset: Path, tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", [pred(r) for r in RECORDS])
    b = write(tmp_path / "b.jsonl", [pred(r, plan_=None) for r in RECORDS])
    csv_out, tex = tmp_path / "c.csv", tmp_path / "c.tex"
    args = ["--dataset", str(dataset), "--csv", str(csv_out), "--latex", str(tex)]
    result = run("compare", str(a), str(b), *args, "--replicates", "200")
    assert result.exit_code == 0, result.output
    rows = csv_out.read_text().splitlines()
    assert rows[0].startswith("a,b,by,metric,label,stratum,delta")
    assert len(rows) == 1 + 8 * (1 + 2)  # header; 8 metrics x (pooled + 2 fault types)
    assert r"\bottomrule" in tex.read_text()
    assert "not assessed" not in result.output  # the terminal marks them with the note
    assert "Newcombe paired score interval" in result.output
