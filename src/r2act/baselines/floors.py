"""The floors every method must beat: a seeded random guess and the training majority.

``random`` draws, per incident, a service uniformly from the incident's action-space
targets and a fault type uniformly from those its system realises (``System.fault_types``:
Online Boutique's eight, in the schema's order). Its generator is keyed by the seed and
the incident id, so a prediction does not depend on the order or subset of incidents.
``majority`` predicts the most frequent root-cause service and fault type of the other
folds (out-of-fold, like any method that learns from labels); ties go to the name that
sorts first, so the answer is deterministic.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

from r2act.baselines.base import (
    Baseline,
    RunContext,
    abstain,
    fault_types,
    mapped,
    policy_of,
)
from r2act.baselines.folds import system_splits
from r2act.schema import FaultType, Prediction


def _random(ctx: RunContext) -> Iterator[Prediction]:
    reader = ctx.reader
    for record in reader.records:
        rng = random.Random(f"{ctx.seed}|{record.incident_id}")
        targets = list(record.action_space.targets)
        service = targets[rng.randrange(len(targets))]
        topology = reader.topology(record)
        faults = fault_types(topology)
        fault = faults[rng.randrange(len(faults))]
        yield mapped(
            record.incident_id,
            record.action_space,
            topology,
            service,
            fault,
            method=ctx.method,
            policy=policy_of(record),
            evidence={"seed": ctx.seed},
        )


def _most_common(values: list[str]) -> str:
    counts = Counter(values)
    return min(counts, key=lambda v: (-counts[v], v))


def _majority(ctx: RunContext) -> Iterator[Prediction]:
    reader = ctx.reader
    answers: dict[str, Prediction] = {}
    for split in system_splits(reader.records, reader.folds):
        train = split.train
        if not train:
            answers.update((r.incident_id, abstain(r.incident_id, ctx.method)) for r in split.test)
            continue
        service = _most_common([r.labels.service for r in train])
        fault = FaultType(_most_common([r.labels.fault_type.value for r in train]))
        for record in split.test:
            answers[record.incident_id] = mapped(
                record.incident_id,
                record.action_space,
                reader.topology(record),
                service,
                fault,
                method=ctx.method,
                policy=policy_of(record),
                evidence={"fold": split.fold, "trained_on": len(train)},
            )
    for record in reader.records:
        yield answers[record.incident_id]


RANDOM = Baseline(
    "random",
    "Uniform service among the action-space targets and uniform fault type (seeded).",
    _random,
    observations=False,
)
MAJORITY = Baseline(
    "majority",
    "Most frequent service and fault type of the other folds.",
    _majority,
    observations=False,
    trained=True,
)
