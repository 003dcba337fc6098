"""The evaluation report: a schema-versioned pydantic tree, and its Markdown rendering.

The JSON form is the durable artefact (every number with its interval and n, the parse
issues with line numbers, the warnings); the terminal and Markdown tables are views of it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from r2act.evaluation.intervals import SMALL_N
from r2act.evaluation.metrics import COVERAGE, LABELS, METRICS, Estimate, MetricDef

REPORT_SCHEMA_VERSION = "1.1"
"""Version of the report format; bumped on any change (1.1: ``interval`` on every estimate,
score intervals below SMALL_N incidents, ``small_n`` and a nullable ``ci_excludes_zero`` in
comparisons)."""

SMALL_MARK = "†"
"""Marks an interval that is a score interval (fewer than SMALL_N incidents), not a bootstrap."""

MAX_LISTED_ISSUES = 200
"""Parse issues listed one by one per file; the rest are only counted."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class IssueEntry(_Model):
    """One parse issue of a predictions file."""

    line: int = Field(description="1-based line number; 0 for the whole file.")
    kind: str = Field(description="Issue kind (see r2act.evaluation.predictions.IssueKind).")
    message: str = Field(description="What is wrong, with untrusted text escaped.")


class ParseSummary(_Model):
    """How the predictions file read."""

    lines: int = Field(description="Lines in the file, blank ones included.")
    predictions: int = Field(description="Attributable predictions (first line per id).")
    issues_by_kind: dict[str, int] = Field(description="Issue counts per kind.")
    issues: list[IssueEntry] = Field(description=f"The first {MAX_LISTED_ISSUES} issues.")


class WarningEntry(_Model):
    """An integrity warning."""

    code: str = Field(description="Machine-readable code, e.g. 'constant_predictions'.")
    message: str = Field(description="Human-readable explanation.")


class TaxonomySummary(_Model):
    """Invalid plans by error category and wrong targets by call-graph placement."""

    invalid: int = Field(description="Incidents whose plan is not valid (missing ones included).")
    categories: dict[str, int] = Field(description="Count per category, precedence order.")
    details: dict[str, int] = Field(description="Count per finer reason.")
    placements: dict[str, int] = Field(
        description=(
            "Invalid plans whose target is not a valid one, per call-graph placement "
            "(orthogonal to the category)."
        )
    )


class MethodReport(_Model):
    """Everything measured for one predictions file."""

    name: str = Field(description="Method name (the file's 'method' field or its stem).")
    source: str = Field(description="Path of the predictions file.")
    metrics: dict[str, Estimate] = Field(description="Every metric over the population.")
    by_fault_type: dict[str, dict[str, Estimate]] = Field(description="Metrics per fault type.")
    by_service: dict[str, dict[str, Estimate]] = Field(
        description="Metrics per root-cause service."
    )
    by_system: dict[str, dict[str, Estimate]] | None = Field(
        default=None,
        description=(
            "Metrics per system under test; only when the dataset holds several systems "
            "(then results are shown per system, never only pooled). Absent otherwise."
        ),
    )
    taxonomy: TaxonomySummary = Field(description="Error taxonomy of invalid plans.")
    parse: ParseSummary = Field(description="Parse statistics and issues.")
    warnings: list[WarningEntry] = Field(description="Integrity warnings for this file.")

    @model_serializer(mode="wrap")
    def _without_single_system(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Leave ``by_system`` out of a one-system report (it would repeat the pool)."""
        data = handler(self)
        if isinstance(data, dict) and data.get("by_system") is None:
            data.pop("by_system", None)
        return data

    def breakdowns(self) -> list[tuple[str, dict[str, dict[str, Estimate]]]]:
        """(stratification, metrics per stratum) for every breakdown the report holds."""
        out = [("fault type", self.by_fault_type), ("service", self.by_service)]
        return out + ([("system", self.by_system)] if self.by_system is not None else [])


class EvaluationReport(_Model):
    """The result of ``r2act evaluate``."""

    schema_version: str = Field(default=REPORT_SCHEMA_VERSION, description="Report format.")
    dataset: str = Field(description="Dataset the predictions were scored against.")
    fold: int | None = Field(description="Fold evaluated, or None for the whole dataset.")
    incidents: int = Field(description="Incidents in the population: the denominator.")
    seed: int = Field(description="Bootstrap seed.")
    replicates: int = Field(description="Bootstrap replicates B.")
    methods: list[MethodReport] = Field(description="One entry per predictions file.")
    warnings: list[WarningEntry] = Field(description="Warnings across files.")


def fmt(estimate: Estimate | None, *, ci: bool = True) -> str:
    """'0.483 [0.427, 0.540]' ('†' after a score interval) or '—' when undefined."""
    if estimate is None or estimate.value is None:
        return "—"
    text = f"{estimate.value:.3f}"
    if ci and estimate.ci_low is not None and estimate.ci_high is not None:
        text += f" [{estimate.ci_low:.3f}, {estimate.ci_high:.3f}]"
        if estimate.interval != "bootstrap":
            text += SMALL_MARK
    return text


def glossary(metrics: tuple[MetricDef, ...] = (*METRICS, COVERAGE)) -> list[str]:
    """The metric glossary as Markdown lines: one entry per metric, then the conventions."""
    lines = [
        f"- **{m.label}**{'' if m.name == m.label else f' ({m.name})'}: {m.definition}"
        for m in metrics
    ]
    return [*lines, "", *CONVENTIONS]


CONVENTIONS = [
    "Every rate is over all incidents evaluated (the dataset, or the fold): an incident "
    "without a usable prediction scores 0 and counts as a no-op, so a method cannot gain "
    "by skipping hard incidents.",
    "",
    "Intervals are 95% percentile-bootstrap intervals over incidents (B replicates, fixed "
    f"seed). An estimate over fewer than {SMALL_N} incidents, such as a small stratum, gets "
    f"a score interval instead, marked {SMALL_MARK}: Wilson's for a rate, Newcombe's paired "
    "interval for a difference in `compare`, where such strata also get no "
    "'CI excludes 0' claim.",
]
"""How every number of a report is computed; part of the glossary."""


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(report: EvaluationReport) -> str:
    """The report as Markdown: the method table, breakdowns, taxonomy and warnings."""
    scope = f"fold {report.fold} of " if report.fold is not None else ""
    dataset = _md_escape(report.dataset or "records")
    out = [
        "# r2act evaluation",
        "",
        f"{scope}`{dataset}`: {report.incidents} incidents (the denominator of every rate, "
        "missing predictions score 0). 95% percentile-bootstrap intervals, "
        f"B = {report.replicates}, seed {report.seed}.",
        "",
    ]
    keys = [m.key for m in METRICS]
    out += _table(
        ["Method", "Coverage", *[LABELS[k] for k in keys]],
        [
            [_md_escape(m.name), fmt(m.metrics["covered"], ci=False)]
            + [fmt(m.metrics[k]) for k in keys]
            for m in report.methods
        ],
    )
    for method in report.methods:
        out += ["", f"## {_md_escape(method.name)}", "", f"Source: `{_md_escape(method.source)}`"]
        for title, strata in method.breakdowns():
            out += ["", f"### By {title}", ""]
            out += _table(
                [title.capitalize(), "n", *[LABELS[k] for k in ("rca_s", "rca_t", "valid", "vc")]],
                [
                    [name, str(s["rca_s"].n)]
                    + [fmt(s[k]) for k in ("rca_s", "rca_t", "valid", "vc")]
                    for name, s in strata.items()
                ],
            )
        tax = method.taxonomy
        out += ["", f"### Error taxonomy ({tax.invalid} invalid plans)", ""]
        out += _table(["Category", "Count"], [[k, str(v)] for k, v in tax.categories.items()])
        if tax.placements:
            out += ["", "Off-target plans by call-graph placement (any category):", ""]
            out += _table(["Placement", "Count"], [[k, str(v)] for k, v in tax.placements.items()])
        if method.parse.issues_by_kind:
            kinds = ", ".join(f"{k}: {v}" for k, v in sorted(method.parse.issues_by_kind.items()))
            out += ["", f"Parse issues ({method.parse.lines} lines): {kinds}"]
        for warning in method.warnings:
            out.append(f"- **{warning.code}**: {_md_escape(warning.message)}")
    if report.warnings:
        out += ["", "## Warnings across files", ""]
        out += [f"- **{w.code}**: {_md_escape(w.message)}" for w in report.warnings]
    out += ["", "## Metric glossary", "", *glossary()]
    return "\n".join(out) + "\n"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines
