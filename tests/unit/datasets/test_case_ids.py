"""No answer in what a method sees (issue 12 item 4): opaque case ids, answers kept apart.

The attack the ids must defeat is the one the issue measured: a short predictor that reads
only the key (``<system>_<service>_<fault>_<intensity>_rNN``) and maps it to a plan scored
RCA 1.000. Here the same predictor runs on what a method reads.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from r2act.actions import DEFAULT_POLICY
from r2act.baselines.base import mapped
from r2act.datasets import ids, layout, load_records, read_table
from r2act.evaluation import evaluate, parse_stream
from r2act.schema import BenchmarkRecord
from r2act.systems import ONLINE_BOUTIQUE as OB
from r2act.systems import get_system

_OB_FAULTS = get_system("onlineboutique").fault_types


def _id_only_predictions(keys: list[str], records: list[BenchmarkRecord]) -> bytes:
    """The issue's id-only predictor: find a service and a fault type spelled in the key.

    Without a match it guesses the most common service and fault type of the dataset
    (no information about the case): the chance floor it must fall to on case ids."""
    space = records[0].action_space
    services = sorted(space.targets, key=len, reverse=True)  # 'cartservice' before 'cart'
    common_service = max(space.targets, key=[r.labels.service for r in records].count)
    common_fault = max(_OB_FAULTS, key=[r.labels.fault_type for r in records].count)
    lines = []
    for key in keys:
        service = next((s for s in services if f"_{s}_" in key), common_service)
        fault = next((f for f in _OB_FAULTS if f"_{f.value}_" in key), common_fault)
        line = mapped(key, space, OB, service, fault, method="id-only", policy=DEFAULT_POLICY)
        lines.append(line.model_dump_json())
    return ("\n".join(lines) + "\n").encode()


def _score(built: Path, keys: list[str]) -> tuple[float, float]:
    records = load_records(built)
    parsed = parse_stream(io.BytesIO(_id_only_predictions(keys, records)), "id-only")
    report = evaluate(records, [parsed], replicates=200)
    metrics = report.methods[0].metrics
    return metrics["rca_s"].value, metrics["valid"].value


def _constant_floor(records: list[BenchmarkRecord]) -> tuple[float, float]:
    """RCA-S and validity of always answering the most common service and fault type."""
    keys = [f"{r.incident_id}-unmatchable".replace("_", "-") for r in records]
    parsed = parse_stream(io.BytesIO(_id_only_predictions(keys, records)), "floor")
    remap = {k: r.incident_id for k, r in zip(keys, records, strict=True)}
    parsed = parsed.resolved(remap)
    metrics = evaluate(records, [parsed], replicates=200).methods[0].metrics
    return metrics["rca_s"].value, metrics["valid"].value


def test_the_id_only_predictor_wins_on_incident_ids_and_falls_to_chance_on_case_ids(
    built: Path,
) -> None:
    records = load_records(built)
    leaked_rca, leaked_valid = _score(built, [r.incident_id for r in records])
    assert leaked_rca == 1.0  # the leak is real: the key spells the answer
    cases = list(read_table(built, layout.CASES).case_id)
    rca, valid = _score(built, cases)
    assert (rca, valid) == _constant_floor(records)  # no better than knowing nothing
    assert valid <= leaked_valid


def test_case_ids_carry_no_information_about_the_label() -> None:
    """A learner on the case id's hex digits predicts the service no better than chance."""
    rng = random.Random(4)
    salt = f"{rng.getrandbits(256):064x}"
    services = [d.name for d in OB.deployments if d.name != OB.load_generator]
    faults = [f.value for f in _OB_FAULTS]
    rows = [
        (ids.case_id(salt, f"onlineboutique_{s}_{f}_severe_r{n:02d}"), s)
        for s in services
        for f in faults
        for n in range(1, 21)
    ]
    rng.shuffle(rows)
    train, test = rows[: len(rows) // 2], rows[len(rows) // 2 :]
    votes: dict[tuple[int, str], dict[str, int]] = {}
    for case, service in train:  # naive per-position vote over the 12 hex digits
        for position, digit in enumerate(case[5:]):
            counts = votes.setdefault((position, digit), {})
            counts[service] = counts.get(service, 0) + 1
    hits = 0
    for case, service in test:
        tally: dict[str, int] = {}
        for position, digit in enumerate(case[5:]):
            for s, n in votes.get((position, digit), {}).items():
                tally[s] = tally.get(s, 0) + n
        hits += max(sorted(tally), key=lambda s: tally[s]) == service
    chance = 1 / len(services)
    sd = (chance * (1 - chance) / len(test)) ** 0.5
    assert hits / len(test) < chance + 4 * sd


def _cells(path: Path) -> list[str]:
    table = pq.read_table(path)
    return [str(v) for column in table.columns for v in column.to_pylist()]


def test_no_method_visible_table_holds_an_incident_id_a_label_in_a_key_or_a_gold_plan(
    built: Path,
) -> None:
    records = load_records(built)
    incident_ids = [r.incident_id for r in records]
    gold = [json.dumps(r.gold_plan.model_dump(mode="json"), sort_keys=True) for r in records]
    labels = {r.labels.service for r in records} | {r.labels.fault_type.value for r in records}
    visible = [p for p in layout.METHOD_VISIBLE if p.endswith(".parquet")]
    assert visible and all((built / p).is_file() for p in visible)
    texts = {p: "\n".join(_cells(built / p)) for p in visible}
    texts[layout.FOLDS] = (built / layout.FOLDS).read_text()
    texts[layout.README] = (built / layout.README).read_text()
    for name, text in texts.items():
        assert not [i for i in incident_ids if i in text], name
        compact = text.replace(" ", "")
        assert not [g for g in gold if g.replace(" ", "") in compact], name
        if name != layout.README:  # the card's aggregate counts may name the fields
            for forbidden in ("gold_plan", "valid_plans", "invalid_plans", "incident_id"):
                assert f'"{forbidden}"' not in text, (name, forbidden)
    for path in visible:
        schema = pq.read_schema(built / path)
        assert not {"incident_id", "gold_plan", "valid_plans", "fault"} & set(schema.names)
        keys = pq.read_table(built / path, columns=["case_id"]).column("case_id").to_pylist()
        assert all(ids.CASE_ID.match(k) for k in keys), path
        assert not [k for k in set(keys) for label in labels if label in k], path


def test_the_answers_map_case_ids_to_incident_ids_with_the_stored_salt(built: Path) -> None:
    key = json.loads((built / layout.KEY).read_text())
    records = load_records(built)
    assert key["salt"] == ids.derive_salt(records)
    answers = pq.read_table(built / layout.INCIDENTS)
    for row in answers.select(["case_id", "incident_id"]).to_pylist():
        assert row["case_id"] == ids.case_id(key["salt"], row["incident_id"])
    assert "salt" not in "".join(_cells(built / layout.CASES))
    for path in layout.METHOD_VISIBLE:
        assert not path.startswith(layout.ANSWERS)


def test_evaluate_scores_a_file_keyed_by_case_ids_like_one_keyed_by_incident_ids(
    built: Path,
) -> None:
    records = load_records(built)
    by_incident = _id_only_predictions([r.incident_id for r in records], records)
    by_case = by_incident
    for record in records:
        by_case = by_case.replace(
            f'"incident_id":"{record.incident_id}"'.encode(),
            f'"incident_id":"{record.case_id}"'.encode(),
        )
    a = parse_stream(io.BytesIO(by_incident), "a")
    b = parse_stream(io.BytesIO(by_case), "b")
    assert set(b.predictions) == {r.case_id for r in records}
    ra, rb = (evaluate(records, [f], replicates=200).methods[0] for f in (a, b))
    assert ra.metrics == rb.metrics and not [w for w in rb.warnings if w.code == "unknown_ids"]


def test_a_case_id_and_its_incident_id_on_two_lines_are_one_incident_given_twice(
    built: Path,
) -> None:
    records = load_records(built)
    first = records[0]
    text = (
        json.dumps({"incident_id": first.case_id, "rca": {"service": "frontend"}})
        + "\n"
        + json.dumps({"incident_id": first.incident_id, "rca": {"service": "adservice"}})
        + "\n"
    )
    parsed = parse_stream(io.BytesIO(text.encode()), "mixed").resolved(ids.aliases(records))
    assert list(parsed.predictions) == [first.incident_id]
    assert parsed.predictions[first.incident_id].rca is not None
    assert parsed.predictions[first.incident_id].rca.service == "frontend"  # the first wins
    assert parsed.duplicates == {first.incident_id: [1, 2]}


def test_a_line_may_say_case_id_instead_of_incident_id(built: Path) -> None:
    records = load_records(built)
    line = json.dumps({"case_id": records[0].case_id, "rca": {"service": "x"}}) + "\n"
    parsed = parse_stream(io.BytesIO(line.encode()), "c").resolved(ids.aliases(records))
    assert list(parsed.predictions) == [records[0].incident_id] and not parsed.counts


def test_case_id_table_column_is_an_arrow_string(built: Path) -> None:
    assert pq.read_schema(built / layout.CASES).field("case_id").type == pa.string()
