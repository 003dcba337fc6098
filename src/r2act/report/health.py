"""The health series of one replay as the geometry of a small inline SVG.

Replay probes health every few seconds, first while it waits for the re-injected fault to
hurt (``confirm``), then through the health window after the plan (``window``). Each probe
becomes one bar: its height is the share of failed user requests, its colour whether the
probe passed, so a reader sees when the fault bit, when the plan went out and when health
came back. Geometry is computed here, not in the template, so the template only draws.
"""

from __future__ import annotations

from dataclasses import dataclass

from r2act.replay.outcomes import HealthProbe

WIDTH = 640
HEIGHT = 90
PLOT_TOP = 8
PLOT_BOTTOM = 70
MIN_BAR = 3.0  # a bar stays visible however short the probe interval
"""Width in pixels below which a bar is not drawn narrower."""


@dataclass(frozen=True)
class Bar:
    """One probe drawn: a bar from the baseline up to its error rate (a stub when 0)."""

    x: float
    width: float
    y: float
    height: float
    healthy: bool
    title: str


@dataclass(frozen=True)
class Strip:
    """The whole series: its bars, where the plan went out, and the axis labels."""

    bars: list[Bar]
    plan_x: float | None
    span_s: float
    width: int = WIDTH
    height: int = HEIGHT
    baseline: int = PLOT_BOTTOM


def strip(probes: list[HealthProbe]) -> Strip | None:
    """The strip of a replay's probes, or None when it recorded none."""
    if not probes:
        return None
    start = probes[0].ts
    span = max(probes[-1].ts - start, 1.0)
    step = WIDTH / (len(probes) + 1)
    width = max(min(step * 0.8, WIDTH * 0.05), MIN_BAR)
    usable = PLOT_BOTTOM - PLOT_TOP
    bars = []
    for probe in probes:
        x = (probe.ts - start) / span * (WIDTH - width)
        height = max(probe.error_rate * usable, 2.0)
        detail = "healthy" if probe.healthy else "unhealthy"
        down = f", unavailable: {', '.join(probe.unavailable)}" if probe.unavailable else ""
        bars.append(
            Bar(
                x=round(x, 1),
                width=round(width, 1),
                y=round(PLOT_BOTTOM - height, 1),
                height=round(height, 1),
                healthy=probe.healthy,
                title=(
                    f"t={probe.ts - start:.0f} s ({probe.phase}): {detail}, "
                    f"{probe.error_rate:.1%} of requests failed{down}"
                ),
            )
        )
    window = [p for p in probes if p.phase == "window"]
    plan_x = None
    if window:
        plan_x = round((window[0].ts - start) / span * (WIDTH - width), 1)
    return Strip(bars=bars, plan_x=plan_x, span_s=span)
