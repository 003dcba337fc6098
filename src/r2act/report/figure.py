"""The paper's Fig. 2 for the leaderboard: the geometry of an inline SVG (drawn by a template).

Every decision (zoomed axes, full-range inset, label placement, the labelled diagonal, the
colour-blind-safe palette and markers) comes from :mod:`r2act.evaluation.figure`, the same
module ``evaluate --plot`` draws from; this module only maps numbers to SVG pixels. The
template escapes every name, so a method called ``<script>`` is drawn as those characters.
"""

from __future__ import annotations

from typing import Any

from r2act.evaluation import figure as fig
from r2act.evaluation.plot import points_of
from r2act.evaluation.report import EvaluationReport

WIDTH, HEIGHT = 720, 520
LEFT, RIGHT, TOP, BOTTOM = 64, 20, 36, 52
INSET = 120
FONT_PX = 12
CHAR_PX = 7.0


def scatter_svg(report: EvaluationReport) -> dict[str, Any]:
    """Everything the ``figure.svg`` template draws, in pixels."""
    points = points_of(report)
    (x0, x1), (y0, y1) = ranges = fig.axis_ranges(points)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return round(LEFT + (x - x0) / (x1 - x0) * plot_w, 2)

    def py(y: float) -> float:
        return round(TOP + (y1 - y) / (y1 - y0) * plot_h, 2)

    anchors = [(px(p.x) - LEFT, py(p.y) - TOP) for p in points]
    sizes = [(len(p.name[:40]) * CHAR_PX + 6, FONT_PX + 4) for p in points]
    spots = fig.place_labels(anchors, sizes, (plot_w, plot_h))
    drawn = []
    for index, (point, (left, top, far)) in enumerate(zip(points, spots, strict=True)):
        x, y = px(point.x), py(point.y)
        label_x, label_y = LEFT + left + 3, TOP + top + FONT_PX
        drawn.append(
            {
                "name": point.name[:40],
                "colour": fig.colour(index),
                "marker": fig.marker(index),
                "x": x,
                "y": y,
                "xerr": None
                if point.x_low is None or point.x_high is None
                else (px(point.x_low), px(point.x_high)),
                "yerr": None
                if point.y_low is None or point.y_high is None
                else (py(point.y_low), py(point.y_high)),
                "label_x": round(label_x, 2),
                "label_y": round(label_y, 2),
                "leader": far,
                "leader_to": (
                    round(LEFT + left + (sizes[index][0] / 2), 2),
                    round(TOP + top + sizes[index][1] / 2, 2),
                ),
                "title": f"{point.name}: RCA-S {point.x:.3f}, Valid {point.y:.3f}",
            }
        )
    low, high = max(x0, y0), min(x1, y1)
    diagonal = None
    if high > low:
        at = low + 0.75 * (high - low)
        diagonal = {
            "x1": px(low),
            "y1": py(low),
            "x2": px(high),
            "y2": py(high),
            "label_x": px(at),
            "label_y": py(at),
        }
    inset = None
    if points and fig.is_zoomed(ranges):
        cx = sum(p.x for p in points) / len(points)
        cy = sum(p.y for p in points) / len(points)
        left_side = cx > (x0 + x1) / 2
        top_side = cy < (y0 + y1) / 2
        ix = LEFT + 8 if left_side else WIDTH - RIGHT - INSET - 8
        iy = TOP + 8 if top_side else HEIGHT - BOTTOM - INSET - 8

        def ipx(x: float) -> float:
            return round(ix + x * INSET, 2)

        def ipy(y: float) -> float:
            return round(iy + (1 - y) * INSET, 2)

        inset = {
            "x": ix,
            "y": iy,
            "size": INSET,
            "box": (
                ipx(max(x0, 0)),
                ipy(min(y1, 1)),
                ipx(min(x1, 1)) - ipx(max(x0, 0)),
                ipy(max(y0, 0)) - ipy(min(y1, 1)),
            ),
            "points": [
                {"x": ipx(p.x), "y": ipy(p.y), "colour": fig.colour(i)}
                for i, p in enumerate(points)
            ],
        }
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "top": TOP,
        "plot_w": plot_w,
        "plot_h": plot_h,
        "xticks": [{"text": _tick(t), "p": px(t)} for t in fig.ticks(x0, x1) if x0 <= t <= x1],
        "yticks": [{"text": _tick(t), "p": py(t)} for t in fig.ticks(y0, y1) if y0 <= t <= y1],
        "points": drawn,
        "diagonal": diagonal,
        "diagonal_label": fig.DIAGONAL_LABEL,
        "diagonal_note": fig.diagonal_note(ranges),
        "inset": inset,
        "incidents": report.incidents,
        "missing": [m.name for m in report.methods if m.name not in {p.name for p in points}],
    }


def _tick(value: float) -> str:
    """A tick label: two decimals, and never '-0.00'."""
    return f"{abs(value) if abs(value) < 5e-3 else value:.2f}"
