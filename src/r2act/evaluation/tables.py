"""Terminal views of reports as rich tables. Untrusted text is passed as plain ``Text``,
never as markup, so a method name like ``[red]`` is shown, not interpreted."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from r2act.evaluation.compare import Comparison, signed
from r2act.evaluation.metrics import LABELS, Estimate
from r2act.evaluation.report import EvaluationReport, MethodReport


def _cell(estimate: Estimate, ci: bool = True) -> Text:
    """Value on one line, a compact interval under it (full precision is in JSON/Markdown)."""
    if estimate.value is None:
        return Text("—")
    if not ci or estimate.ci_low is None or estimate.ci_high is None:
        return Text(f"{estimate.value:.3f}")
    return Text(f"{estimate.value:.3f}\n[{_short(estimate.ci_low)},{_short(estimate.ci_high)}]")


def _short(bound: float) -> str:
    return f"{bound:.2f}".replace("0.", ".", 1) if 0 <= bound < 1 else f"{bound:.2f}"


MAIN_COLUMNS = ("rca_s", "rca_t", "action_hit", "target_hit", "exact", "valid")
SIDE_COLUMNS = ("covered", "no_op", "correct_rca", "vc", "ec")


def methods_table(report: EvaluationReport, width: int = 200) -> RenderableType:
    """A row per method: diagnosis and plan metrics, then coverage, no-ops and VC/EC.

    Split in two so each fits a terminal with its interval under every value; when even
    that does not fit in ``width`` columns the intervals are dropped (with a note) rather
    than truncated into something that looks like a different number.
    """
    scope = f", fold {report.fold}" if report.fold is not None else ""
    caption = Text(
        f"{report.dataset or 'records'}{scope}: {report.incidents} incidents; 95% percentile "
        f"bootstrap CI (B={report.replicates}, seed {report.seed}); missing predictions score 0"
    )
    name_width = min(max([12, *(len(m.name) for m in report.methods)]), 24)
    ci = all(_table_width(name_width, keys, ci=True) <= width for keys in _GROUPS)
    if not ci:
        caption.append("\n(terminal too narrow for the intervals: see --json or --markdown)")
    return Group(caption, *[_metric_table(report, keys, name_width, ci=ci) for keys in _GROUPS])


_GROUPS = (MAIN_COLUMNS, SIDE_COLUMNS)
_PADDING = 3  # a space each side of a cell and the column gap rich adds


def _column_width(key: str, ci: bool) -> int:
    return max(len(LABELS[key]), 11 if ci else 5)


def _table_width(name_width: int, keys: tuple[str, ...], *, ci: bool) -> int:
    return name_width + sum(_column_width(k, ci) for k in keys) + _PADDING * (len(keys) + 1)


def _metric_table(
    report: EvaluationReport, keys: tuple[str, ...], name_width: int, *, ci: bool
) -> Table:
    table = Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("Method", overflow="fold", width=name_width)
    for key in keys:
        table.add_column(LABELS[key], justify="right", width=_column_width(key, ci), no_wrap=True)
    for method in report.methods:
        table.add_row(Text(method.name), *[_cell(method.metrics[k], ci) for k in keys])
    return table


def details(method: MethodReport) -> RenderableType:
    """Breakdowns, taxonomy, parse issues and warnings of one method."""
    parts: list[RenderableType] = []
    for title, strata in (("Fault type", method.by_fault_type), ("Service", method.by_service)):
        table = Table(title=Text(f"{method.name}: by {title.lower()}"), header_style="bold")
        for column in (title, "n", "RCA-S", "RCA-T", "Valid", "VC"):
            table.add_column(column, justify="left" if column == title else "right")
        for name, values in strata.items():
            table.add_row(
                Text(name),
                str(values["rca_s"].n),
                *[_cell(values[k]) for k in ("rca_s", "rca_t", "valid", "vc")],
            )
        parts.append(table)
    tax = method.taxonomy
    line = ", ".join(f"{k} {v}" for k, v in tax.categories.items())
    parts.append(Text(f"Invalid plans: {tax.invalid} ({line})"))
    if tax.placements:
        parts.append(
            Text("Wrong targets: " + ", ".join(f"{k} {v}" for k, v in tax.placements.items()))
        )
    if method.parse.issues_by_kind:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(method.parse.issues_by_kind.items()))
        parts.append(Text(f"Parse issues: {kinds}", style="yellow"))
        for issue in method.parse.issues[:5]:
            parts.append(
                Text(f"  line {issue.line}: {issue.kind}: {issue.message}", style="yellow")
            )
    for warning in method.warnings:
        parts.append(Text(f"warning: {warning.code}: {warning.message}", style="yellow"))
    return Group(*parts)


def comparison_table(comparison: Comparison) -> RenderableType:
    """Pooled difference, won/tied/lost, worst stratum, margin and spread per metric."""
    table = Table(
        title=Text(
            f"{comparison.a.name} − {comparison.b.name} by {comparison.by} "
            f"({comparison.incidents} incidents, 95% CI, B={comparison.replicates})"
        ),
        header_style="bold",
    )
    for column in ("Metric", "Pooled Δ", "W/T/L", "Worst stratum", "Margin", "Spread"):
        table.add_column(
            column, justify="left" if column in {"Metric", "Worst stratum"} else "right"
        )
    for m in comparison.metrics:
        worst = next(s for s in m.strata if s.stratum == m.worst)
        table.add_row(
            m.label,
            signed(m.pooled),
            f"{m.won}/{m.tied}/{m.lost} of {len(m.strata)}",
            Text(f"{m.worst} {signed(worst.delta)}"),
            f"{m.margin:.3f}",
            "—" if m.spread is None else f"{m.spread:.3f}",
        )
    lines = [Text(m.summary) for m in comparison.metrics]
    warnings = [
        Text(f"warning: {w.code}: {w.message}", style="yellow") for w in comparison.warnings
    ]
    return Group(table, *lines, *warnings)
