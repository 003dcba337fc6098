"""Paper-ready views of a report or a comparison: tidy CSV and booktabs LaTeX tables.

The CSV is long ("tidy"): one row per number, with its interval, n and how the interval
was made, so a spreadsheet or ``pandas.read_csv`` can pivot it any way without parsing
"0.483 [0.427, 0.540]" strings. The LaTeX is a set of ``table`` floats rendered by pandas'
Styler with booktabs rules (``\\toprule``, ``\\midrule``, ``\\bottomrule``; the document needs
``\\usepackage{booktabs}``), laid out like the terminal tables. Text that comes from
prediction files or the dataset (method names, strata) is escaped for LaTeX by the Styler,
and a CSV text cell that a spreadsheet would run as a formula is prefixed with an apostrophe.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from r2act.evaluation.compare import Comparison, StratumDifference
from r2act.evaluation.intervals import SMALL_N
from r2act.evaluation.metrics import COVERAGE, LABELS, METRICS, Estimate
from r2act.evaluation.report import EvaluationReport

if TYPE_CHECKING:
    import pandas as pd

MAIN_KEYS = ("rca_s", "rca_t", "action_hit", "target_hit", "exact", "valid")
SIDE_KEYS = ("covered", "no_op", "correct_rca", "vc", "ec")
STRATUM_KEYS = ("rca_s", "rca_t", "valid", "vc")

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _text(value: str) -> str:
    """A CSV text cell a spreadsheet will show, not evaluate (OWASP's CSV-injection rule)."""
    return "'" + value if value.startswith(_FORMULA_START) else value


def _estimate_row(estimate: Estimate) -> dict[str, Any]:
    return {
        "value": estimate.value,
        "ci_low": estimate.ci_low,
        "ci_high": estimate.ci_high,
        "interval": estimate.interval if estimate.ci_low is not None else "",
        "n": estimate.n,
    }


def report_rows(report: EvaluationReport) -> list[dict[str, Any]]:
    """One row per method, breakdown, stratum and metric."""
    rows = []
    keys = [m.key for m in (*METRICS, COVERAGE)]
    for method in report.methods:
        scopes: list[tuple[str, str, dict[str, Estimate]]] = [("all", "", method.metrics)]
        scopes += [("fault_type", k, v) for k, v in method.by_fault_type.items()]
        scopes += [("service", k, v) for k, v in method.by_service.items()]
        scopes += [("system", k, v) for k, v in (method.by_system or {}).items()]
        for breakdown, stratum, metrics in scopes:
            for key in keys:
                if key not in metrics:
                    continue
                rows.append(
                    {
                        "method": _text(method.name),
                        "breakdown": breakdown,
                        "stratum": _text(stratum),
                        "metric": key,
                        "label": LABELS[key],
                        **_estimate_row(metrics[key]),
                        "undefined_replicates": metrics[key].undefined_replicates,
                    }
                )
    return rows


def comparison_rows(comparison: Comparison) -> list[dict[str, Any]]:
    """One row per metric for the pooled difference, then one per metric and stratum."""
    rows = []
    for m in comparison.metrics:
        common = {
            "a": _text(comparison.a.name),
            "b": _text(comparison.b.name),
            "by": comparison.by,
            "metric": m.metric,
            "label": m.label,
        }
        rows.append(
            {
                **common,
                "stratum": "",
                **_difference_row(m.pooled),
                "outcome": "",
                "ci_excludes_zero": "",
                "won": m.won,
                "tied": m.tied,
                "lost": m.lost,
                "worst": _text(m.worst),
                "margin": m.margin,
                "spread": m.spread,
            }
        )
        rows += [{**common, **_stratum_row(s)} for s in m.strata]
    return rows


def _difference_row(delta: Estimate) -> dict[str, Any]:
    row = _estimate_row(delta)
    return {"delta": row.pop("value"), **row}


def _stratum_row(s: StratumDifference) -> dict[str, Any]:
    return {
        "stratum": _text(s.stratum),
        **_difference_row(s.delta),
        "outcome": s.outcome,
        "ci_excludes_zero": "" if s.ci_excludes_zero is None else s.ci_excludes_zero,
    }


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """Rows as CSV text with a header (the union of the rows' keys); None is an empty cell."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def report_csv(report: EvaluationReport) -> str:
    """The report as tidy CSV."""
    return to_csv(report_rows(report))


def comparison_csv(comparison: Comparison) -> str:
    """The comparison as tidy CSV."""
    return to_csv(comparison_rows(comparison))


# -- LaTeX ----------------------------------------------------------------------------

_DAG = r"\textsuperscript{\dag}"


def _tex(estimate: Estimate | None, *, signed: bool = False) -> str:
    """'0.483\\,{\\scriptsize[0.427, 0.540]}' (dagger after a score interval), or '--'."""
    if estimate is None or estimate.value is None:
        return "--"
    spec = "+.3f" if signed else ".3f"
    text = f"{estimate.value:{spec}}"
    if estimate.ci_low is not None and estimate.ci_high is not None:
        text += rf"\,{{\scriptsize[{estimate.ci_low:{spec}}, {estimate.ci_high:{spec}}]}}"
        if estimate.interval != "bootstrap":
            text += _DAG
    return text


def _latex_table(frame: pd.DataFrame, *, escaped: Sequence[str], caption: str, label: str) -> str:
    """One booktabs ``table`` float: ``escaped`` columns are untrusted text, escaped."""
    styler = frame.style.hide(axis="index")
    styler = styler.format(escape="latex", subset=list(escaped))
    return styler.to_latex(
        hrules=True,
        caption=caption,
        label=label,
        position_float="centering",
        column_format="l" * len(escaped) + "r" * (frame.shape[1] - len(escaped)),
    )


def _note(has_small: bool, what: str) -> str:
    return f" {_DAG} {what} (fewer than {SMALL_N} incidents)." if has_small else ""


def _comment(text: str) -> str:
    return "% " + " ".join(text.split())


def report_latex(report: EvaluationReport) -> str:
    """The method tables and each method's per-stratum tables as booktabs floats."""
    import pandas as pd

    scope = f"fold {report.fold} of " if report.fold is not None else ""
    common = (
        f"{report.incidents} incidents; 95\\% percentile-bootstrap intervals over incidents "
        f"(B = {report.replicates}, seed {report.seed}); missing predictions score 0."
    )
    parts = [
        _comment(f"r2act evaluation of {scope}{report.dataset or 'records'}."),
        _comment(r"Needs \usepackage{booktabs} in the preamble."),
    ]
    for index, (keys, title) in enumerate(
        ((MAIN_KEYS, "Diagnosis and recovery"), (SIDE_KEYS, "Coverage, no-ops, VC and EC"))
    ):
        frame = pd.DataFrame(
            [
                {"Method": m.name, **{LABELS[k]: _tex(m.metrics[k]) for k in keys}}
                for m in report.methods
            ]
        )
        small = any(m.metrics[k].interval != "bootstrap" for m in report.methods for k in keys)
        caption = f"{title}. {common}" + _note(small, "Wilson score interval")
        parts.append(
            _latex_table(frame, escaped=["Method"], caption=caption, label=f"tab:r2act-{index}")
        )
    attributes = [("Fault type", "by_fault_type"), ("Service", "by_service")]
    if any(m.by_system is not None for m in report.methods):
        attributes.append(("System", "by_system"))
    for title, attribute in attributes:
        rows, small = [], False
        for method in report.methods:
            strata: dict[str, dict[str, Estimate]] = getattr(method, attribute) or {}
            rows += [
                {
                    "Method": method.name,
                    title: name,
                    "n": str(values["rca_s"].n),
                    **{LABELS[k]: _tex(values[k]) for k in STRATUM_KEYS},
                }
                for name, values in strata.items()
            ]
            small = small or any(
                v[k].interval != "bootstrap" for v in strata.values() for k in STRATUM_KEYS
            )
        caption = f"By {title.lower()}. {common}" + _note(small, "Wilson score interval")
        label = f"tab:r2act-{attribute.replace('_', '-')}"
        parts.append(
            _latex_table(
                pd.DataFrame(rows), escaped=["Method", title], caption=caption, label=label
            )
        )
    return "\n".join(parts)


def comparison_latex(comparison: Comparison) -> str:
    """The summary per metric and the per-stratum differences as booktabs floats."""
    import pandas as pd

    by = comparison.by.replace("_", " ")
    common = (
        f"$\\Delta$ = A $-$ B over {comparison.incidents} incidents, by {by}; "
        f"95\\% percentile-bootstrap intervals within strata (B = {comparison.replicates}, seed "
        f"{comparison.seed}); pooled = unweighted mean over strata."
    )
    small = any(s.small_n for m in comparison.metrics for s in m.strata)
    note = _note(small, "Newcombe paired score interval, never claimed to exclude 0")
    summary = pd.DataFrame(
        [
            {
                "Metric": m.label,
                "Worst stratum": f"{m.worst} ({_plain(s.delta)})",
                r"Pooled $\Delta$": _tex(m.pooled, signed=True),
                "W/T/L": f"{m.won}/{m.tied}/{m.lost}",
                "Margin": f"{m.margin:.3f}",
                "Spread": "--" if m.spread is None else f"{m.spread:.3f}",
            }
            for m in comparison.metrics
            for s in m.strata
            if s.stratum == m.worst
        ]
    )
    strata = [s.stratum for s in comparison.metrics[0].strata] if comparison.metrics else []
    by_stratum = pd.DataFrame(
        [
            {
                "Stratum": name,
                "n": str(comparison.metrics[0].strata[i].delta.n),
                **{m.label: _tex(m.strata[i].delta, signed=True) for m in comparison.metrics},
            }
            for i, name in enumerate(strata)
        ]
    )
    return "\n".join(
        [
            _comment(f"r2act compare: A = {comparison.a.name}, B = {comparison.b.name}."),
            _comment(r"Needs \usepackage{booktabs} in the preamble."),
            _latex_table(
                summary,
                escaped=["Metric", "Worst stratum"],
                caption=f"Method A vs method B (named in the comment above). {common}",
                label="tab:r2act-compare",
            ),
            _latex_table(
                by_stratum,
                escaped=["Stratum"],
                caption=f"A $-$ B per stratum. {common}{note}",
                label="tab:r2act-compare-strata",
            ),
        ]
    )


def _plain(delta: Estimate) -> str:
    return "--" if delta.value is None else f"{delta.value:+.3f}"
