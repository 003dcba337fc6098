"""Score intervals for estimates over too few incidents for the bootstrap.

A percentile bootstrap over n incidents can only produce the n + 1 values k/n, and with one
incident every replicate equals the point estimate: the interval collapses to a point and
reads as certainty. Below :data:`SMALL_N` incidents r2act therefore reports score intervals
instead, which stay wide when n is small:

- a proportion k/n gets the Wilson score interval (Wilson 1927);
- a paired difference of two proportions on the same n incidents gets Newcombe's hybrid
  score interval for paired data (Newcombe 1998, method 10), built from the two Wilson
  intervals and the correlation of the pairs.

Both are closed forms, so they cost nothing next to the bootstrap.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

from r2act.evaluation.bootstrap import CONFIDENCE

SMALL_N = 5
"""Estimates over fewer incidents than this get a score interval, not a bootstrap one."""

IntervalMethod = Literal["bootstrap", "wilson", "newcombe"]

_Z = NormalDist().inv_cdf(1 - (1 - CONFIDENCE) / 2)


def wilson(successes: int, n: int) -> tuple[float, float] | None:
    """The 95% Wilson score interval of ``successes`` / ``n``; None when n is 0."""
    if n <= 0:
        return None
    p = successes / n
    z2 = _Z * _Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_paired(
    both: int, only_a: int, only_b: int, neither: int
) -> tuple[float, float] | None:
    """95% interval of p_A − p_B for paired 0/1 outcomes (Newcombe 1998, method 10).

    The four counts are the incidents where both methods score 1, only A, only B, neither.
    The correlation term uses Newcombe's continuity-adjusted numerator (a·d − b·c reduced by
    n/2 when positive), and is 0 when a margin is empty.
    """
    n = both + only_a + only_b + neither
    if n <= 0:
        return None
    hits_a, hits_b = both + only_a, both + only_b
    p_a, p_b = hits_a / n, hits_b / n
    low_a, high_a = wilson(hits_a, n) or (0.0, 1.0)
    low_b, high_b = wilson(hits_b, n) or (0.0, 1.0)
    margins = hits_a * (n - hits_a) * hits_b * (n - hits_b)
    phi = 0.0
    if margins > 0:
        cross = both * neither - only_a * only_b
        adjusted = max(cross - n / 2, 0.0) if cross > 0 else float(cross)
        phi = adjusted / math.sqrt(margins)
    delta = p_a - p_b
    below = (p_a - low_a) ** 2 - 2 * phi * (p_a - low_a) * (high_b - p_b) + (high_b - p_b) ** 2
    above = (high_a - p_a) ** 2 - 2 * phi * (high_a - p_a) * (p_b - low_b) + (p_b - low_b) ** 2
    low = delta - math.sqrt(max(below, 0.0))
    high = delta + math.sqrt(max(above, 0.0))
    return max(-1.0, low), min(1.0, high)
