"""The diagnosis-to-action scatter (the paper's Fig. 2): RCA-S against Recovery Validity.

One point per method with its 95% intervals as error bars; the diagonal marks where validity
would equal diagnostic accuracy, so the vertical distance below it is the gap the benchmark
measures. Rendered with matplotlib's Agg backend: no display is needed.
"""

from __future__ import annotations

from pathlib import Path

from r2act.evaluation.predictions import safe_text
from r2act.evaluation.report import EvaluationReport


def scatter(report: EvaluationReport, path: Path) -> Path:
    """Write the PNG scatter of every method in ``report`` to ``path``; return ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 5), dpi=120)
    try:
        axes.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1)
        for method in report.methods:
            x, y = method.metrics["rca_s"], method.metrics["valid"]
            if x.value is None or y.value is None:
                continue
            xerr = _err(x.value, x.ci_low, x.ci_high)
            yerr = _err(y.value, y.ci_low, y.ci_high)
            label = safe_text(method.name, 40).replace("$", r"\$")  # no mathtext from input
            # A legend, not text next to the points: floor methods crowd the origin and
            # their annotations overlapped into one unreadable blot.
            axes.errorbar(x.value, y.value, xerr=xerr, yerr=yerr, fmt="o", capsize=3, label=label)
        axes.legend(loc="upper left", fontsize=8, title="method (95% CI bars)", title_fontsize=8)
        axes.set_xlim(-0.03, 1.05)  # room for points at 0 and 1 and their caps
        axes.set_ylim(-0.03, 1.05)
        axes.set_xlabel("RCA-Service accuracy")
        axes.set_ylabel("Recovery Validity")
        axes.set_title(f"Diagnosis vs recovery validity ({report.incidents} incidents)")
        axes.grid(alpha=0.3)
        figure.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path)
    finally:
        plt.close(figure)
    return path


def _err(value: float, low: float | None, high: float | None) -> list[list[float]] | None:
    if low is None or high is None:
        return None
    return [[max(value - low, 0.0)], [max(high - value, 0.0)]]
