"""pandas' group-by aggregations, bit for bit, with numpy on integer group labels.

``datasets.requests`` aggregates a few thousand rows into a few hundred groups per incident;
pandas' per-call overhead made that most of the build's CPU, but the published numbers are
pandas' (a dataset keeps its bytes), so each function here reproduces the algorithm of the
pandas group-by it replaces: the order of the additions, Kahan's compensation, the linear
interpolation of quantiles. ``tests/unit/datasets/test_request_numbers.py`` compares each
with pandas on values where a different method shows in the last bit.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def groups(*keys: npt.NDArray[np.generic]) -> tuple[Ints, Ints]:
    """Rows grouped by ``keys`` (first key first), as pandas' sorted group-by: each row's
    group number (groups numbered in key order) and the first row of each group."""
    order = np.lexsort(keys[::-1]).astype(np.int64)  # stable: ties keep the row order
    change = np.zeros(len(order), dtype=bool)
    change[:1] = True
    for key in keys:
        ordered = key[order]
        change[1:] |= ordered[1:] != ordered[:-1]
    group = np.empty(len(order), dtype=np.int64)
    group[order] = np.cumsum(change) - 1
    return group, order[change]


def kahan_sums(values: Floats, group: Ints, n_groups: int) -> tuple[Floats, Ints]:
    """Per group, the compensated sum of its non-NaN values in row order, and their count.

    pandas' group-by sum and mean (``group_sum``, ``group_mean``) add each group's values
    one by one with Kahan's compensation; a plain or pairwise sum differs in the last bit.
    Vectorised over groups: round ``k`` adds every group's ``k``-th value.
    """
    keep = ~np.isnan(values)
    values, group = values[keep], group[keep]
    order = np.argsort(group, kind="stable")
    values, group = values[order], group[order]
    counts = np.bincount(group, minlength=n_groups).astype(np.int64)
    position = np.arange(len(group)) - np.repeat(np.cumsum(counts) - counts, counts)
    total = np.zeros(n_groups)
    compensation = np.zeros(n_groups)
    for k in range(int(counts.max(initial=0))):
        at = position == k
        lab = group[at]
        y = values[at] - compensation[lab]
        t = total[lab] + y
        c = t - total[lab] - y
        compensation[lab] = np.where(np.isnan(c), 0.0, c)  # an infinite value (pandas too)
        total[lab] = t
    return total, counts


def quantiles(values: Floats, group: Ints, n_groups: int, qs: tuple[float, ...]) -> list[Floats]:
    """Per group, the quantiles ``qs`` of its non-NaN values, interpolated linearly as
    pandas' ``group_quantile`` does (NaN for a group without values)."""
    keep = ~np.isnan(values)
    values, group = values[keep], group[keep]
    order = np.lexsort((values, group))
    values, group = values[order], group[order]
    counts = np.bincount(group, minlength=n_groups).astype(np.int64)
    start = (np.cumsum(counts) - counts)[counts > 0]
    size = counts[counts > 0]
    out = []
    for q in qs:
        where = q * (size - 1).astype(np.float64)
        low_at = start + where.astype(np.int64)
        frac = where % 1
        low = values[low_at]
        high = values[np.minimum(low_at + 1, len(values) - 1)]
        result = np.full(n_groups, np.nan)
        result[counts > 0] = np.where(frac == 0.0, low, low + (high - low) * frac)
        out.append(result)
    return out


def last(values: Floats, group: Ints, n_groups: int) -> Floats:
    """Per group, its last non-NaN value (rows ordered by group), as pandas' ``last``."""
    known = np.flatnonzero(~np.isnan(values))
    label = group[known]
    final = np.flatnonzero(np.append(label[1:] != label[:-1], True)) if len(known) else known
    out = np.full(n_groups, np.nan)
    out[label[final]] = values[known[final]]
    return out
