"""Geometry of the diagnosis-to-action scatter, shared by ``evaluate --plot`` and ``r2act report``.

The paper's Fig. 2 puts every method at (RCA-S, Recovery Validity). Methods crowd: floors sit
near the origin, strong RCA methods share a corner, and on full [0, 1] axes their intervals
and names overlap into one blot. Both renderings (matplotlib's PNG/PDF/SVG and the report's
inline SVG) therefore take the same decisions from here, so they cannot drift apart:

- the axes are zoomed to the data (every point and interval, plus a margin), and a small
  inset keeps the full [0, 1] square with the zoomed box drawn on it, so nothing is hidden;
- each point carries its method's name, placed by :func:`place_labels` next to the point
  where it overlaps no other name and no other point, with a leader line when it had to move;
- the diagonal is labelled "validity = diagnosis": the vertical distance below it is the
  gap the benchmark measures;
- colours come from the Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design"),
  distinguishable under the common colour-vision deficiencies, and each method also gets
  its own marker shape, so colour is never the only cue.

Pure functions of numbers: no matplotlib, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PALETTE = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#D55E00",  # vermillion
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow (last: weak on white)
)
"""Okabe-Ito colours, in the order methods get them."""

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
"""matplotlib marker per method (the SVG renderer draws the same shapes)."""

DIAGONAL_LABEL = "validity = diagnosis"
MIN_SPAN = 0.1
"""Smallest zoomed axis span, so a cluster of identical points still gets some room."""
MARGIN = 0.12
"""Margin added on each side of the data, as a share of the data's span."""
EDGE = 0.03
"""How far an axis may reach past 0 or 1, so a point at 0 or 1 and its caps stay visible."""


@dataclass(frozen=True)
class Point:
    """One method: (RCA-S, Valid) with 95% intervals (None: no interval)."""

    name: str
    x: float
    y: float
    x_low: float | None = None
    x_high: float | None = None
    y_low: float | None = None
    y_high: float | None = None


def colour(index: int) -> str:
    """The palette colour of the ``index``-th method (cycles past the palette)."""
    return PALETTE[index % len(PALETTE)]


def marker(index: int) -> str:
    """The marker shape of the ``index``-th method."""
    return MARKERS[index % len(MARKERS)]


def zoomed_range(values: Sequence[float]) -> tuple[float, float]:
    """An axis range around ``values`` (points and interval ends), inside [0, 1]."""
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    span = max(high - low, MIN_SPAN)
    centre = (low + high) / 2
    low, high = centre - span / 2, centre + span / 2
    pad = span * MARGIN
    low, high = max(-EDGE, low - pad), min(1.0 + EDGE, high + pad)
    if high - low < MIN_SPAN:  # pressed against 0 or 1: grow inwards
        low, high = (-EDGE, MIN_SPAN) if low <= 0.0 else (1.0 - MIN_SPAN, 1.0 + EDGE)
    return low, high


def axis_ranges(points: Sequence[Point]) -> tuple[tuple[float, float], tuple[float, float]]:
    """Zoomed (x range, y range) that holds every point and every interval."""
    xs = [v for p in points for v in (p.x, p.x_low, p.x_high) if v is not None]
    ys = [v for p in points for v in (p.y, p.y_low, p.y_high) if v is not None]
    return zoomed_range(xs), zoomed_range(ys)


def is_zoomed(ranges: tuple[tuple[float, float], tuple[float, float]]) -> bool:
    """Whether the zoomed axes leave out part of the [0, 1] square (then draw the inset)."""
    (x0, x1), (y0, y1) = ranges
    return x1 - x0 < 0.95 or y1 - y0 < 0.95


def diagonal_note(ranges: tuple[tuple[float, float], tuple[float, float]]) -> str | None:
    """What to say when the zoomed view does not show the diagonal (None when it does)."""
    (x0, x1), (y0, y1) = ranges
    if max(x0, y0) < min(x1, y1):
        return None
    if y1 <= x0:
        return f"{DIAGONAL_LABEL} lies above this view: every method here is below it"
    return f"{DIAGONAL_LABEL} lies below this view: every method here is above it"


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick positions within [low, high] (steps of 0.01, 0.02, 0.05, 0.1, 0.2, 0.25)."""
    span = high - low
    step = next((s for s in (0.01, 0.02, 0.05, 0.1, 0.2, 0.25) if span / s <= count), 0.5)
    first = round(-(-low // step) * step, 6)
    out: list[float] = []
    value = first
    while value <= high + 1e-9:
        out.append(round(value, 6))
        value += step
    return out


Box = tuple[float, float, float, float]
"""(left, top, right, bottom) in pixels, y growing downwards."""


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_labels(
    anchors: Sequence[tuple[float, float]],
    sizes: Sequence[tuple[float, float]],
    bounds: tuple[float, float],
    radius: float = 6.0,
) -> list[tuple[float, float, bool]]:
    """Top-left corner of each label and whether it needs a leader line to its point.

    ``anchors`` are the points in pixels (y downwards), ``sizes`` the labels' (width,
    height), ``bounds`` the plot area's (width, height). Labels are placed one at a time,
    points with fewer neighbours first; each takes the first candidate position (right,
    left, above, below the point, then the same further out) that stays inside the plot
    and overlaps neither an earlier label nor any point. When none is free, the least
    crowded candidate is used. Deterministic, so a report rebuilds identically.
    """
    width, height = bounds
    points: list[Box] = [(x - radius, y - radius, x + radius, y + radius) for x, y in anchors]
    placed: list[Box | None] = [None] * len(anchors)
    order = sorted(
        range(len(anchors)),
        key=lambda i: (
            sum(1 for j in range(len(anchors)) if _near(anchors[i], anchors[j], 40.0)),
            i,
        ),
    )
    for i in order:
        x, y = anchors[i]
        w, h = sizes[i]
        best: tuple[int, Box, bool] | None = None
        for step, (dx, dy) in enumerate(_candidates(w, h, radius)):
            box = (x + dx, y + dy, x + dx + w, y + dy + h)
            inside = box[0] >= 0 and box[1] >= 0 and box[2] <= width and box[3] <= height
            if not inside:
                continue
            hits = sum(_overlap(box, p) for p in points) + sum(
                _overlap(box, q) for q in placed if q is not None
            )
            moved = step >= 4
            if hits == 0:
                best = (0, box, moved)
                break
            if best is None or hits < best[0]:
                best = (hits, box, moved)
        if best is None:  # larger than the plot: clamp at the right of the point
            left = min(max(0.0, x + radius), max(0.0, width - w))
            best = (0, (left, max(0.0, y - h / 2), left + w, max(0.0, y - h / 2) + h), False)
        placed[i] = best[1]
    out = []
    for i, spot in enumerate(placed):
        assert spot is not None
        box = spot
        x, y = anchors[i]
        far = not (box[0] - radius * 2 <= x <= box[2] + radius * 2) or not (
            box[1] - radius * 2 <= y <= box[3] + radius * 2
        )
        out.append((box[0], box[1], far))
    return out


def _near(a: tuple[float, float], b: tuple[float, float], distance: float) -> bool:
    return abs(a[0] - b[0]) < distance and abs(a[1] - b[1]) < distance


def _candidates(w: float, h: float, r: float) -> list[tuple[float, float]]:
    """Offsets of a label's top-left corner from its point, nearest first."""
    out: list[tuple[float, float]] = []
    for reach in (1.0, 2.5, 4.5, 7.0):
        gap = r * reach
        out += [
            (gap, -h / 2),  # right
            (-gap - w, -h / 2),  # left
            (-w / 2, -gap - h),  # above
            (-w / 2, gap),  # below
            (gap, -gap - h),  # upper right
            (-gap - w, -gap - h),  # upper left
            (gap, gap),  # lower right
            (-gap - w, gap),  # lower left
        ]
    return out
