"""Bootstrap intervals: reproducible with a seed, shared across metrics, NaN-safe for ratios."""

from __future__ import annotations

import numpy as np
from evalfixtures import lines_to_file, make_record, pred

from r2act.evaluation import evaluate
from r2act.evaluation.bootstrap import (
    generator,
    percentile_interval,
    ratio,
    replicate_means,
    replicate_sums,
    resample_counts,
)

RECORDS = [
    make_record(s, f)
    for s in ("cartservice", "frontend", "adservice")
    for f in ("pod_failure", "dns_fault", "cpu_saturation")
]
LINES = [
    pred(r) if i % 2 else pred(r, service="emailservice", plan_=None) for i, r in enumerate(RECORDS)
]


def test_same_seed_gives_identical_intervals() -> None:
    file = lines_to_file(LINES)
    one = evaluate(RECORDS, [file], seed=7, replicates=1000)
    two = evaluate(RECORDS, [file], seed=7, replicates=1000)
    assert one.model_dump() == two.model_dump()


def test_different_seed_draws_different_replicates() -> None:
    one = resample_counts(30, 100, generator(1))
    two = resample_counts(30, 100, generator(2))
    assert not np.array_equal(one, two)


def test_resampling_counts_draw_n_incidents_per_replicate() -> None:
    counts = resample_counts(37, 500, generator(0))
    assert counts.shape == (500, 37)
    assert (counts.sum(axis=1) == 37).all()
    assert counts.min() >= 0


def test_replicate_means_equal_means_of_explicitly_resampled_values() -> None:
    rng = generator(3)
    values = rng.random((20, 2))
    draws = generator(5).integers(0, 20, size=(50, 20))
    counts = np.stack([np.bincount(row, minlength=20) for row in draws]).astype(float)
    expected = np.stack([values[row].mean(axis=0) for row in draws])
    np.testing.assert_allclose(replicate_means(counts, values), expected)


def test_stratum_generators_depend_on_name_not_order() -> None:
    a = generator(0, "fault_type:dns_fault").integers(0, 1000, 5)
    b = generator(0, "fault_type:dns_fault").integers(0, 1000, 5)
    c = generator(0, "fault_type:http_error").integers(0, 1000, 5)
    assert (a == b).all() and (a != c).any()


def test_ratio_replicates_are_nan_when_no_denominator_case_is_drawn() -> None:
    counts = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]], dtype=np.float32)
    sums = replicate_sums(counts, np.array([[1.0, 1.0], [0.0, 0.0]]))
    ratios = ratio(sums[:, 0], sums[:, 1])
    assert ratios[0] == 1.0 and np.isnan(ratios[1]) and ratios[2] == 1.0
    assert percentile_interval(ratios) == (1.0, 1.0)
    assert percentile_interval(np.array([np.nan, np.nan])) is None


def test_interval_of_a_constant_indicator_is_degenerate() -> None:
    file = lines_to_file([pred(r) for r in RECORDS])
    valid = evaluate(RECORDS, [file], replicates=300).methods[0].metrics["valid"]
    assert (valid.value, valid.ci_low, valid.ci_high) == (1.0, 1.0, 1.0)


def test_vc_counts_undefined_replicates_when_correct_diagnoses_are_rare() -> None:
    lines = [pred(RECORDS[0])] + [pred(r, service="emailservice") for r in RECORDS[1:]]
    vc = evaluate(RECORDS, [lines_to_file(lines)], replicates=2000).methods[0].metrics["vc"]
    # one C incident among 9: P(not drawn) = (8/9)^9 ~ 0.35 of replicates are undefined
    assert 500 < vc.undefined_replicates < 900
    assert vc.value == 1.0 and vc.n == 1
