"""compare: the pooled difference is the unweighted mean of the strata differences."""

from __future__ import annotations

import numpy as np
import pytest
from evalfixtures import lines_to_file, make_record, pred

from r2act.evaluation import Comparison, compare
from r2act.evaluation.bootstrap import generator, percentile_interval, resample_counts
from r2act.evaluation.compare import MetricComparison
from r2act.schema import BenchmarkRecord

SERVICES = ("cartservice", "frontend", "adservice", "paymentservice")
RECORDS = [
    make_record(s, f, rep)
    for s in SERVICES
    for f in ("pod_failure", "dns_fault")
    for rep in (1, 2, 3)
]
# A always right; B right on pod failures only (and misses the first one), wrong op on dns.
A = lines_to_file([pred(r) for r in RECORDS], "a.jsonl")
B = lines_to_file(
    [
        pred(r)
        if r.labels.fault_type == "pod_failure"
        else pred(r, plan_={"operation": "restart_service", "target": r.labels.service})
        for r in RECORDS[1:]
    ],  # B misses the first incident (a pod failure)
    "b.jsonl",
)


def _metric(result: Comparison, key: str) -> MetricComparison:
    return next(m for m in result.metrics if m.metric == key)


def test_pooled_difference_is_the_mean_of_stratum_differences() -> None:
    result = compare(RECORDS, A, B, by="service", replicates=1000)
    for metric in result.metrics:
        deltas = [s.delta.value for s in metric.strata]
        assert metric.pooled.value == pytest.approx(np.mean(deltas))


def test_pooled_interval_comes_from_averaged_stratum_replicates() -> None:
    result = compare(RECORDS, A, B, by="fault_type", replicates=800, seed=4)
    valid = _metric(result, "valid")
    reps = []
    for stratum in ("dns_fault", "pod_failure"):
        rows = [i for i, r in enumerate(RECORDS) if r.labels.fault_type == stratum]
        diff = np.array([1.0 if stratum == "dns_fault" or i == 0 else 0.0 for i in rows])
        counts = resample_counts(len(rows), 800, generator(4, f"fault_type:{stratum}"))
        reps.append(counts @ diff / len(rows))
    expected = percentile_interval(np.mean(reps, axis=0))
    assert (valid.pooled.ci_low, valid.pooled.ci_high) == pytest.approx(expected)


def test_won_tied_lost_and_worst_stratum() -> None:
    result = compare(RECORDS, A, B, by="fault_type", replicates=1000)
    valid = _metric(result, "valid")
    by = {s.stratum: s for s in valid.strata}
    assert by["dns_fault"].delta.value == 1.0 and by["dns_fault"].outcome == "won"
    # One missing incident of 12: A leads (Δ = 1/12), a win by the point estimate as in the
    # audit's "3/0/1 of 4", but its CI contains 0, which the stratum states separately.
    assert by["pod_failure"].outcome == "won" and not by["pod_failure"].ci_excludes_zero
    assert by["dns_fault"].ci_excludes_zero
    assert (valid.won, valid.tied, valid.lost) == (2, 0, 0)
    assert valid.worst == "pod_failure"
    assert valid.margin == pytest.approx(abs(valid.pooled.value))
    assert valid.spread == pytest.approx(np.std([1.0, 1 / 12], ddof=1))


def test_lower_is_better_metrics_are_oriented_for_won_and_lost() -> None:
    result = compare(RECORDS, B, A, by="fault_type", replicates=1000)
    assert _metric(result, "valid").lost == 2  # B behind on both strata
    no_op = _metric(result, "no_op")  # B's missing incident is a no-op: B is worse
    assert no_op.pooled.value > 0 and no_op.won == 0


def test_summary_line_states_both_premises() -> None:
    line = _metric(compare(RECORDS, A, B, replicates=500, dataset="ds"), "valid").summary
    assert "of 2" in line and "worst" in line and "coverage 1.00 vs 0.96" in line
    assert "invalid outputs scored 0" in line


def test_identical_files_are_flagged_and_tie_everywhere() -> None:
    copy = lines_to_file([pred(r) for r in RECORDS], "copy.jsonl")
    result = compare(RECORDS, A, copy, replicates=300)
    assert [w.code for w in result.warnings] == ["identical_files"]
    assert all(m.tied == len(m.strata) and m.pooled.value == 0 for m in result.metrics)


def _wrong_on_dns(records: list[BenchmarkRecord], wrong: int) -> list[dict[str, object]]:
    """Gold lines, except a wrong operation on the first ``wrong`` dns incidents given."""
    lines: list[dict[str, object]] = []
    left = wrong
    for r in records:
        if r.labels.fault_type == "dns_fault" and left > 0:
            left -= 1
            lines.append(
                pred(r, plan_={"operation": "restart_service", "target": r.labels.service})
            )
        else:
            lines.append(pred(r))
    return lines


def test_won_tied_lost_follow_the_sign_of_each_stratum_difference_and_cancel_exactly() -> None:
    by_service = {s: [r for r in RECORDS if r.labels.service == s] for s in SERVICES}
    a_wrong = {"cartservice": 0, "frontend": 1, "adservice": 2, "paymentservice": 0}
    b_wrong = {"cartservice": 3, "frontend": 0, "adservice": 0, "paymentservice": 0}
    a = lines_to_file([x for s in SERVICES for x in _wrong_on_dns(by_service[s], a_wrong[s])])
    b = lines_to_file([x for s in SERVICES for x in _wrong_on_dns(by_service[s], b_wrong[s])])
    valid = _metric(compare(RECORDS, a, b, by="service", replicates=500), "valid")
    deltas = {s.stratum: s.delta.value for s in valid.strata}
    assert deltas == pytest.approx(
        {"cartservice": 0.5, "frontend": -1 / 6, "adservice": -1 / 3, "paymentservice": 0.0}
    )
    assert (valid.won, valid.tied, valid.lost) == (1, 1, 2)
    # 0.5 - 1/6 - 1/3 + 0 is 1.4e-17 in floating point; the pooled Δ is exactly 0, not "-0.000".
    assert valid.pooled.value == 0.0
    assert valid.summary.startswith("Valid by service: +0.000 [")


def test_ids_of_another_dataset_are_warned_per_method_and_pooled_is_explained() -> None:
    from rich.console import Console

    from r2act.evaluation.tables import comparison_table

    stranger = lines_to_file([{"incident_id": "other_dataset_id"}], "stranger.jsonl")
    result = compare(RECORDS, A, stranger, replicates=200)
    codes = {w.code: w.message for w in result.warnings}
    assert codes["unknown_ids"].startswith("stranger: 1 id(s) are not in the dataset")
    assert codes["missing_ids"].startswith(f"stranger: {len(RECORDS)} of {len(RECORDS)}")
    console = Console(width=200, record=True, color_system=None)
    console.print(comparison_table(result))
    assert "pooled = unweighted mean over strata" in console.export_text()
