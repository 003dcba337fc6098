"""``evaluate``: score prediction files on a population of records and build the report.

The core takes records and parsed files, not paths, so it runs without a dataset on disk
(tests build records directly). Resampling is drawn once per population and once per
stratum and shared by all files, so every method sees the same replicates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

from r2act.datasets import ids
from r2act.evaluation.bootstrap import (
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    CountArray,
    generator,
    resample_counts,
)
from r2act.evaluation.integrity import IntegrityWarning, check_file, identical_files
from r2act.evaluation.metrics import estimate
from r2act.evaluation.predictions import PredictionFile
from r2act.evaluation.report import (
    MAX_LISTED_ISSUES,
    EvaluationReport,
    IssueEntry,
    MethodReport,
    ParseSummary,
    TaxonomySummary,
    WarningEntry,
)
from r2act.evaluation.scoring import ScoreTable, score_file, subset
from r2act.evaluation.taxonomy import ErrorCategory, Placement
from r2act.schema import BenchmarkRecord

STRATA = ("fault_type", "service", "system")
"""Record attributes the breakdowns and ``compare`` stratify by (``system``: the system
under test, from the record's metadata; a dataset may hold several)."""

_VALUE = {
    "fault_type": lambda r: r.labels.fault_type.value,
    "service": lambda r: r.labels.service,
    "system": lambda r: r.metadata.system,
}


def strata_of(records: Sequence[BenchmarkRecord], by: str) -> dict[str, list[int]]:
    """Record indices per stratum value, strata in sorted order."""
    if by not in STRATA:
        raise ValueError(f"unknown stratification {by!r}; use one of {', '.join(STRATA)}")
    groups: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        value = str(_VALUE[by](record))
        groups.setdefault(value, []).append(index)
    return dict(sorted(groups.items()))


def evaluate(
    records: Sequence[BenchmarkRecord],
    files: Sequence[PredictionFile],
    *,
    dataset: str = "",
    fold: int | None = None,
    dataset_ids: Collection[str] | None = None,
    seed: int = DEFAULT_SEED,
    replicates: int = DEFAULT_REPLICATES,
    by_system: bool = False,
) -> EvaluationReport:
    """Score each file on ``records`` (the denominator) and report every metric with its CI.

    ``dataset_ids`` is every id of the dataset when ``records`` is one fold, so ids of other
    folds are not reported as unknown. Predictions may be keyed by incident id or case id
    (the records carry both); ``resolve_ids`` maps them before anything is scored. The
    per-system breakdown is reported when the records hold several systems, or always with
    ``by_system``.
    """
    files = [resolve_ids(f, records) for f in files]
    population = [r.incident_id for r in records]
    known = set(dataset_ids) if dataset_ids is not None else set(population)
    counts = resample_counts(len(records), replicates, generator(seed))
    strata = {by: _stratum_counts(records, by, seed, replicates) for by in STRATA}
    names = unique_names([f.method for f in files])
    methods = [
        _method_report(
            name=name,
            file=file,
            table=score_file(records, file),
            counts=counts,
            strata=strata,
            population=population,
            known=known,
            by_system=by_system,
        )
        for name, file in zip(names, files, strict=True)
    ]
    return EvaluationReport(
        dataset=dataset,
        fold=fold,
        incidents=len(records),
        seed=seed,
        replicates=replicates,
        methods=methods,
        warnings=_entries(identical_files(files, population)),
    )


def resolve_ids(file: PredictionFile, records: Sequence[BenchmarkRecord]) -> PredictionFile:
    """``file`` keyed by incident id, whichever id (case or incident) its lines used."""
    aliases = ids.aliases(records)
    if all(key in aliases and aliases[key] == key for key in file.predictions):
        return file  # already keyed by incident id: nothing to map
    return file.resolved(aliases)


def _stratum_counts(
    records: Sequence[BenchmarkRecord], by: str, seed: int, replicates: int
) -> dict[str, tuple[list[int], CountArray]]:
    return {
        value: (rows, resample_counts(len(rows), replicates, generator(seed, f"{by}:{value}")))
        for value, rows in strata_of(records, by).items()
    }


def _method_report(
    *,
    name: str,
    file: PredictionFile,
    table: ScoreTable,
    counts: CountArray,
    strata: dict[str, dict[str, tuple[list[int], CountArray]]],
    population: list[str],
    known: set[str],
    by_system: bool = False,
) -> MethodReport:
    by = {
        key: {value: estimate(subset(table, rows), c) for value, (rows, c) in groups.items()}
        for key, groups in strata.items()
    }
    several = by_system or len(by["system"]) > 1
    return MethodReport(
        name=name,
        source=file.source,
        metrics=estimate(table, counts),
        by_fault_type=by["fault_type"],
        by_service=by["service"],
        by_system=by["system"] if several else None,
        taxonomy=taxonomy_summary(table),
        parse=ParseSummary(
            lines=file.lines,
            predictions=len(file.predictions),
            issues_by_kind=file.issue_counts(),
            issues=[
                IssueEntry(line=i.line, kind=i.kind.value, message=i.message)
                for i in file.issues[:MAX_LISTED_ISSUES]
            ],
        ),
        warnings=_entries(check_file(file, population, known)),
    )


def taxonomy_summary(table: ScoreTable) -> TaxonomySummary:
    """Counts of invalid plans per category, finer reason and wrong-target placement."""
    errors = [s.error for s in table.scores if s.error is not None]
    categories = Counter(e.category for e in errors)
    placements = Counter(e.placement for e in errors if e.placement is not None)
    return TaxonomySummary(
        invalid=len(errors),
        categories={c.value: categories.get(c, 0) for c in ErrorCategory},
        details=dict(sorted(Counter(e.detail for e in errors).items())),
        placements={p.value: placements[p] for p in Placement if placements.get(p)},
    )


def _entries(warnings: list[IntegrityWarning]) -> list[WarningEntry]:
    return [WarningEntry(code=w.code, message=w.message) for w in warnings]


def unique_names(names: list[str]) -> list[str]:
    """Method names made distinct for tables ('rule', 'rule (2)')."""
    seen: Counter[str] = Counter()
    out = []
    for name in names:
        seen[name] += 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out
