"""Paper outputs: small-sample intervals, CSV and LaTeX views, and the metric glossary."""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path
from statistics import NormalDist

import pytest
from evalfixtures import lines_to_file, make_record, pred

from r2act.evaluation import METRICS, compare, comparison_markdown, evaluate, to_markdown
from r2act.evaluation.intervals import SMALL_N, newcombe_paired, wilson
from r2act.evaluation.metrics import COVERAGE
from r2act.evaluation.paper import (
    comparison_csv,
    comparison_latex,
    report_csv,
    report_latex,
)
from r2act.evaluation.report import glossary

README = Path(__file__).resolve().parents[3] / "README.md"
Z = NormalDist().inv_cdf(0.975)

# cartservice and frontend strata of 6; adservice has a single incident.
RECORDS = [
    *(
        make_record(s, f, rep)
        for s in ("cartservice", "frontend")
        for f in ("pod_failure", "dns_fault")
        for rep in (1, 2, 3)
    ),
    make_record("adservice", "pod_failure"),
]
RIGHT = lines_to_file([{**pred(r), "method": "rag_&_50%#1"} for r in RECORDS], "a.jsonl")
# B names the right service only on frontend incidents.
WRONG = lines_to_file(
    [
        pred(r) if r.labels.service == "frontend" else pred(r, service="emailservice")
        for r in RECORDS
    ],
    "=HYPERLINK(1).jsonl",
)


@pytest.mark.parametrize("n", [1, 2, 4, 30])
def test_wilson_bounds_have_their_closed_forms_at_zero_and_all(n: int) -> None:
    assert wilson(0, n) == pytest.approx((0.0, Z * Z / (n + Z * Z)))
    assert wilson(n, n) == pytest.approx((n / (n + Z * Z), 1.0))


def test_wilson_is_symmetric_and_contains_the_proportion() -> None:
    for n in range(1, SMALL_N):
        for k in range(n + 1):
            low, high = wilson(k, n) or (math.nan, math.nan)
            mirror_low, mirror_high = wilson(n - k, n) or (math.nan, math.nan)
            assert (low, high) == pytest.approx((1 - mirror_high, 1 - mirror_low))
            assert low <= k / n <= high and high - low > 0.3
    assert wilson(0, 0) is None


def test_newcombe_reproduces_the_published_worked_example() -> None:
    # Altman et al., Statistics with Confidence (2000), Table 6.2: 14, 5, 0, 22 pairs;
    # difference 0.122, 95% CI 0.011 to 0.226 (Newcombe 1998, method 10).
    low, high = newcombe_paired(14, 5, 0, 22) or (math.nan, math.nan)
    assert (round(low, 3), round(high, 3)) == (0.011, 0.226)


def test_newcombe_never_collapses_on_one_pair() -> None:
    for counts in ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)):
        low, high = newcombe_paired(*counts) or (math.nan, math.nan)
        delta = counts[1] - counts[2]
        assert -1 <= low <= delta <= high <= 1 and high - low > 0.7


def test_a_stratum_of_one_incident_gets_a_wilson_interval_the_others_the_bootstrap() -> None:
    method = evaluate(RECORDS, [RIGHT], replicates=300).methods[0]
    single = method.by_service["adservice"]["rca_s"]
    assert (single.value, single.n, single.interval) == (1.0, 1, "wilson")
    assert (single.ci_low, single.ci_high) == pytest.approx(wilson(1, 1))
    assert method.by_service["cartservice"]["rca_s"].interval == "bootstrap"
    assert method.metrics["rca_s"].interval == "bootstrap"
    assert "†" in to_markdown(evaluate(RECORDS, [RIGHT], replicates=300))


def test_compare_makes_no_ci_claim_on_a_small_stratum() -> None:
    result = compare(RECORDS, RIGHT, WRONG, by="service", replicates=300)
    rca_s = next(m for m in result.metrics if m.metric == "rca_s")
    by = {s.stratum: s for s in rca_s.strata}
    # Same difference (A right, B wrong) in a stratum of 6 and in a stratum of 1.
    assert by["cartservice"].delta.value == by["adservice"].delta.value == 1.0
    assert by["cartservice"].ci_excludes_zero is True and not by["cartservice"].small_n
    assert by["adservice"].small_n and by["adservice"].ci_excludes_zero is None
    assert by["adservice"].delta.interval == "newcombe"
    assert by["adservice"].delta.ci_low is not None and by["adservice"].delta.ci_low < 0
    markdown = comparison_markdown(result)
    assert "| adservice | 1 | +1.000 [-0.122, +1.000]† | won | not assessed (n < 5) |" in markdown
    assert "| cartservice | 6 | +1.000 [+1.000, +1.000] | won | yes |" in markdown


def test_report_csv_has_one_row_per_number_matching_the_report() -> None:
    report = evaluate(RECORDS, [RIGHT, WRONG], replicates=300)
    rows = list(csv.DictReader(io.StringIO(report_csv(report))))
    keys = [m.key for m in (*METRICS, COVERAGE)]
    strata = 1 + 2 + 3  # all, two fault types, three services
    assert len(rows) == 2 * strata * len(keys)
    by_key = {(r["method"], r["breakdown"], r["stratum"], r["metric"]): r for r in rows}
    second = report.methods[1]
    row = by_key[("'=HYPERLINK(1)", "service", "adservice", "rca_s")]  # formula neutralised
    assert second.name == "=HYPERLINK(1)"
    estimate = second.by_service["adservice"]["rca_s"]
    assert (float(row["value"]), row["interval"], int(row["n"])) == (0.0, "wilson", 1)
    assert float(row["ci_high"]) == pytest.approx(estimate.ci_high)
    vc = by_key[("rag_&_50%#1", "all", "", "vc")]
    assert float(vc["ci_low"]) == pytest.approx(report.methods[0].metrics["vc"].ci_low)


def test_comparison_csv_has_a_pooled_row_and_one_per_stratum() -> None:
    result = compare(RECORDS, RIGHT, WRONG, by="service", replicates=300)
    rows = list(csv.DictReader(io.StringIO(comparison_csv(result))))
    assert len(rows) == len(result.metrics) * (1 + 3)
    pooled = next(r for r in rows if r["metric"] == "rca_s" and r["stratum"] == "")
    assert (pooled["won"], pooled["tied"], pooled["lost"]) == ("2", "1", "0")
    small = next(r for r in rows if r["metric"] == "rca_s" and r["stratum"] == "adservice")
    assert (small["interval"], small["ci_excludes_zero"]) == ("newcombe", "")
    big = next(r for r in rows if r["metric"] == "rca_s" and r["stratum"] == "cartservice")
    assert big["ci_excludes_zero"] == "True"


def _tabulars(latex: str) -> list[list[str]]:
    """Each tabular's body rows, split on unescaped '&'."""
    out = []
    for body in re.findall(r"\\midrule\n(.*?)\\bottomrule", latex, re.S):
        out.append([re.split(r"(?<!\\)&", line) for line in body.strip().splitlines()])
    return out  # type: ignore[return-value]


def test_latex_is_booktabs_with_escaped_names_and_regular_rows() -> None:
    latex = report_latex(evaluate(RECORDS, [RIGHT, WRONG], replicates=300))
    assert latex.count(r"\begin{table}") == 4
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert latex.count(rule) == 4
    assert r"rag\_\&\_50\%\#1" in latex and "rag_&" not in latex
    for columns, rows in zip(
        re.findall(r"\\begin\{tabular\}\{([lr]+)\}", latex), _tabulars(latex), strict=True
    ):
        assert rows and all(len(cells) == len(columns) for cells in rows)  # type: ignore[arg-type]
    assert r"\textsuperscript{\dag} Wilson score interval (fewer than 5 incidents)" in latex


def test_comparison_latex_marks_small_strata() -> None:
    latex = comparison_latex(compare(RECORDS, RIGHT, WRONG, by="service", replicates=300))
    assert latex.count(r"\toprule") == 2
    adservice = next(line for line in latex.splitlines() if line.startswith("adservice &"))
    assert r"+1.000\,{\scriptsize[-0.122, +1.000]}\textsuperscript{\dag}" in adservice


def test_markdown_reports_and_the_readme_carry_the_same_glossary() -> None:
    report = to_markdown(evaluate(RECORDS, [RIGHT], replicates=200))
    comparison = comparison_markdown(compare(RECORDS, RIGHT, WRONG, replicates=200))
    readme = " ".join(README.read_text().split())
    assert "## Metric glossary" in report and "## Metric glossary" in comparison
    for line in glossary():
        assert line in report
        assert " ".join(line.split()) in readme, line
    for label in ("RCA-S", "RCA-T", "Action", "Target", "Exact", "Valid", "No-op", "Pr(C)"):
        assert f"- **{label}**" in comparison
    assert "**VC** (Conditional action validity, Pr(V | C))" in report
