"""What the dataset is made of: the numbers the card prints and the figures draw.

Computed from the records alone, so ``validate`` can recompute them from
``incidents.jsonl`` and compare with what the card claims.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from r2act.schema import BenchmarkRecord, FaultType, Intensity


class LogScale(BaseModel):
    """Log records per incident: min, quartiles, mean, max."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min: int
    q1: float
    median: float
    q3: float
    mean: float
    max: int
    total: int


class Composition(BaseModel):
    """Counts of the main set by every axis the card reports."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    incidents: int = Field(description="Main incidents.")
    services: dict[str, int] = Field(description="Incidents per root-cause service.")
    fault_types: dict[str, int] = Field(description="Incidents per fault type.")
    intensities: dict[str, int] = Field(description="Incidents per intensity.")
    cells: dict[str, int] = Field(description="Incidents per 'service/fault_type' cell.")
    gold_operations: dict[str, int] = Field(description="Gold plans per operation.")
    log_records: LogScale = Field(description="Log records per incident.")
    event_records: int = Field(description="Method-visible events in all.")
    metric_samples: int = Field(description="Metric samples in all.")
    invalid_plans: int = Field(description="Invalid plans in all.")


def _sorted(counter: Counter[str]) -> dict[str, int]:
    return dict(sorted(counter.items()))


def compose(records: list[BenchmarkRecord]) -> Composition:
    """The composition of ``records`` (in any order: the result is order-free)."""
    logs = np.array([r.observations.log_records for r in records] or [0], dtype=np.int64)
    q1, median, q3 = (float(round(x, 2)) for x in np.percentile(logs, [25, 50, 75]))
    order = [f.value for f in FaultType]
    faults = Counter(r.labels.fault_type.value for r in records)
    return Composition(
        incidents=len(records),
        services=_sorted(Counter(r.labels.service for r in records)),
        fault_types={f: faults[f] for f in order if faults[f]},
        intensities={
            i.value: n for i in Intensity if (n := sum(r.labels.intensity == i for r in records))
        },
        cells=_sorted(Counter(f"{r.labels.service}/{r.labels.fault_type.value}" for r in records)),
        gold_operations=_sorted(Counter(r.gold_plan.operation for r in records)),
        log_records=LogScale(
            min=int(logs.min()),
            q1=q1,
            median=median,
            q3=q3,
            mean=float(round(logs.mean(), 2)),
            max=int(logs.max()),
            total=int(logs.sum()) if records else 0,
        ),
        event_records=sum(r.observations.event_records for r in records),
        metric_samples=sum(r.observations.metric_samples for r in records),
        invalid_plans=sum(len(r.invalid_plans) for r in records),
    )
