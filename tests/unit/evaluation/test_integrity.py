"""Integrity warnings: constant, duplicate, unknown and missing ids, identical files."""

from __future__ import annotations

from evalfixtures import lines_to_file, make_record, pred

from r2act.evaluation import evaluate

RECORDS = [make_record(s, "pod_failure") for s in ("cartservice", "frontend", "adservice")]


def codes(lines: list[object]) -> list[str]:
    report = evaluate(RECORDS, [lines_to_file(lines)], replicates=100)
    return [w.code for w in report.methods[0].warnings]


def test_clean_file_has_no_warning() -> None:
    assert codes([pred(r) for r in RECORDS]) == []


def test_constant_predictions_are_flagged() -> None:
    same = {
        "rca": {"service": "frontend", "fault_type": "pod_failure"},
        "plan": {"operation": "restart_service", "target": "frontend"},
    }
    assert "constant_predictions" in codes(
        [{"incident_id": r.incident_id, **same} for r in RECORDS]
    )


def test_constant_plan_with_varied_rca_is_flagged_separately() -> None:
    plan = {"operation": "restart_service", "target": "frontend"}
    found = codes([pred(r, plan_=plan) for r in RECORDS])
    assert "constant_plan" in found and "constant_predictions" not in found


def test_unknown_missing_and_duplicate_ids_are_flagged() -> None:
    lines = [
        pred(RECORDS[0]),
        pred(RECORDS[0]),
        {"incident_id": "onlineboutique_x_pod_failure_moderate_r01"},
    ]
    found = codes(lines)
    assert {"unknown_ids", "missing_ids", "duplicate_ids", "bad_lines"} <= set(found)


def test_ids_of_other_folds_are_not_unknown() -> None:
    report = evaluate(
        RECORDS[:1],
        [lines_to_file([pred(r) for r in RECORDS])],
        dataset_ids={r.incident_id for r in RECORDS},
        replicates=100,
    )
    assert report.methods[0].warnings == []


def test_identical_files_are_flagged_across_files() -> None:
    lines = [pred(r) for r in RECORDS]
    report = evaluate(
        RECORDS, [lines_to_file(lines, "a.jsonl"), lines_to_file(lines, "b.jsonl")], replicates=100
    )
    assert [w.code for w in report.warnings] == ["identical_files"]
    assert [m.name for m in report.methods] == ["a", "b"]
