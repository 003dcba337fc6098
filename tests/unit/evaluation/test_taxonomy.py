"""The error taxonomy's precedence and the call-graph placement of wrong targets."""

from __future__ import annotations

import pytest
from evalfixtures import lines_to_file, make_record, pred

from r2act.evaluation import ErrorCategory, Placement, score_file, taxonomy_summary
from r2act.evaluation.taxonomy import Classification, place_target
from r2act.schema import BenchmarkRecord, FailureMode, InvalidPlan
from r2act.systems import ONLINE_BOUTIQUE

CART_DNS = make_record("cartservice", "dns_fault")
CART_POD = make_record("cartservice", "pod_failure")
FRONT_HTTP = make_record("frontend", "http_error")


def classify_line(
    record: BenchmarkRecord, plan: object, *, with_plan: bool = True
) -> Classification:
    line = pred(record, plan_=plan)
    if not with_plan:
        del line["plan"]
    error = score_file([record], lines_to_file([line])).scores[0].error
    assert error is not None
    return error


def test_missing_prediction_is_no_op() -> None:
    error = score_file([CART_POD], lines_to_file([])).scores[0].error
    assert error == Classification(ErrorCategory.NO_OP, "missing_prediction")


@pytest.mark.parametrize("plan", [None, {"operation": "no_action"}])
def test_null_or_no_action_plan_is_no_op(plan: object) -> None:
    assert classify_line(CART_POD, plan).category is ErrorCategory.NO_OP


def test_absent_plan_is_no_op() -> None:
    assert classify_line(CART_POD, None, with_plan=False).detail == "absent_plan"


@pytest.mark.parametrize(
    "plan",
    [
        {"operation": "fix_dns_resolution", "target": "cartservice"},  # unknown operation
        {"operation": "restart_service"},  # missing field
        {"operation": "restart_service", "target": "cartservice", "force": True},  # extra field
        {"operation": "scale_out", "target": "cartservice", "replicas": "3"},  # wrong type
        "restart cartservice",  # not an object
    ],
)
def test_unparsable_plan_is_invalid_structure(plan: object) -> None:
    error = classify_line(CART_POD, plan)
    assert (error.category, error.detail) == (ErrorCategory.INVALID_STRUCTURE, "unparsable")


def test_plan_outside_action_space_is_invalid_structure_even_with_wrong_operation() -> None:
    # scale_out is the wrong operation for a pod failure AND 50 replicas is outside A:
    # structure wins by precedence.
    error = classify_line(
        CART_POD, {"operation": "scale_out", "target": "cartservice", "replicas": 50}
    )
    assert (error.category, error.detail) == (
        ErrorCategory.INVALID_STRUCTURE,
        "outside_action_space",
    )


def test_wrong_operation_beats_wrong_target() -> None:
    error = classify_line(CART_POD, {"operation": "rollback_deployment", "target": "frontend"})
    assert error.category is ErrorCategory.WRONG_OPERATION
    assert error.placement is Placement.UPSTREAM_CALLER


def test_right_operation_on_wrong_target_is_wrong_target() -> None:
    error = classify_line(CART_POD, {"operation": "restart_service", "target": "emailservice"})
    assert (error.category, error.detail) == (ErrorCategory.WRONG_TARGET, "wrong_target")
    assert error.placement is Placement.UNRELATED_SERVICE


def test_right_target_with_wrong_scope_is_wrong_target_without_placement() -> None:
    error = classify_line(
        FRONT_HTTP, {"operation": "rollback_config", "target": "frontend", "scope": "POST /cart"}
    )
    assert (error.category, error.detail) == (ErrorCategory.WRONG_TARGET, "wrong_scope")
    assert error.placement is None


def test_wrong_dependency_is_wrong_target() -> None:
    error = classify_line(
        CART_DNS,
        {
            "operation": "repair_dependency",
            "target": "cartservice",
            "dependency": "redis-cart:6379",
        },
    )
    assert (error.category, error.detail) == (ErrorCategory.WRONG_TARGET, "wrong_dependency")


def test_hallucinated_target_is_structure_error_placed_as_hallucinated() -> None:
    error = classify_line(CART_POD, {"operation": "restart_service", "target": "mysql"})
    assert error.category is ErrorCategory.INVALID_STRUCTURE
    assert error.placement is Placement.HALLUCINATED_SERVICE


def test_unparsable_plan_still_places_its_raw_target() -> None:
    error = classify_line(CART_POD, {"operation": "reboot", "target": "redis-cart"})
    assert error.placement is Placement.DOWNSTREAM_DEPENDENCY


@pytest.mark.parametrize(
    ("target", "root", "expected"),
    [
        ("frontend", "cartservice", Placement.UPSTREAM_CALLER),
        ("checkoutservice", "cartservice", Placement.UPSTREAM_CALLER),
        ("loadgenerator", "cartservice", Placement.UPSTREAM_CALLER),  # transitive caller
        ("redis-cart", "cartservice", Placement.DOWNSTREAM_DEPENDENCY),
        ("productcatalogservice", "frontend", Placement.DOWNSTREAM_DEPENDENCY),
        ("emailservice", "cartservice", Placement.UNRELATED_SERVICE),
        ("recommendationservice", "checkoutservice", Placement.UNRELATED_SERVICE),
        ("cartservice-v2", "cartservice", Placement.HALLUCINATED_SERVICE),
        ("cartservice", "cartservice", Placement.ROOT_CAUSE_SERVICE),
    ],
)
def test_call_graph_placement(target: str, root: str, expected: Placement) -> None:
    assert place_target(target, root, ONLINE_BOUTIQUE) is expected


def test_valid_plan_has_no_error() -> None:
    assert score_file([CART_POD], lines_to_file([pred(CART_POD)])).scores[0].error is None


def test_plan_matching_p_plus_but_listed_in_p_minus_takes_its_p_minus_tag() -> None:
    listed = InvalidPlan(
        plan=CART_POD.gold_plan, failure_mode=FailureMode.INVALID_SCOPE, rationale="test"
    )
    record = CART_POD.model_copy(update={"invalid_plans": [*CART_POD.invalid_plans, listed]})
    error = classify_line(record, CART_POD.gold_plan.model_dump())
    assert error.category is ErrorCategory.WRONG_TARGET
    assert error.detail == "listed_invalid:invalid_scope"


def test_summary_counts_every_category_in_precedence_order() -> None:
    records = [CART_POD, CART_DNS, FRONT_HTTP]
    lines = [
        pred(CART_POD, plan_={"operation": "no_action"}),
        pred(CART_DNS, plan_={"operation": "restart_service", "target": "cartservice"}),
        pred(FRONT_HTTP, plan_={"operation": "bogus"}),
    ]
    summary = taxonomy_summary(score_file(records, lines_to_file(lines)))
    assert summary.invalid == 3
    assert list(summary.categories.items()) == [
        ("no_op", 1),
        ("invalid_structure", 1),
        ("wrong_operation", 1),
        ("wrong_target", 0),
    ]
