"""A dataset may hold several systems; results are then shown per system, never only pooled.

Issue 20 item 3 (the audit paper's reporting line): ``evaluate`` reports a per-system
breakdown when the records hold more than one system (or when asked with ``--by system``),
a one-system report stays exactly what it was, and ``compare --by system`` gives paired
per-system differences; comparing by another stratum over several systems says they were
pooled.
"""

from __future__ import annotations

import json

from evalfixtures import lines_to_file, make_record, pred

from r2act.evaluation import compare, evaluate
from r2act.evaluation.paper import report_csv
from r2act.schema import BenchmarkRecord


def _other_system(record: BenchmarkRecord) -> BenchmarkRecord:
    return record.model_copy(
        update={
            "incident_id": record.incident_id.replace("onlineboutique_", "toyshop_"),
            "metadata": record.metadata.model_copy(update={"system": "toyshop"}),
        }
    )


def _records() -> tuple[list[BenchmarkRecord], list[BenchmarkRecord]]:
    ob = [make_record(s, "pod_failure", rep) for s in ("cartservice", "frontend") for rep in (1, 2)]
    return ob, [_other_system(r) for r in ob]


def test_two_systems_get_a_per_system_breakdown_with_each_systems_own_score() -> None:
    ob, toy = _records()
    # right on every Online Boutique incident, wrong service on every toy-shop one
    lines = [pred(r) for r in ob] + [pred(r, service="paymentservice") for r in toy]
    report = evaluate([*ob, *toy], [lines_to_file(lines)], replicates=200)
    method = report.methods[0]
    assert method.by_system is not None
    assert set(method.by_system) == {"onlineboutique", "toyshop"}
    assert method.by_system["onlineboutique"]["rca_s"].value == 1.0
    assert method.by_system["toyshop"]["rca_s"].value == 0.0
    assert method.metrics["rca_s"].value == 0.5  # the pool, shown beside each system
    assert "by_system" in json.loads(report.model_dump_json())["methods"][0]
    assert ",system,toyshop," in report_csv(report)


def test_a_one_system_report_has_no_system_breakdown_unless_asked() -> None:
    ob, _ = _records()
    file = lines_to_file([pred(r) for r in ob])
    plain = evaluate(ob, [file], replicates=200)
    assert plain.methods[0].by_system is None
    assert "by_system" not in json.loads(plain.model_dump_json())["methods"][0]
    asked = evaluate(ob, [file], replicates=200, by_system=True)
    assert asked.methods[0].by_system is not None
    assert list(asked.methods[0].by_system) == ["onlineboutique"]
    # asking for the system breakdown changes nothing else in the report
    a, b = plain.methods[0].model_dump(), asked.methods[0].model_dump()
    b.pop("by_system")
    assert a == b


def test_compare_by_system_and_the_pooled_systems_warning() -> None:
    ob, toy = _records()
    records = [*ob, *toy]
    good = lines_to_file([pred(r) for r in records], "a.jsonl")
    bad = lines_to_file(
        [pred(r) for r in ob] + [pred(r, service="paymentservice") for r in toy], "b.jsonl"
    )
    by_system = compare(records, good, bad, by="system", replicates=200)
    rca = next(m for m in by_system.metrics if m.metric == "rca_s")
    deltas = {s.stratum: s.delta.value for s in rca.strata}
    assert deltas == {"onlineboutique": 0.0, "toyshop": 1.0}
    assert not [w for w in by_system.warnings if w.code == "pooled_systems"]
    pooled = compare(records, good, bad, by="fault_type", replicates=200)
    assert [w.code for w in pooled.warnings if w.code == "pooled_systems"] == ["pooled_systems"]
