"""What a baseline is, and the one way an RCA-only answer becomes a prediction.

A baseline is a named generator of predictions over a dataset view. Most baselines only
diagnose (a service and a fault type); :func:`mapped` carries such a diagnosis through the
mapper of the record's own policy (the one its answers were labelled under, as the gold
control and RCAEval do), so every RCA-only method is scored on recovery under the same policy
and a system's rules for that policy apply. The policy name is not an answer: every record
of a dataset carries the same one. Ground truth reaches a baseline only through
:attr:`RunContext.reader` records, and only the gold control and supervised training read
their labels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pydantic import JsonValue

from r2act.actions import RecoveryPolicy, map_rca, policy_named
from r2act.baselines.reader import DatasetReader
from r2act.schema import (
    ActionSpace,
    BenchmarkRecord,
    FaultType,
    Prediction,
    RcaPrediction,
    Topology,
)
from r2act.systems import system_of


def fault_types(topology: Topology) -> tuple[FaultType, ...]:
    """The fault types ``topology``'s system realises, in the schema's declared order
    (stable for seeded draws and tie-breaks): a method's label space is its system's, so a
    fault type only another system has (a feature flag) never enters Online Boutique's."""
    return system_of(topology).fault_types


@dataclass(frozen=True)
class RunContext:
    """Everything a baseline run gets: the dataset view, the seed and its method label."""

    reader: DatasetReader
    seed: int
    method: str


Predictor = Callable[[RunContext], Iterator[Prediction]]


@dataclass(frozen=True)
class Baseline:
    """A registered baseline: its name, one-line summary and predictor.

    ``observations`` says whether it reads logs/events/metrics at all (the floors and the
    gold control do not); ``trained`` whether it learns from labels (out-of-fold)."""

    name: str
    summary: str
    predict: Predictor
    observations: bool = True
    trained: bool = False
    views: tuple[str, ...] = ()
    """The views it can run in; every view when empty (a method of a modality the paper's
    views lack runs only where that modality is)."""

    def runs_in(self, view: str) -> bool:
        """Whether the baseline can run in ``view``."""
        return not self.views or view in self.views


def mapped(
    incident_id: str,
    action_space: ActionSpace,
    topology: Topology,
    service: str,
    fault_type: FaultType,
    *,
    method: str,
    policy: RecoveryPolicy,
    evidence: JsonValue = None,
) -> Prediction:
    """An RCA-only answer with the plan the mapper derives from it under ``policy``.

    ``policy`` has no default: it is the record's (:func:`policy_of`), the one its labels
    were made under, so a diagnosis is scored under the semantics its answers use and a
    system's own rules for that policy apply (not always ``r2act-mechanics/3``)."""
    return Prediction(
        incident_id=incident_id,
        rca=RcaPrediction(service=service, fault_type=fault_type.value),
        plan=map_rca(service, fault_type, action_space, topology, policy),
        method=method,
        evidence=evidence,
    )


def policy_of(record: BenchmarkRecord) -> RecoveryPolicy:
    """The recovery policy ``record`` was labelled under (its ``policy`` field)."""
    return policy_named(record.policy)


def abstain(incident_id: str, method: str, reason: str = "no training data") -> Prediction:
    """No answer at all (scored as a miss and a no-op), e.g. when nothing is left to train on."""
    return Prediction(incident_id=incident_id, method=method, evidence={"abstained": reason})
