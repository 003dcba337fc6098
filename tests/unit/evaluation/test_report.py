"""Report views: Markdown escapes untrusted names, the scatter survives hostile labels."""

from __future__ import annotations

from pathlib import Path

from evalfixtures import lines_to_file, make_record, pred

from r2act.evaluation import (
    REPORT_SCHEMA_VERSION,
    EvaluationReport,
    evaluate,
    scatter,
    to_markdown,
)

RECORDS = [make_record("cartservice", "pod_failure"), make_record("frontend", "dns_fault")]


def _report(method: str) -> EvaluationReport:
    lines = [{**pred(r), "method": method} for r in RECORDS]
    other = [pred(r, service="frontend") for r in RECORDS]
    return evaluate(
        RECORDS, [lines_to_file(lines), lines_to_file(other, "other.jsonl")], replicates=200
    )


def test_markdown_escapes_pipes_in_method_names() -> None:
    text = to_markdown(_report("a|b"))
    assert "| a\\|b |" in text


def test_json_report_round_trips_with_schema_version() -> None:
    report = _report("m")
    again = type(report).model_validate_json(report.model_dump_json())
    assert again == report and again.schema_version == REPORT_SCHEMA_VERSION


def test_scatter_writes_a_png_even_for_mathtext_in_names(tmp_path: Path) -> None:
    path = scatter(_report("$\\frac{$x^"), tmp_path / "fig.png")
    assert path.read_bytes().startswith(b"\x89PNG")
