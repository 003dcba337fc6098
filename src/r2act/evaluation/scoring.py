"""Scoring one prediction against its incident record, and a whole file against a dataset.

The denominator is always every incident of the evaluated population (the dataset or one
fold): an incident without a usable prediction is scored, not skipped, so a method cannot
raise its numbers by answering only the cases it is sure of. A missing prediction gets the
worst value of every indicator (0 on each success indicator, 1 on ``no_op``) and lowers
coverage, which is reported next to every number.

Only a well-typed plan has an operation and a target the evaluator trusts: an unparsable
plan (an extra key, a missing field, a bad value) scores 0 on Action Hit, Target Hit, Exact
Match and validity. It is an ``invalid_structure`` error, not a no-op: the method tried to
act, and counting the attempt as "did nothing" would hide a malformed plan among the
abstentions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from r2act import actions
from r2act.evaluation.predictions import ParsedPrediction, PredictionFile
from r2act.evaluation.taxonomy import Classification, classify
from r2act.schema import BenchmarkRecord, NoAction, RecoveryPlan, Topology, plan_target
from r2act.systems import SYSTEMS

INDICATORS = (
    "rca_s",
    "rca_t",
    "action_hit",
    "target_hit",
    "exact",
    "valid",
    "no_op",
    "correct_rca",
    "covered",
)
"""Per-incident 0/1 indicators, the columns of :class:`ScoreTable`."""


@dataclass(frozen=True)
class IncidentScore:
    """The indicators of one incident (see :mod:`r2act.evaluation.metrics` for meanings)."""

    incident_id: str
    fault_type: str
    service: str
    covered: bool
    rca_s: bool
    rca_t: bool
    action_hit: bool
    target_hit: bool
    exact: bool
    valid: bool
    no_op: bool
    error: Classification | None

    @property
    def correct_rca(self) -> bool:
        """The event C: both root-cause service and fault type are right."""
        return self.rca_s and self.rca_t


def score_incident(
    record: BenchmarkRecord, prediction: ParsedPrediction | None, topology: Topology | None
) -> IncidentScore:
    """Score ``prediction`` (None when the file has no usable line for it) on ``record``."""
    rca = prediction.rca if prediction else None
    plan = prediction.plan if prediction else None
    valid_ops = {p.operation.value for p in record.valid_plans}
    valid_targets = {t for p in record.valid_plans for t in p.targets}
    target = plan_target(plan) if plan is not None else None
    valid = plan is not None and _is_valid(record, plan)
    return IncidentScore(
        incident_id=record.incident_id,
        fault_type=record.labels.fault_type.value,
        service=record.labels.service,
        covered=prediction is not None,
        rca_s=rca is not None and rca.service == record.labels.service,
        rca_t=rca is not None and rca.fault_type == record.labels.fault_type.value,
        action_hit=plan is not None and plan.operation in valid_ops,
        target_hit=target is not None and target in valid_targets,
        exact=(
            plan is not None
            and plan.operation == record.gold_plan.operation
            and target == plan_target(record.gold_plan)
        ),
        valid=valid,
        no_op=_no_op(prediction),
        error=None if valid else classify(record, prediction, topology),
    )


def _no_op(prediction: ParsedPrediction | None) -> bool:
    """No action proposed: no line, no or a null plan, or ``no_action`` (not a bad plan)."""
    if prediction is None or prediction.plan_state in ("absent", "null"):
        return True
    return isinstance(prediction.plan, NoAction)


def _is_valid(record: BenchmarkRecord, plan: RecoveryPlan) -> bool:
    try:
        return bool(actions.is_valid(plan, record))
    except (KeyError, ValueError):  # labels that cannot judge this plan do not accept it
        return False


@dataclass(frozen=True)
class ScoreTable:
    """Per-incident scores of one predictions file, in record order, plus 0/1 columns."""

    scores: list[IncidentScore]
    columns: dict[str, npt.NDArray[np.float64]]

    def __len__(self) -> int:
        return len(self.scores)

    def matrix(self, names: Sequence[str]) -> npt.NDArray[np.float64]:
        """The named indicator columns side by side, shape (incidents, len(names))."""
        return np.column_stack([self.columns[n] for n in names])


def score_file(records: Sequence[BenchmarkRecord], file: PredictionFile) -> ScoreTable:
    """Score every record of the population against ``file`` (missing -> worst values)."""
    scores = [
        score_incident(r, file.predictions.get(r.incident_id), SYSTEMS.get(r.metadata.system))
        for r in records
    ]
    columns = {
        name: np.fromiter((getattr(s, name) for s in scores), dtype=np.float64, count=len(scores))
        for name in INDICATORS
    }
    return ScoreTable(scores=scores, columns=columns)


def subset(table: ScoreTable, indices: Sequence[int]) -> ScoreTable:
    """The rows ``indices`` of ``table`` (a stratum), keeping their order."""
    rows = np.asarray(indices, dtype=np.intp)
    return ScoreTable(
        scores=[table.scores[i] for i in indices],
        columns={name: column[rows] for name, column in table.columns.items()},
    )
