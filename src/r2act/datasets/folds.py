"""Cross-validation folds stratified by service x fault cell, reproducible from a seed.

Within each cell (taken in sorted order) the ids are shuffled with one seeded generator and
dealt, one by one, to the currently smallest fold (ties to the lowest index). A cell of
three incidents therefore lands in three different folds, and fold sizes differ by at most
one: every fold sees every cell it can, which is what per-cell metrics need. A published
``folds.json`` lists case ids (it is method-visible); each cell is spread over all folds,
so membership says nothing about a case's label.
"""

from __future__ import annotations

import random
from collections import defaultdict

from pydantic import BaseModel, ConfigDict, Field

from r2act.schema import BenchmarkRecord

DEFAULT_K = 5
DEFAULT_SEED = 0


class Folds(BaseModel):
    """``folds.json``: k disjoint folds whose union is the main set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k: int = Field(ge=2, description="Number of folds.")
    seed: int = Field(description="Seed of the shuffle within each cell.")
    stratify_by: list[str] = Field(description="Record fields that define a stratum.")
    folds: list[list[str]] = Field(
        description="Case ids per fold, sorted (incident ids for records without case ids)."
    )


def cell_of(record: BenchmarkRecord) -> tuple[str, str]:
    """The stratum of a record: (root-cause service, fault type)."""
    return record.labels.service, record.labels.fault_type.value


def key_of(record: BenchmarkRecord) -> str:
    """The id a fold lists for ``record``: its case id once the dataset build set one."""
    return record.case_id or record.incident_id


def make_folds(
    records: list[BenchmarkRecord], k: int = DEFAULT_K, seed: int = DEFAULT_SEED
) -> Folds:
    """Deal each cell's shuffled ids to the smallest fold."""
    cells: dict[tuple[str, str], list[str]] = defaultdict(list)
    for record in records:
        cells[cell_of(record)].append(key_of(record))
    rng = random.Random(seed)
    folds: list[list[str]] = [[] for _ in range(k)]
    for cell in sorted(cells):
        ids = sorted(cells[cell])
        rng.shuffle(ids)
        for incident in ids:
            smallest = min(range(k), key=lambda i: (len(folds[i]), i))
            folds[smallest].append(incident)
    return Folds(
        k=k,
        seed=seed,
        stratify_by=["labels.service", "labels.fault_type"],
        folds=[sorted(f) for f in folds],
    )
