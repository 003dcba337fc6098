"""The numbers of a report, computed with :mod:`r2act.evaluation` and nothing else.

Everything is scored the way ``r2act evaluate`` scores it (same denominator, same intervals,
same seed), so a number on the site equals the number in the evaluation report. The site
adds two breakdowns the evaluation report does not carry, by intensity and by system (a
dataset may hold several systems, and results are shown per system, DESIGN 7b); they are
estimated with the evaluation's own ``estimate`` over the same kind of seeded per-stratum
resampling, so they read like the fault-type and service tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from r2act import evaluation
from r2act.evaluation.bootstrap import generator, resample_counts
from r2act.evaluation.compare import Comparison
from r2act.evaluation.evaluate import resolve_ids
from r2act.evaluation.metrics import Estimate, estimate
from r2act.evaluation.predictions import PredictionFile
from r2act.evaluation.report import EvaluationReport, MethodReport
from r2act.evaluation.scoring import ScoreTable, score_file, subset
from r2act.schema import BenchmarkRecord

Strata = dict[str, dict[str, Estimate]]

GROUPINGS: dict[str, Callable[[BenchmarkRecord], str]] = {
    "fault type": lambda r: r.labels.fault_type.value,
    "service": lambda r: r.labels.service,
    "intensity": lambda r: r.labels.intensity.value,
    "system": lambda r: r.metadata.system,
}
"""The breakdowns of the leaderboard, each a record attribute."""


@dataclass(frozen=True)
class MethodScores:
    """One method: its evaluation entry, per-incident scores and every breakdown."""

    report: MethodReport
    file: PredictionFile
    table: ScoreTable
    breakdowns: dict[str, Strata]


@dataclass(frozen=True)
class Scores:
    """Every method scored on the dataset's records, plus the comparisons asked for."""

    evaluation: EvaluationReport
    methods: list[MethodScores]
    comparisons: list[Comparison]


def breakdown(
    records: Sequence[BenchmarkRecord],
    table: ScoreTable,
    key: Callable[[BenchmarkRecord], str],
    name: str,
    *,
    seed: int,
    replicates: int,
) -> Strata:
    """Every metric per value of ``key``, with seeded per-stratum bootstrap intervals."""
    groups: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        groups.setdefault(key(record), []).append(index)
    return {
        value: estimate(
            subset(table, rows),
            resample_counts(len(rows), replicates, generator(seed, f"{name}:{value}")),
        )
        for value, rows in sorted(groups.items())
    }


def score(
    records: Sequence[BenchmarkRecord],
    files: Sequence[PredictionFile],
    *,
    dataset: str,
    dataset_ids: set[str],
    pairs: Sequence[tuple[str, str]] = (),
    by: str = "fault_type",
    seed: int = evaluation.DEFAULT_SEED,
    replicates: int = evaluation.DEFAULT_REPLICATES,
) -> Scores:
    """Evaluate ``files`` on ``records``; compare each (A, B) of ``pairs`` (method names)."""
    report = evaluation.evaluate(
        records, files, dataset=dataset, dataset_ids=dataset_ids, seed=seed, replicates=replicates
    )
    methods = []
    for entry, file in zip(report.methods, files, strict=True):
        resolved = resolve_ids(file, records)
        table = score_file(records, resolved)
        strata: dict[str, Strata] = {
            "fault type": entry.by_fault_type,
            "service": entry.by_service,
        }
        for name in ("intensity", "system"):
            strata[name] = breakdown(
                records, table, GROUPINGS[name], name, seed=seed, replicates=replicates
            )
        methods.append(MethodScores(report=entry, file=resolved, table=table, breakdowns=strata))
    by_name = {m.report.name: m for m in methods}
    comparisons = []
    for a, b in pairs:
        comparisons.append(
            evaluation.compare(
                records,
                by_name[a].file,
                by_name[b].file,
                by=by,
                dataset=dataset,
                seed=seed,
                replicates=replicates,
                dataset_ids=dataset_ids,
            )
        )
    return Scores(evaluation=report, methods=methods, comparisons=comparisons)
