"""``r2act evaluate --mapper``: score RCA-only answers through the policy's mapper.

An RCA method answers a service and a fault type, optionally a ranked list
(``"ranks": [{"service": ..., "fault_type": ...}, ...]`` or ``["<service>", ...]``, best
first, RCAEval's output; or the same list as ``evidence.ranks`` of an ordinary predictions
line, as ``r2act baseline rcaeval`` writes it). As the paper scores its RCA-only
controls, each answer is turned into a plan by the mapper (:func:`r2act.actions.map_rca`)
of the record's own policy (the default policy when the record names an unknown one) with
the case's action space and topology, and the result is scored like any predictions
file; the line's own ``plan``, if any, is replaced. The top-ranked entry stands in for a
missing ``rca``.

The rewritten lines go through the ordinary predictions reader, so malformed input is
reported exactly as ``r2act evaluate`` reports it. Ranked answers also get AC@k (is the
true root cause among the first k distinct answers), at service level and for the
(service, fault type) pair.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from r2act.actions import map_rca
from r2act.actions.policy import POLICIES, policy_named
from r2act.errors import DataError
from r2act.evaluation import PredictionFile, parse_stream
from r2act.evaluation.predictions import read_bounded
from r2act.schema import BenchmarkRecord, FaultType
from r2act.systems import SYSTEMS

KS = (1, 3, 5)


@dataclass(frozen=True)
class Ranked:
    """AC@k of one file (None where no answer was ranked)."""

    source: str
    service: dict[int, float]
    pair: dict[int, float]
    ranked_cases: int


def _fault(value: object) -> FaultType | None:
    if not isinstance(value, str):
        return None
    try:
        return FaultType(value.strip().lower().replace("-", "_"))
    except ValueError:
        return None


def _entry(value: object) -> tuple[str | None, str | None]:
    """(service, fault type text) of one ranked entry."""
    if isinstance(value, dict):
        service, fault = value.get("service"), value.get("fault_type")
        return (service if isinstance(service, str) else None), (
            fault if isinstance(fault, str) else None
        )
    if isinstance(value, str):
        service, _, fault = value.partition("_")
        return service or None, (fault or None)
    return None, None


def _ranks(line: dict[str, Any]) -> list[tuple[str | None, str | None]]:
    ranks = line.get("ranks")
    evidence = line.get("evidence")
    if ranks is None and isinstance(evidence, dict):
        ranks = evidence.get("ranks")  # where r2act baseline rcaeval keeps them
    out = [_entry(v) for v in ranks] if isinstance(ranks, list) else []
    rca = line.get("rca")
    if isinstance(rca, dict) and not out:
        out = [_entry(rca)]
    return [e for e in out if e[0] is not None]


def _mapped(line: dict[str, Any], records: dict[str, BenchmarkRecord]) -> dict[str, Any]:
    ranks = _ranks(line)
    line = {k: v for k, v in line.items() if k != "ranks"}
    if not isinstance(line.get("rca"), dict) and ranks:
        service, fault = ranks[0]
        line["rca"] = {"service": service, **({"fault_type": fault} if fault else {})}
    record = records.get(str(_key(line)))
    rca = line.get("rca")
    line["plan"] = None
    if record is not None and isinstance(rca, dict):
        service, fault = rca.get("service"), _fault(rca.get("fault_type"))
        topology = SYSTEMS.get(record.metadata.system)
        if isinstance(service, str) and fault is not None and topology is not None:
            policy = policy_named(record.policy) if record.policy in POLICIES else None
            plan = (
                map_rca(service, fault, record.action_space, topology, policy)
                if policy is not None
                else map_rca(service, fault, record.action_space, topology)
            )
            line["plan"] = plan.model_dump(mode="json")
    return line


def _key(line: dict[str, Any]) -> object:
    """The id a line names: ``incident_id``, else ``case_id`` (as the predictions reader)."""
    return line.get("incident_id", line.get("case_id"))


def mapped_file(path: Path, records: Sequence[BenchmarkRecord]) -> tuple[PredictionFile, Ranked]:
    """The file with mapper plans (parsed like any predictions file) and its AC@k."""
    by_id = {r.incident_id: r for r in records} | {r.case_id: r for r in records if r.case_id}
    try:
        raw = read_bounded(path)  # the reader's checks: no /dev/zero, no endless pipe
    except OSError as error:
        raise DataError(f"{path}: cannot read ({error.strerror or error})") from None
    lines: list[bytes] = []
    hits_s = dict.fromkeys(KS, 0)
    hits_p = dict.fromkeys(KS, 0)
    ranked, seen = 0, set()
    for chunk in raw.splitlines():
        try:
            value = json.loads(chunk)
        except ValueError:
            lines.append(chunk)  # the reader reports it
            continue
        if not isinstance(value, dict):
            lines.append(chunk)
            continue
        case = str(_key(value))
        record = by_id.get(case)
        if record is not None and record.incident_id not in seen:
            seen.add(record.incident_id)
            ranks = _ranks(value)
            if ranks:
                ranked += 1
                _count(ranks, record, hits_s, hits_p)
        lines.append(json.dumps(_mapped(value, by_id)).encode())
    if not seen:
        raise DataError(
            f"{path}: no line answers a case of the dataset (write one "
            '{"incident_id": CASE, "rca": {...}} or {"incident_id": CASE, "ranks": [...]} per line)'
        )
    parsed = parse_stream(io.BytesIO(b"\n".join(lines) + b"\n"), source=str(path))
    total = len(records) or 1
    return parsed, Ranked(
        source=str(path),
        service={k: round(v / total, 6) for k, v in hits_s.items()},
        pair={k: round(v / total, 6) for k, v in hits_p.items()},
        ranked_cases=ranked,
    )


def _count(
    ranks: list[tuple[str | None, str | None]],
    record: BenchmarkRecord,
    hits_s: dict[int, int],
    hits_p: dict[int, int],
) -> None:
    services = list(dict.fromkeys(s for s, _ in ranks))
    pairs = list(dict.fromkeys((s, _fault(f)) for s, f in ranks))
    truth = (record.labels.service, record.labels.fault_type)
    for k in KS:
        hits_s[k] += record.labels.service in services[:k]
        hits_p[k] += truth in pairs[:k]
