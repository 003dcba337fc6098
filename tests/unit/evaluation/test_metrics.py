"""Every metric on a six-incident dataset whose values are computed by hand."""

from __future__ import annotations

import pytest
from evalfixtures import lines_to_file, make_record, pred

from r2act.evaluation import evaluate, score_file
from r2act.evaluation.report import MethodReport

RECORDS = [
    make_record("cartservice", "pod_failure"),
    make_record("cartservice", "dns_fault"),
    make_record("frontend", "http_error"),
    make_record("adservice", "cpu_saturation"),
    make_record("emailservice", "memory_pressure"),
    make_record("paymentservice", "network_delay"),
]
r1, r2, r3, r4, r5, r6 = RECORDS
LINES = [
    pred(r1),  # all right
    pred(r2, plan_={"operation": "restart_service", "target": "cartservice"}),  # wrong operation
    pred(
        r3,
        fault="http_abort",
        plan_={"operation": "rollback_config", "target": "frontend", "scope": "POST /cart"},
    ),
    pred(
        r4,
        service="frontend",
        plan_={"operation": "scale_out", "target": "adservice", "replicas": 5},
    ),
    # r5: no line at all
    pred(r6, plan_=None),  # explicit null plan
    b"{not json",
]


@pytest.fixture(scope="module")
def report() -> MethodReport:
    return evaluate(RECORDS, [lines_to_file(LINES)], replicates=2000, seed=1).methods[0]


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("rca_s", 4 / 6),
        ("rca_t", 4 / 6),
        ("action_hit", 3 / 6),
        ("target_hit", 4 / 6),
        ("exact", 3 / 6),
        ("valid", 2 / 6),
        ("no_op", 2 / 6),
        ("correct_rca", 3 / 6),
        ("vc", 1 / 3),
        ("ec", 2 / 3),
        ("covered", 5 / 6),
    ],
)
def test_metric_equals_hand_computed_value(report: MethodReport, key: str, expected: float) -> None:
    assert report.metrics[key].value == pytest.approx(expected)


def test_denominator_is_every_incident_and_vc_n_is_the_correct_rca_count(
    report: MethodReport,
) -> None:
    assert report.metrics["valid"].n == 6
    assert report.metrics["vc"].n == 3


def test_every_interval_contains_its_point_estimate(report: MethodReport) -> None:
    for estimate in report.metrics.values():
        assert estimate.ci_low <= estimate.value <= estimate.ci_high


def test_missing_prediction_scores_worst_value_on_every_indicator() -> None:
    score = score_file([r5], lines_to_file([pred(r1)])).scores[0]
    assert not score.covered
    assert not any(
        [score.rca_s, score.rca_t, score.action_hit, score.target_hit, score.exact, score.valid]
    )
    assert score.no_op


def test_vc_and_ec_are_undefined_when_no_incident_is_correctly_diagnosed() -> None:
    lines = [pred(r, service="frontend", fault="pod_failure") for r in (r2, r4)]
    metrics = evaluate([r2, r4], [lines_to_file(lines)], replicates=500).methods[0].metrics
    assert metrics["correct_rca"].value == 0
    for key in ("vc", "ec"):
        assert metrics[key].value is None
        assert metrics[key].ci_low is None
        assert metrics[key].n == 0
        assert metrics[key].undefined_replicates == 500


def test_dns_caller_is_a_valid_target_and_validity_needs_the_dependency() -> None:
    caller = {
        "operation": "repair_dependency",
        "target": "checkoutservice",
        "dependency": "cartservice:7070",
    }
    wrong_dep = {**caller, "dependency": "redis-cart:6379"}
    scores = score_file([r2], lines_to_file([pred(r2, plan_=caller)])).scores[0]
    assert scores.valid and scores.target_hit and not scores.exact
    wrong = score_file([r2], lines_to_file([pred(r2, plan_=wrong_dep)])).scores[0]
    assert not wrong.valid and wrong.action_hit


def test_unparsable_plan_keeps_rca_credit_but_scores_zero_on_plan_metrics() -> None:
    line = pred(r1, plan_={"operation": "restart_service", "target": "cartservice", "x": 1})
    score = score_file([r1], lines_to_file([line])).scores[0]
    assert score.rca_s and score.rca_t
    assert not (score.action_hit or score.target_hit or score.exact or score.valid)
    assert not score.no_op  # a malformed plan is an attempt to act: invalid_structure
    assert score.error is not None and score.error.category.value == "invalid_structure"


def test_no_action_plan_counts_as_no_op_and_not_as_action_hit() -> None:
    score = score_file([r1], lines_to_file([pred(r1, plan_={"operation": "no_action"})])).scores[0]
    assert score.no_op and not score.action_hit and not score.valid


def test_breakdowns_have_one_entry_per_fault_type_and_service(report: MethodReport) -> None:
    assert set(report.by_fault_type) == {r.labels.fault_type.value for r in RECORDS}
    assert set(report.by_service) == {r.labels.service for r in RECORDS}
    assert report.by_service["cartservice"]["rca_s"].value == 1.0
    assert report.by_service["cartservice"]["valid"].value == 0.5
    assert report.by_fault_type["memory_pressure"]["covered"].value == 0.0
