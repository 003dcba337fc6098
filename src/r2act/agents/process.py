"""Process figures of a run, shown by ``r2act evaluate`` beside the metrics.

When a predictions file has trajectories next to it (``<stem>.trajectories/``, as
``r2act agent run`` writes them), evaluation also reports how the answers were reached:
model calls and tool calls per case, tool calls by tool, tokens, cost and cost per valid
plan (cost divided by the number of cases whose plan is valid).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from r2act.agents.rca import KS, Ranked
from r2act.agents.trajectory import read_trajectories, trajectory_dir
from r2act.evaluation import EvaluationReport


def process_figures(predictions: Path, valid_plans: int | None = None) -> dict[str, Any] | None:
    """Figures from the trajectories beside ``predictions``; None when there are none."""
    directory = trajectory_dir(predictions)
    if not directory.is_dir():
        return None
    finals = [t.final_metrics for t in read_trajectories(directory) if t.final_metrics]
    if not finals:
        return None
    n = len(finals)
    tools: Counter[str] = Counter()
    for f in finals:
        tools.update(f.extra.get("tool_calls", {}))
    calls = sum(int(f.extra.get("model_calls", 0)) for f in finals)
    tokens = sum((f.total_prompt_tokens or 0) + (f.total_completion_tokens or 0) for f in finals)
    costs = [f.total_cost_usd for f in finals if f.total_cost_usd is not None]
    cost = round(sum(costs), 8) if costs else None
    return {
        "cases": n,
        "model_calls_per_case": round(calls / n, 3),
        "tool_calls_per_case": round(sum(tools.values()) / n, 3),
        "tool_calls": dict(sorted(tools.items())),
        "tokens": tokens,
        "tokens_per_case": round(tokens / n, 1),
        "cost_usd": cost,
        "cost_per_valid_plan": (
            round(cost / valid_plans, 8) if cost is not None and valid_plans else None
        ),
    }


def process_table(report: EvaluationReport, predictions: list[Path]) -> Table | None:
    """A table of process figures for the files that have trajectories; None if none has."""
    table = Table(title="Process (from trajectories)", title_justify="left")
    for column in ("Method", "Cases", "Calls/case", "Tools/case", "Tokens/case", "Cost $",
                   "$/valid plan", "Tool calls"):  # fmt: skip
        table.add_column(column)
    rows = 0
    for method, path in zip(report.methods, predictions, strict=True):
        valid = method.metrics.get("valid")
        count = None if valid is None or valid.value is None else round(valid.value * valid.n)
        figures = process_figures(path, count)
        if figures is None:
            continue
        rows += 1
        cost, per_valid = figures["cost_usd"], figures["cost_per_valid_plan"]
        table.add_row(
            method.name,
            str(figures["cases"]),
            str(figures["model_calls_per_case"]),
            str(figures["tool_calls_per_case"]),
            str(figures["tokens_per_case"]),
            "-" if cost is None else f"{cost:.4f}",
            "-" if per_valid is None else f"{per_valid:.4f}",
            ", ".join(f"{k} {v}" for k, v in figures["tool_calls"].items()) or "-",
        )
    return table if rows else None


def ranked_table(ranked: Sequence[Ranked]) -> Table:
    """AC@k of ranked RCA answers, at service level and (``/type``) for service + fault type."""
    table = Table(
        title="Ranked RCA answers (AC@k over all cases; /type: service and fault type)",
        title_justify="left",
    )
    for column in ("File", "Ranked", *(f"AC@{k}" for k in KS), *(f"AC@{k}/type" for k in KS)):
        table.add_column(column, no_wrap=True)
    for r in ranked:
        table.add_row(
            Path(r.source).name,
            str(r.ranked_cases),
            *(f"{r.service[k]:.3f}" for k in KS),
            *(f"{r.pair[k]:.3f}" for k in KS),
        )
    return table


def print_extras(
    console: Console,
    report: EvaluationReport,
    predictions: list[Path],
    ranked: Sequence[Ranked] | None = None,
) -> None:
    """What ``r2act evaluate`` prints after its tables: AC@k (``--mapper``) and process."""
    if ranked:
        console.print(ranked_table(ranked))
    table = process_table(report, predictions)
    if table is not None:
        console.print(table)
