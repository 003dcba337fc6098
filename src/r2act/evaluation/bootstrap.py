"""Percentile bootstrap over incidents, vectorised as one resampling-count matrix.

A bootstrap replicate draws n incidents with replacement; every rate in it is a weighted
mean with weights = how often each incident was drawn. Drawing the index matrix once and
turning it into a (B, n) count matrix lets every metric of every method share the same
replicates (so differences between methods are paired) and reduces all replicate means to
one matrix product ``counts @ X``. Seeds are explicit so a report is reproducible; strata
get their own generator derived from the seed and the stratum's name, so adding a stratum
does not change the replicates of the others.
"""

from __future__ import annotations

import zlib

import numpy as np
import numpy.typing as npt

DEFAULT_REPLICATES = 10_000
"""B, the number of bootstrap replicates."""

DEFAULT_SEED = 0
"""Seed used when the caller gives none."""

CONFIDENCE = 0.95

FloatArray = npt.NDArray[np.float64]


def generator(seed: int, stratum: str | None = None) -> np.random.Generator:
    """A generator for the whole population (``stratum`` None) or for one named stratum."""
    if stratum is None:
        return np.random.default_rng(seed)
    return np.random.default_rng([seed, zlib.crc32(stratum.encode("utf-8"))])


CountArray = npt.NDArray[np.float32]


def resample_counts(n: int, replicates: int, rng: np.random.Generator) -> CountArray:
    """(replicates, n) matrix: how often incident j is drawn in replicate b; rows sum to n.

    Stored as float32 so the replicate sums are one single-precision matrix product; the
    sums of integer-valued indicators stay exact (they are integers below 2**24).
    """
    if n == 0:
        return np.zeros((replicates, 0), dtype=np.float32)
    draws = rng.integers(0, n, size=(replicates, n))
    draws += (np.arange(replicates) * n)[:, None]
    counts = np.bincount(draws.ravel(), minlength=replicates * n)
    return counts.reshape(replicates, n).astype(np.float32)


def replicate_sums(counts: CountArray, values: FloatArray) -> FloatArray:
    """Replicate sums of each column of integer-valued ``values`` (n, m) -> (B, m), float64."""
    sums: FloatArray = (counts @ values.astype(np.float32)).astype(np.float64)
    return sums


def replicate_means(counts: CountArray, values: FloatArray) -> FloatArray:
    """Replicate means of each column of ``values`` (n, m) -> (B, m)."""
    n = values.shape[0]
    if n == 0:
        return np.full((counts.shape[0], values.shape[1]), np.nan)
    means: FloatArray = replicate_sums(counts, values) / n
    return means


def ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """Element-wise numerator/denominator, NaN where the denominator is 0."""
    out = np.full(denominator.shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def percentile_interval(replicates: FloatArray) -> tuple[float, float] | None:
    """The central 95% percentile interval of the defined (non-NaN) replicates, or None."""
    defined = replicates[~np.isnan(replicates)]
    if defined.size == 0:
        return None
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return float(low), float(high)


def percentile_intervals(replicates: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Column-wise 95% percentile bounds of (B, m) replicates, ignoring NaN (all NaN -> NaN)."""
    tail = (1 - CONFIDENCE) / 2 * 100
    if replicates.size == 0 or np.isnan(replicates).all(axis=0).any():
        bounds = np.array([percentile_interval(c) or (np.nan, np.nan) for c in replicates.T])
        bounds = bounds.reshape(-1, 2)
        return bounds[:, 0], bounds[:, 1]
    if np.isnan(replicates).any():
        low, high = np.nanpercentile(replicates, [tail, 100 - tail], axis=0)
    else:
        low, high = np.percentile(replicates, [tail, 100 - tail], axis=0)
    return low, high
