"""Fig. 2 stays readable where methods crowd: zoomed axes, an inset, names that never collide.

The geometry is shared by ``evaluate --plot`` (matplotlib) and ``r2act report`` (SVG), so
both are checked on the same crowded report.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from matplotlib import pyplot as plt

from r2act.evaluation import figure as fig
from r2act.evaluation.metrics import Estimate
from r2act.evaluation.plot import draw, scatter
from r2act.evaluation.report import (
    EvaluationReport,
    MethodReport,
    ParseSummary,
    TaxonomySummary,
)
from r2act.report.figure import scatter_svg

CROWD = {  # five methods within a few points of each other, as floors and RCA methods do
    "random": (0.61, 0.40),
    "majority": (0.62, 0.41),
    "keyword": (0.63, 0.405),
    "rule": (0.64, 0.42),
    "nb": (0.625, 0.395),
}


def _estimate(value: float | None) -> Estimate:
    if value is None:
        return Estimate(value=None, ci_low=None, ci_high=None, n=0)
    return Estimate(value=value, ci_low=value - 0.03, ci_high=value + 0.03, n=302)


def _report(points: dict[str, tuple[float | None, float | None]]) -> EvaluationReport:
    methods = [
        MethodReport(
            name=name,
            source=f"{name}.jsonl",
            metrics={"rca_s": _estimate(x), "valid": _estimate(y)},
            by_fault_type={},
            by_service={},
            taxonomy=TaxonomySummary(invalid=0, categories={}, details={}, placements={}),
            parse=ParseSummary(lines=302, predictions=302, issues_by_kind={}, issues=[]),
            warnings=[],
        )
        for name, (x, y) in points.items()
    ]
    return EvaluationReport(
        dataset="d", fold=None, incidents=302, seed=0, replicates=100, methods=methods, warnings=[]
    )


def test_axes_zoom_to_every_point_and_interval() -> None:
    points = [
        fig.Point(n, x, y, x - 0.03, x + 0.03, y - 0.03, y + 0.03) for n, (x, y) in CROWD.items()
    ]
    (x0, x1), (y0, y1) = ranges = fig.axis_ranges(points)
    assert all(x0 <= p.x_low and p.x_high <= x1 for p in points if p.x_low and p.x_high)
    assert all(y0 <= p.y_low and p.y_high <= y1 for p in points if p.y_low and p.y_high)
    assert x1 - x0 < 0.3 and y1 - y0 < 0.3 and fig.is_zoomed(ranges)
    assert fig.zoomed_range([0.0, 1.0]) == (-fig.EDGE, 1 + fig.EDGE)  # 0 and 1 stay visible
    low, high = fig.zoomed_range([0.5, 0.5])
    assert high - low >= fig.MIN_SPAN


def test_labels_of_crowded_points_do_not_overlap_and_stay_inside() -> None:
    anchors = [(300.0 + 3 * i, 200.0 + 2 * i) for i in range(6)]
    sizes = [(70.0, 16.0)] * 6
    spots = fig.place_labels(anchors, sizes, (600.0, 400.0))
    boxes = [(x, y, x + w, y + h) for (x, y, _), (w, h) in zip(spots, sizes, strict=True)]
    for a, b in itertools.combinations(boxes, 2):
        assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    assert all(b[0] >= 0 and b[2] <= 600 and b[1] >= 0 and b[3] <= 400 for b in boxes)
    assert any(far for _, _, far in spots)  # the ones that had to move get leader lines
    assert fig.place_labels(anchors, sizes, (600.0, 400.0)) == spots  # deterministic


def test_palette_is_okabe_ito_and_markers_differ() -> None:
    assert fig.PALETTE[:3] == ("#0072B2", "#E69F00", "#009E73")
    assert len({fig.marker(i) for i in range(5)}) == 5


def test_plot_names_every_method_zooms_and_shows_the_full_range() -> None:
    figure = draw(_report({**CROWD, "no-rca": (None, 0.1)}))
    try:
        axes = figure.axes[0]
        texts = {t.get_text() for t in axes.texts}
        assert set(CROWD) <= texts and "no-rca" not in texts
        assert any(fig.DIAGONAL_LABEL in t for t in texts)
        x0, x1 = axes.get_xlim()
        assert x1 - x0 < 0.3
        assert len(axes.child_axes) == 1  # the full-range inset
        assert axes.child_axes[0].get_xlim() == (0.0, 1.0)
    finally:
        plt.close(figure)


def test_plot_writes_pdf_and_png(tmp_path: Path) -> None:
    for suffix in (".png", ".pdf"):
        path = scatter(_report(CROWD), tmp_path / f"fig{suffix}")
        assert path.stat().st_size > 1000


def test_report_svg_uses_the_same_geometry() -> None:
    svg = scatter_svg(_report({**CROWD, "no-rca": (None, 0.1)}))
    assert [p["name"] for p in svg["points"]] == list(CROWD)
    assert svg["missing"] == ["no-rca"]
    assert svg["inset"] is not None
    # the crowd sits below the diagonal, out of the zoomed view: the figure says so
    assert svg["diagonal"] is None and "lies above this view" in svg["diagonal_note"]
    assert scatter_svg(_report({"a": (0.2, 0.25), "b": (0.9, 0.8)}))["diagonal"] is not None
    assert [p["colour"] for p in svg["points"]] == [fig.colour(i) for i in range(5)]
    labels = [(p["label_x"], p["label_y"]) for p in svg["points"]]
    assert len(set(labels)) == len(labels)
