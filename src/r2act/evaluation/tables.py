"""Terminal views of reports as rich tables. Untrusted text is passed as plain ``Text``,
never as markup, so a method name like ``[red]`` is shown, not interpreted."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from r2act.evaluation.compare import Comparison, signed
from r2act.evaluation.intervals import SMALL_N
from r2act.evaluation.metrics import LABELS, Estimate
from r2act.evaluation.report import SMALL_MARK, EvaluationReport, MethodReport

SMALL_NOTE = f"{SMALL_MARK} Wilson score interval: fewer than {SMALL_N} incidents"


def _cell(estimate: Estimate, ci: bool = True) -> Text:
    """Value on one line, a compact interval under it (full precision is in JSON/Markdown)."""
    if estimate.value is None:
        return Text("—")
    if not ci or estimate.ci_low is None or estimate.ci_high is None:
        return Text(f"{estimate.value:.3f}")
    mark = SMALL_MARK if estimate.interval != "bootstrap" else ""
    return Text(
        f"{estimate.value:.3f}\n[{_short(estimate.ci_low)},{_short(estimate.ci_high)}]{mark}"
    )


def _any_small(estimates: list[Estimate]) -> bool:
    return any(e.interval != "bootstrap" and e.ci_low is not None for e in estimates)


def _short(bound: float) -> str:
    return f"{bound:.2f}".replace("0.", ".", 1) if 0 <= bound < 1 else f"{bound:.2f}"


MAIN_COLUMNS = ("rca_s", "rca_t", "action_hit", "target_hit", "exact", "valid")
SIDE_COLUMNS = ("covered", "no_op", "correct_rca", "vc", "ec")


def methods_table(report: EvaluationReport, width: int = 200) -> RenderableType:
    """A row per method: diagnosis and plan metrics, then coverage, no-ops and VC/EC.

    Split in two so each fits a terminal with its interval under every value; when even
    that does not fit in ``width`` columns the intervals are dropped (with a note) rather
    than truncated into something that looks like a different number, and when the values
    alone do not fit either, the columns are spread over more tables.
    """
    scope = f", fold {report.fold}" if report.fold is not None else ""
    caption = Text(
        f"{report.dataset or 'records'}{scope}: {report.incidents} incidents; 95% percentile "
        f"bootstrap CI (B={report.replicates}, seed {report.seed}); missing predictions score 0"
    )
    name_width = min(max([12, *(len(m.name) for m in report.methods)]), 24)
    ci = all(_table_width(name_width, keys, ci=True) <= width for keys in _GROUPS)
    groups: list[tuple[str, ...]] = list(_GROUPS)
    if ci and _any_small([e for m in report.methods for e in m.metrics.values()]):
        caption.append(f"\n{SMALL_NOTE}")
    if not ci:
        caption.append("\n(terminal too narrow for the intervals: see --json or --markdown)")
        groups = [part for keys in _GROUPS for part in _fitting(name_width, keys, width)]
    return Group(caption, *[_metric_table(report, keys, name_width, ci=ci) for keys in groups])


def system_tables(report: EvaluationReport, width: int = 200) -> list[RenderableType]:
    """The method table once per system, every metric with its interval (none for a
    one-system report): a dataset of several systems is never shown only pooled.

    Each system's numbers are its records' alone (``MethodReport.by_system``: the same
    scoring on that subset), so they equal an evaluation of that system's records by itself
    up to the bootstrap draws (the intervals' resampling is seeded per stratum).
    """
    systems = sorted({s for m in report.methods for s in (m.by_system or {})})
    out: list[RenderableType] = []
    for system in systems:
        methods = [
            m.model_copy(update={"metrics": m.by_system[system]})
            for m in report.methods
            if m.by_system and system in m.by_system
        ]
        n = methods[0].metrics["rca_s"].n
        label = f"{report.dataset or 'records'} [system {system}]"
        view = report.model_copy(update={"methods": methods, "incidents": n, "dataset": label})
        out.append(methods_table(view, width=width))
    return out


_GROUPS = (MAIN_COLUMNS, SIDE_COLUMNS)
_PADDING = 3  # a space each side of a cell and the column gap rich adds


def _column_width(key: str, ci: bool) -> int:
    return max(len(LABELS[key]), 11 if ci else 5)


def _table_width(name_width: int, keys: tuple[str, ...], *, ci: bool) -> int:
    return name_width + sum(_column_width(k, ci) for k in keys) + _PADDING * (len(keys) + 1)


def _fitting(name_width: int, keys: tuple[str, ...], width: int) -> list[tuple[str, ...]]:
    """``keys`` in order, cut into runs whose table (without intervals) fits ``width``."""
    parts: list[tuple[str, ...]] = []
    for key in keys:
        if parts and _table_width(name_width, (*parts[-1], key), ci=False) <= width:
            parts[-1] = (*parts[-1], key)
        else:
            parts.append((key,))
    return parts


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


_STRATUM_KEYS = ("rca_s", "rca_t", "valid", "vc")


def details(method: MethodReport, width: int = 200) -> RenderableType:
    """Breakdowns, taxonomy, parse issues and warnings of one method.

    The per-stratum intervals are dropped when they would not fit in ``width`` columns, so
    a narrow terminal never shows a value or a bound cut short.
    """
    parts: list[RenderableType] = []
    for title, strata in ((t.capitalize(), b) for t, b in method.breakdowns()):
        name_width = max([len(title), *(len(name) for name in strata)])
        count_width = max([1, *(len(str(values["rca_s"].n)) for values in strata.values())])
        ci = _strata_width(name_width, count_width, ci=True) <= width
        table = Table(title=Text(f"{method.name}: by {title.lower()}"), header_style="bold")
        table.add_column(title, overflow="fold", min_width=min(name_width, 12))
        table.add_column("n", justify="right", no_wrap=True, min_width=count_width)
        for key in _STRATUM_KEYS:
            table.add_column(LABELS[key], justify="right", no_wrap=True, min_width=11 if ci else 5)
        for name, values in strata.items():
            table.add_row(
                Text(name),
                str(values["rca_s"].n),
                *[_cell(values[k], ci) for k in _STRATUM_KEYS],
            )
        if ci and _any_small([v[k] for v in strata.values() for k in _STRATUM_KEYS]):
            table.caption = SMALL_NOTE
        parts.append(table)
    tax = method.taxonomy
    line = ", ".join(f"{k} {v}" for k, v in tax.categories.items())
    parts.append(Text(f"Invalid plans: {tax.invalid} ({line})"))
    if tax.placements:
        parts.append(
            Text(
                "Off-target plans by call-graph placement (any category): "
                + ", ".join(f"{k} {v}" for k, v in tax.placements.items())
            )
        )
    parts.append(notes(method))
    return Group(*parts)


def _strata_width(name_width: int, count_width: int, *, ci: bool) -> int:
    """Width of a per-stratum table: rich's default box adds 3 columns per cell and 1."""
    values = len(_STRATUM_KEYS) * (11 if ci else 5)
    return name_width + count_width + values + 3 * (2 + len(_STRATUM_KEYS)) + 1


def notes(method: MethodReport) -> RenderableType:
    """Parse issues and warnings of one method: shown with or without the breakdowns."""
    parts: list[RenderableType] = []
    if method.parse.issues_by_kind:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(method.parse.issues_by_kind.items()))
        parts.append(Text(f"{method.name}: parse issues: {kinds}", style="yellow"))
        for issue in method.parse.issues[:5]:
            parts.append(
                Text(f"  line {issue.line}: {issue.kind}: {issue.message}", style="yellow")
            )
    for warning in method.warnings:
        parts.append(
            Text(f"warning: {method.name}: {warning.code}: {warning.message}", style="yellow")
        )
    return Group(*parts)


def comparison_table(comparison: Comparison) -> RenderableType:
    """Pooled difference, won/tied/lost, worst stratum, margin and spread per metric."""
    table = Table(
        title=Text(
            f"{comparison.a.name} − {comparison.b.name} by {comparison.by} "
            f"({comparison.incidents} incidents, 95% CI, B={comparison.replicates}; "
            "pooled = unweighted mean over strata)"
        ),
        header_style="bold",
    )
    for column in ("Metric", "Pooled Δ", "W/T/L", "Worst stratum", "Margin", "Spread"):
        table.add_column(  # fold, not "…": a cut bound reads as another number
            column,
            justify="left" if column in {"Metric", "Worst stratum"} else "right",
            overflow="fold",
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
    if any(s.small_n for m in comparison.metrics for s in m.strata):
        lines.append(
            Text(
                f"{SMALL_MARK} Newcombe paired score interval: a stratum of fewer than "
                f"{SMALL_N} incidents (its CI is never claimed to exclude 0)"
            )
        )
    warnings = [
        Text(f"warning: {w.code}: {w.message}", style="yellow") for w in comparison.warnings
    ]
    return Group(table, *lines, *warnings)
