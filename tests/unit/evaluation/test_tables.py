"""Terminal tables of an evaluation: nothing is cut short on a narrow terminal."""

from __future__ import annotations

import re

import pytest
from evalfixtures import lines_to_file, make_record, pred
from rich.console import Console

from r2act.evaluation import evaluate
from r2act.evaluation.tables import details, methods_table, notes

RECORDS = [
    make_record(s, f)
    for s in ("cartservice", "checkoutservice")
    for f in ("pod_failure", "memory_pressure", "dns_fault")
]


def _render(renderable: object, width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def _report() -> object:
    good = lines_to_file([pred(r) for r in RECORDS], source="good.jsonl")
    half = lines_to_file(
        [pred(r, service="frontend") for r in RECORDS[:3]] + [b"{oops", {"incident_id": "nope"}],
        source="half.jsonl",
    )
    return evaluate(RECORDS, [good, half], replicates=200)


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_no_value_or_interval_is_truncated_at_any_width(width: int) -> None:
    report = _report()
    text = _render(methods_table(report, width=width), width)  # type: ignore[arg-type]
    for method in report.methods:  # type: ignore[attr-defined]
        text += _render(details(method, width=width), width)
    assert "…" not in text
    for line in text.splitlines():
        assert len(line.rstrip()) <= width, line
    assert re.search(r"\b0\.500\b", text)  # the half-right method's RCA-S, in full


def test_notes_name_the_method_its_parse_issues_and_warnings() -> None:
    report = _report()
    text = "".join(_render(notes(m), 200) for m in report.methods)  # type: ignore[attr-defined]
    assert "half: parse issues: malformed_json 1" in text
    assert "warning: half: missing_ids" in text and "warning: half: unknown_ids" in text
    assert "good:" not in text
