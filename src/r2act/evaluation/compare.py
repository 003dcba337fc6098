"""``compare``: paired, per-stratum differences between two methods on the same incidents.

A pooled lead can hide a stratum where the order reverses, and the spread of the
per-stratum differences, not the pooled margin, decides whether that happens. Following
section 3.4 of the audit paper, for methods A and B and stratum s with n_s incidents:

- Δ_s = (1/n_s) Σ_i (y_i^A − y_i^B), y the per-incident indicator of the metric; its 95%
  CI is a percentile bootstrap over the stratum's incidents (pairs are resampled together).
- The pooled difference Δ̄ is the unweighted mean of the Δ_s over the k strata, so each
  stratum counts once; its CI comes from the replicate-wise mean of the strata replicates.
- A stratum is *won* when Δ_s is on A's better side of 0 (above 0, or below 0 for
  lower-is-better metrics such as No-op), *lost* when on the other side and *tied* when
  Δ_s = 0 — the point-estimate counts of the audit's section 7.1 ("3/0/1 of 4", where the
  one loss is then qualified by its CI). Whether a stratum's CI excludes 0 is reported
  alongside (``ci_excludes_zero``). The *worst* stratum is the one with the worst Δ_s for A.
- A stratum of fewer than SMALL_N incidents is too small for a percentile bootstrap (with
  one incident every replicate equals Δ_s and the interval is a point): it gets Newcombe's
  paired score interval instead, ``small_n`` is set and ``ci_excludes_zero`` is None, so
  no such stratum is ever reported as a difference the data support.
- margin = |Δ̄|; spread = sample standard deviation of the Δ_s (None when k < 2).

Each metric also gets the one-line summary of the audit's section 7.1. VC and EC are not
compared: they condition on each method's own correct diagnoses, so the two rates are not
over the same incidents and a paired difference does not exist.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from r2act.evaluation.bootstrap import (
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    FloatArray,
    generator,
    percentile_interval,
    percentile_intervals,
    replicate_means,
    resample_counts,
)
from r2act.evaluation.evaluate import resolve_ids, strata_of, unique_names
from r2act.evaluation.integrity import check_file, identical_files
from r2act.evaluation.intervals import SMALL_N, newcombe_paired
from r2act.evaluation.metrics import RATE_METRICS, Estimate, MetricDef
from r2act.evaluation.predictions import PredictionFile
from r2act.evaluation.report import (
    CONVENTIONS,
    REPORT_SCHEMA_VERSION,
    SMALL_MARK,
    WarningEntry,
    glossary,
)
from r2act.evaluation.scoring import score_file
from r2act.schema import BenchmarkRecord

Outcome = Literal["won", "tied", "lost"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StratumDifference(_Model):
    """Δ_s for one stratum, with its CI and what it means for A."""

    stratum: str = Field(
        description="Stratum value (a fault type, service or system), e.g. 'dns_fault'."
    )
    delta: Estimate = Field(description="Mean paired difference A − B with its 95% CI.")
    outcome: Outcome = Field(description="won / tied / lost for A by the sign of Δ_s.")
    small_n: bool = Field(
        description=f"Fewer than {SMALL_N} incidents: Newcombe's interval, no CI claim."
    )
    ci_excludes_zero: bool | None = Field(
        description="The 95% CI lies entirely on one side of 0; None (not assessed) for a "
        "small stratum."
    )


class MetricComparison(_Model):
    """The comparison of A and B on one metric."""

    metric: str = Field(description="Metric key.")
    label: str = Field(description="Metric label.")
    higher_is_better: bool = Field(description="Direction used for won/lost and worst.")
    pooled: Estimate = Field(description="Unweighted mean of the stratum differences, with CI.")
    strata: list[StratumDifference] = Field(description="Per-stratum differences.")
    won: int = Field(description="Strata won by A.")
    tied: int = Field(description="Strata with Δ_s = 0 (point estimate; see ci_excludes_zero).")
    lost: int = Field(description="Strata lost by A.")
    worst: str = Field(description="Stratum with A's worst difference.")
    margin: float = Field(description="|pooled difference|.")
    spread: float | None = Field(description="Sample SD of the stratum differences (k >= 2).")
    summary: str = Field(description="The one-line report of the audit paper's section 7.1.")


class Side(_Model):
    """One of the two methods."""

    name: str = Field(description="Method name.")
    source: str = Field(description="Predictions file.")
    coverage: float = Field(description="Share of incidents with a usable prediction.")


class Comparison(_Model):
    """The result of ``r2act compare A B``."""

    schema_version: str = Field(default=REPORT_SCHEMA_VERSION, description="Report format.")
    dataset: str = Field(description="Dataset compared on.")
    fold: int | None = Field(description="Fold, or None for the whole dataset.")
    by: str = Field(description="Stratification: 'fault_type', 'service' or 'system'.")
    incidents: int = Field(description="Incidents compared (every one, missing scored 0).")
    seed: int = Field(description="Bootstrap seed.")
    replicates: int = Field(description="Bootstrap replicates B.")
    a: Side = Field(description="Method A.")
    b: Side = Field(description="Method B.")
    metrics: list[MetricComparison] = Field(description="One comparison per paired metric.")
    warnings: list[WarningEntry] = Field(description="Integrity warnings about the pair.")


def compare(
    records: Sequence[BenchmarkRecord],
    a: PredictionFile,
    b: PredictionFile,
    *,
    by: str = "fault_type",
    dataset: str = "",
    fold: int | None = None,
    seed: int = DEFAULT_SEED,
    replicates: int = DEFAULT_REPLICATES,
    dataset_ids: Collection[str] | None = None,
) -> Comparison:
    """Paired per-stratum differences A − B on every rate metric (see module doc).

    ``dataset_ids`` is every id of the dataset when ``records`` is one fold, so ids of other
    folds are not reported as unknown. Each file's integrity warnings (unknown, missing,
    duplicate ids, constant answers) are in ``warnings``, prefixed with its method name.
    """
    if not records:
        raise ValueError("compare needs at least one incident")
    a, b = resolve_ids(a, records), resolve_ids(b, records)  # case ids -> incident ids
    table_a, table_b = score_file(records, a), score_file(records, b)
    keys = [m.key for m in RATE_METRICS]
    strata = _paired_strata(
        table_a.matrix(keys),
        table_b.matrix(keys),
        strata_of(records, by),
        by=by,
        seed=seed,
        replicates=replicates,
    )
    name_a, name_b = unique_names([a.method, b.method])
    sides = [
        Side(name=name, source=f.source, coverage=float(t.columns["covered"].mean()))
        for name, f, t in ((name_a, a, table_a), (name_b, b, table_b))
    ]
    where = (dataset or "records given") + ("" if fold is None else f" fold {fold}")
    context = (
        f"coverage {sides[0].coverage:.2f} vs {sides[1].coverage:.2f} · {where} · "
        "invalid outputs scored 0"
    )
    metrics = [
        _metric_comparison(metric, by, strata.estimates(j, metric), strata.pooled(j), context)
        for j, metric in enumerate(RATE_METRICS)
    ]
    return Comparison(
        dataset=dataset,
        fold=fold,
        by=by,
        incidents=len(records),
        seed=seed,
        replicates=replicates,
        a=sides[0],
        b=sides[1],
        metrics=metrics,
        warnings=_warnings(records, (a, b), (name_a, name_b), dataset_ids, by),
    )


def _warnings(
    records: Sequence[BenchmarkRecord],
    files: tuple[PredictionFile, PredictionFile],
    names: Sequence[str],
    dataset_ids: Collection[str] | None,
    by: str = "fault_type",
) -> list[WarningEntry]:
    population = [r.incident_id for r in records]
    known = set(dataset_ids) if dataset_ids is not None else set(population)
    entries = [
        WarningEntry(code=w.code, message=f"{name}: {w.message}")
        for name, file in zip(names, files, strict=True)
        for w in check_file(file, population, known)
        if w.code != "bad_lines"  # the command line reports parse issues per file itself
    ]
    systems = sorted({r.metadata.system for r in records})
    if len(systems) > 1 and by != "system":
        entries.append(
            WarningEntry(
                code="pooled_systems",
                message=f"the strata pool {len(systems)} systems ({', '.join(systems)}); "
                "compare with --by system to see each",
            )
        )
    entries += [
        WarningEntry(code=w.code, message=w.message)
        for w in identical_files(list(files), population)
    ]
    return entries


@dataclass(frozen=True)
class _Strata:
    """Per-stratum point differences, their bounds and the pooled replicates, (k, m) each."""

    names: list[str]
    sizes: list[int]
    points: FloatArray
    lows: FloatArray
    highs: FloatArray
    pooled_replicates: FloatArray

    def estimates(self, j: int, metric: MetricDef) -> list[StratumDifference]:
        out = []
        for s, name in enumerate(self.names):
            small = self.sizes[s] < SMALL_N
            low, high = float(self.lows[s, j]), float(self.highs[s, j])
            out.append(
                StratumDifference(
                    stratum=name,
                    delta=Estimate(
                        value=float(self.points[s, j]),
                        ci_low=low,
                        ci_high=high,
                        n=self.sizes[s],
                        interval="newcombe" if small else "bootstrap",
                    ),
                    outcome=_outcome(float(self.points[s, j]), metric),
                    small_n=small,
                    ci_excludes_zero=None if small else bool(low > 0 or high < 0),
                )
            )
        return out

    def pooled(self, j: int) -> Estimate:
        low, high = percentile_interval(self.pooled_replicates[:, j]) or (None, None)
        return Estimate(
            value=round(float(self.points[:, j].mean()), 12) + 0.0,
            ci_low=low,
            ci_high=high,
            n=sum(self.sizes),
        )


def _paired_strata(
    a: FloatArray,
    b: FloatArray,
    groups: dict[str, list[int]],
    *,
    by: str,
    seed: int,
    replicates: int,
) -> _Strata:
    """Resample incidents within each stratum (pairs stay together) and pool replicates.

    A small stratum still contributes its replicates to the pooled interval (every incident
    counts there), but its own bounds are Newcombe's.
    """
    diff = a - b
    points, lows, highs, reps = [], [], [], []
    for value, rows in groups.items():
        counts = resample_counts(len(rows), replicates, generator(seed, f"{by}:{value}"))
        stratum_reps = replicate_means(counts, diff[rows])
        if len(rows) < SMALL_N:
            low, high = _newcombe_bounds(a[rows], b[rows])
        else:
            low, high = percentile_intervals(stratum_reps)
        # Rounded so that equal sums give exactly 0 (a tie), never a float-noise sign.
        points.append(np.round(diff[rows].mean(axis=0), 12) + 0.0)
        lows.append(low)
        highs.append(high)
        reps.append(stratum_reps)
    return _Strata(
        names=list(groups),
        sizes=[len(rows) for rows in groups.values()],
        points=np.stack(points),
        lows=np.stack(lows),
        highs=np.stack(highs),
        pooled_replicates=np.mean(np.stack(reps), axis=0),
    )


def _newcombe_bounds(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per column of paired 0/1 indicators (rows = incidents), Newcombe's bounds of A − B."""
    bounds = []
    for j in range(a.shape[1]):
        x, y = a[:, j] > 0.5, b[:, j] > 0.5
        counts = (x & y).sum(), (x & ~y).sum(), (~x & y).sum(), (~x & ~y).sum()
        bounds.append(newcombe_paired(*(int(c) for c in counts)) or (np.nan, np.nan))
    array = np.array(bounds, dtype=np.float64).reshape(-1, 2)
    return array[:, 0], array[:, 1]


def _outcome(delta: float, metric: MetricDef) -> Outcome:
    better = delta if metric.higher_is_better else -delta
    if better > 0:
        return "won"
    if better < 0:
        return "lost"
    return "tied"


def _metric_comparison(
    metric: MetricDef,
    by: str,
    strata: list[StratumDifference],
    pooled: Estimate,
    context: str,
) -> MetricComparison:
    sign = 1.0 if metric.higher_is_better else -1.0
    worst = min(strata, key=lambda s: sign * (s.delta.value or 0.0))
    deltas = [s.delta.value or 0.0 for s in strata]
    outcomes = Counter(s.outcome for s in strata)
    won, tied, lost = outcomes["won"], outcomes["tied"], outcomes["lost"]
    summary = (
        f"{metric.label} by {by}: {signed(pooled)} · {won}/{tied}/{lost} of {len(strata)} · "
        f"worst {worst.stratum} {signed(worst.delta)} · {context}"
    )
    return MetricComparison(
        metric=metric.key,
        label=metric.label,
        higher_is_better=metric.higher_is_better,
        pooled=pooled,
        strata=strata,
        won=won,
        tied=tied,
        lost=lost,
        worst=worst.stratum,
        margin=abs(pooled.value or 0.0),
        spread=float(np.std(deltas, ddof=1)) if len(deltas) >= 2 else None,
        summary=summary,
    )


def signed(estimate: Estimate) -> str:
    """'+0.135 [-0.041, +0.300]' ('†' after a score interval), or '—' when undefined."""
    if estimate.value is None or estimate.ci_low is None or estimate.ci_high is None:
        return "—"
    mark = SMALL_MARK if estimate.interval != "bootstrap" else ""
    return f"{estimate.value:+.3f} [{estimate.ci_low:+.3f}, {estimate.ci_high:+.3f}]{mark}"


def claim(stratum: StratumDifference) -> str:
    """The 'CI excludes 0' cell: yes, no, or why it is not assessed."""
    if stratum.ci_excludes_zero is None:
        return f"not assessed (n < {SMALL_N})"
    return "yes" if stratum.ci_excludes_zero else "no"


def comparison_markdown(comparison: Comparison) -> str:
    """The comparison as Markdown: the summary lines and one per-stratum table per metric."""
    out = [
        f"# {comparison.a.name} vs {comparison.b.name} by {comparison.by}",
        "",
        f"{comparison.incidents} incidents of `{comparison.dataset}`; Δ = A − B; 95% "
        f"percentile-bootstrap CIs within strata (B = {comparison.replicates}, seed "
        f"{comparison.seed}); pooled = unweighted mean over strata.",
        "",
    ]
    out += [f"- {m.summary}" for m in comparison.metrics]
    for m in comparison.metrics:
        spread = "—" if m.spread is None else f"{m.spread:.3f}"
        out += ["", f"## {m.label}: margin {m.margin:.3f}, spread {spread}", ""]
        out += ["| Stratum | n | Δ [95% CI] | Outcome | CI excludes 0 |", "|---|---|---|---|---|"]
        out += [
            f"| {s.stratum} | {s.delta.n} | {signed(s.delta)} | {s.outcome} | {claim(s)} |"
            for s in m.strata
        ]
    out += [f"- **{w.code}**: {w.message}" for w in comparison.warnings]
    out += ["", "## Metric glossary", "", *comparison_glossary()]
    return "\n".join(out) + "\n"


def comparison_glossary() -> list[str]:
    """The glossary of the compared metrics, and what Δ, pooled, won/tied/lost mean."""
    lines = glossary(RATE_METRICS)[: len(RATE_METRICS)]
    return [*lines, "", *COMPARISON_CONVENTIONS, "", *CONVENTIONS]


COMPARISON_CONVENTIONS = [
    "Δ = A − B on the same incidents (pairs are resampled together), per stratum; the "
    "pooled Δ is the unweighted mean over strata, so each stratum counts once. A stratum "
    "is won, tied or lost by the sign of its Δ on A's better side; margin = |pooled Δ|, "
    "spread = the standard deviation of the stratum Δs. VC and EC are not compared: each "
    "conditions on its own method's correct diagnoses, so there are no pairs.",
]
