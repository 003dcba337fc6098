"""The diagnosis-to-action scatter (the paper's Fig. 2): RCA-S against Recovery Validity.

One point per method with its 95% intervals as error bars, named next to the point; the
labelled diagonal marks where validity would equal diagnostic accuracy, so the vertical
distance below it is the gap the benchmark measures. The axes are zoomed to the data with
the full [0, 1] square as an inset, and colours and markers are colour-blind safe: the
decisions live in :mod:`r2act.evaluation.figure`, shared with ``r2act report``'s SVG.
Rendered with matplotlib's Agg backend: no display is needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from r2act.evaluation import figure as fig
from r2act.evaluation.predictions import safe_text
from r2act.evaluation.report import EvaluationReport

_SIZE = (7.0, 5.6)
_DPI = 120
_FONT = 8.0


def points_of(report: EvaluationReport) -> list[fig.Point]:
    """The plotted methods: those with both RCA-S and Valid defined."""
    out = []
    for method in report.methods:
        x, y = method.metrics["rca_s"], method.metrics["valid"]
        if x.value is None or y.value is None:
            continue
        out.append(
            fig.Point(method.name, x.value, y.value, x.ci_low, x.ci_high, y.ci_low, y.ci_high)
        )
    return out


def scatter(report: EvaluationReport, path: Path) -> Path:
    """Write the scatter of every method in ``report`` to ``path``; return ``path``."""
    from matplotlib import pyplot as plt

    figure = draw(report)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path)
    finally:
        plt.close(figure)
    return path


def draw(report: EvaluationReport) -> Any:
    """The matplotlib figure of the scatter (the caller closes it)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    points = points_of(report)
    ranges = fig.axis_ranges(points)
    figure, axes = plt.subplots(figsize=_SIZE, dpi=_DPI)
    try:
        _diagonal(axes, ranges)
        for index, point in enumerate(points):
            axes.errorbar(
                point.x,
                point.y,
                xerr=_err(point.x, point.x_low, point.x_high),
                yerr=_err(point.y, point.y_low, point.y_high),
                fmt=fig.marker(index),
                color=fig.colour(index),
                markersize=6,
                capsize=3,
                elinewidth=1,
                zorder=3,
            )
        axes.set_xlim(*ranges[0])
        axes.set_ylim(*ranges[1])
        axes.set_xlabel("RCA-Service accuracy (RCA-S)")
        axes.set_ylabel("Recovery Validity")
        axes.set_title(
            f"Diagnosis vs recovery validity ({report.incidents} incidents, 95% CI bars)",
            fontsize=10,
        )
        axes.grid(alpha=0.3)
        figure.tight_layout()
        _labels(figure, axes, points)
        if points and fig.is_zoomed(ranges):
            _inset(axes, points, ranges)
    except BaseException:
        plt.close(figure)
        raise
    return figure


def _diagonal(axes: Any, ranges: tuple[tuple[float, float], tuple[float, float]]) -> None:
    (x0, x1), (y0, y1) = ranges
    low, high = max(x0, y0), min(x1, y1)
    axes.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, zorder=1)
    if high > low:  # the diagonal crosses the zoomed box: name it where it does
        at = low + 0.8 * (high - low)
        axes.annotate(
            fig.DIAGONAL_LABEL,
            (at, at),
            xytext=(4, -10),
            textcoords="offset points",
            fontsize=_FONT,
            color="dimgrey",
            rotation_mode="anchor",
        )
    else:
        axes.text(
            0.99,
            0.01,
            fig.diagonal_note(ranges) or fig.DIAGONAL_LABEL,
            transform=axes.transAxes,
            ha="right",
            fontsize=_FONT,
            color="dimgrey",
        )


def _labels(figure: Any, axes: Any, points: list[fig.Point]) -> None:
    """Name every point next to it (positions from ``figure.place_labels``, in pixels)."""
    if not points:
        return
    from matplotlib import patheffects

    halo = [patheffects.withStroke(linewidth=3, foreground="white")]
    box = axes.get_window_extent()
    height = box.height
    to_px = axes.transData.transform
    anchors = []
    for p in points:
        px, py = to_px((p.x, p.y))
        anchors.append((px - box.x0, height - (py - box.y0)))  # y downwards
    names = [safe_text(p.name, 40).replace("$", r"\$") for p in points]  # no mathtext
    char_px = _FONT * _DPI / 72 * 0.6
    line_px = _FONT * _DPI / 72 * 1.4
    sizes = [(len(n) * char_px + 4, line_px) for n in names]
    spots = fig.place_labels(anchors, sizes, (box.width, height))
    for index, (name, (left, top, far)) in enumerate(zip(names, spots, strict=True)):
        x_px, y_px = box.x0 + left + 2, box.y0 + height - top - line_px * 0.75
        data = axes.transData.inverted().transform((x_px, y_px))
        axes.annotate(
            name,
            xy=(points[index].x, points[index].y),
            xytext=(float(data[0]), float(data[1])),
            textcoords="data",
            fontsize=_FONT,
            color=fig.colour(index),
            fontweight="bold",
            zorder=4,
            path_effects=halo,
            arrowprops=(
                {"arrowstyle": "-", "color": fig.colour(index), "linewidth": 0.7} if far else None
            ),
            annotation_clip=False,
        )


def _inset(
    axes: Any, points: list[fig.Point], ranges: tuple[tuple[float, float], tuple[float, float]]
) -> None:
    """The full [0, 1] square, every point on it and the zoomed box, in a corner."""
    from matplotlib.patches import Rectangle

    (x0, x1), (y0, y1) = ranges
    # the corner farthest from the points' centre, so the inset covers as little as possible
    cx = sum(p.x for p in points) / len(points)
    cy = sum(p.y for p in points) / len(points)
    left = 0.03 if cx > (x0 + x1) / 2 else 0.69
    bottom = 0.69 if cy < (y0 + y1) / 2 else 0.03
    inset = axes.inset_axes((left, bottom, 0.28, 0.28))
    inset.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=0.7)
    for index, point in enumerate(points):
        inset.plot(point.x, point.y, fig.marker(index), color=fig.colour(index), markersize=3)
    inset.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, linewidth=0.8))
    inset.set_xlim(0, 1)
    inset.set_ylim(0, 1)
    inset.set_xticks([0, 1])
    inset.set_yticks([0, 1])
    inset.tick_params(labelsize=6, length=2)
    inset.set_title("full range", fontsize=6, pad=2)
    inset.set_facecolor("white")


def _err(value: float, low: float | None, high: float | None) -> list[list[float]] | None:
    if low is None or high is None:
        return None
    return [[max(value - low, 0.0)], [max(high - value, 0.0)]]
