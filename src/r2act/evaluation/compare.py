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
from r2act.evaluation.metrics import RATE_METRICS, Estimate, MetricDef
from r2act.evaluation.predictions import PredictionFile
from r2act.evaluation.report import REPORT_SCHEMA_VERSION, WarningEntry
from r2act.evaluation.scoring import score_file
from r2act.schema import BenchmarkRecord

Outcome = Literal["won", "tied", "lost"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StratumDifference(_Model):
    """Δ_s for one stratum, with its CI and what it means for A."""

    stratum: str = Field(description="Stratum value, e.g. 'dns_fault' or 'cartservice'.")
    delta: Estimate = Field(description="Mean paired difference A − B with its 95% CI.")
    outcome: Outcome = Field(description="won / tied / lost for A by the sign of Δ_s.")
    ci_excludes_zero: bool = Field(description="The 95% CI lies entirely on one side of 0.")


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
    by: str = Field(description="Stratification: 'fault_type' or 'service'.")
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
        table_a.matrix(keys) - table_b.matrix(keys), strata_of(records, by), by, seed, replicates
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
        warnings=_warnings(records, (a, b), (name_a, name_b), dataset_ids),
    )


def _warnings(
    records: Sequence[BenchmarkRecord],
    files: tuple[PredictionFile, PredictionFile],
    names: Sequence[str],
    dataset_ids: Collection[str] | None,
) -> list[WarningEntry]:
    population = [r.incident_id for r in records]
    known = set(dataset_ids) if dataset_ids is not None else set(population)
    entries = [
        WarningEntry(code=w.code, message=f"{name}: {w.message}")
        for name, file in zip(names, files, strict=True)
        for w in check_file(file, population, known)
        if w.code != "bad_lines"  # the command line reports parse issues per file itself
    ]
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
        return [
            StratumDifference(
                stratum=name,
                delta=Estimate(
                    value=float(self.points[s, j]),
                    ci_low=float(self.lows[s, j]),
                    ci_high=float(self.highs[s, j]),
                    n=self.sizes[s],
                ),
                outcome=_outcome(float(self.points[s, j]), metric),
                ci_excludes_zero=bool(self.lows[s, j] > 0 or self.highs[s, j] < 0),
            )
            for s, name in enumerate(self.names)
        ]

    def pooled(self, j: int) -> Estimate:
        low, high = percentile_interval(self.pooled_replicates[:, j]) or (None, None)
        return Estimate(
            value=round(float(self.points[:, j].mean()), 12) + 0.0,
            ci_low=low,
            ci_high=high,
            n=sum(self.sizes),
        )


def _paired_strata(
    diff: FloatArray, groups: dict[str, list[int]], by: str, seed: int, replicates: int
) -> _Strata:
    """Resample incidents within each stratum (pairs stay together) and pool replicates."""
    points, lows, highs, reps = [], [], [], []
    for value, rows in groups.items():
        counts = resample_counts(len(rows), replicates, generator(seed, f"{by}:{value}"))
        stratum_reps = replicate_means(counts, diff[rows])
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
    """'+0.135 [-0.041, +0.300]', or '—' when undefined."""
    if estimate.value is None or estimate.ci_low is None or estimate.ci_high is None:
        return "—"
    return f"{estimate.value:+.3f} [{estimate.ci_low:+.3f}, {estimate.ci_high:+.3f}]"


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
            f"| {s.stratum} | {s.delta.n} | {signed(s.delta)} | {s.outcome} | "
            f"{'yes' if s.ci_excludes_zero else 'no'} |"
            for s in m.strata
        ]
    out += [f"- **{w.code}**: {w.message}" for w in comparison.warnings]
    return "\n".join(out) + "\n"
