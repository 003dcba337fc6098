"""The metrics, defined once, and their estimates with 95% bootstrap intervals.

Let N be the evaluated incidents (every incident of the dataset or fold, see
:mod:`r2act.evaluation.scoring`), p_i the prediction for incident i (possibly missing) and
P+_i, A_i, g_i its valid plan patterns, action space and gold plan. Then:

- **RCA-S** = (1/N) Σ 1[predicted service = root-cause service].
- **RCA-T** = (1/N) Σ 1[predicted fault type = root-cause fault type].
- **Action Hit** = (1/N) Σ 1[p_i is a typed plan whose operation is the operation of some
  pattern in P+_i].
- **Target Hit** = (1/N) Σ 1[p_i's target is a target of some pattern in P+_i].
- **Exact Match** = (1/N) Σ 1[operation(p_i) = operation(g_i) and target(p_i) = target(g_i)];
  other fields (replicas, scope, ...) are not compared, as in the paper.
- **Recovery Validity** = (1/N) Σ valid(p_i), valid(p) = p ∈ P+ ∧ p ∉ P- ∧ p ∈ A
  (``r2act.actions.is_valid``).
- **No-op rate** = (1/N) Σ 1[no executable action: missing, null/absent, ``no_action`` or
  unparsable plan]. Lower is better.
- **Pr(C)** = (1/N) Σ 1[C_i], C_i = both service and fault type right.
- **VC** = Pr(V | C) = Σ 1[valid_i ∧ C_i] / Σ 1[C_i]; undefined (None) when no incident is
  correctly diagnosed. Its n is Σ 1[C_i], the conditioning population.
- **EC** = 1 − VC: invalid plans among correctly diagnosed incidents. Lower is better.
- **Coverage** = (1/N) Σ 1[a usable line exists for incident i].

Every estimate carries a 95% percentile-bootstrap interval over incidents. For VC and EC the
ratio is recomputed inside each replicate; replicates that drew no C incident are undefined,
excluded from the percentiles and counted in ``undefined_replicates``. An estimate over fewer
than :data:`~r2act.evaluation.intervals.SMALL_N` incidents (a small stratum, or VC with few
correct diagnoses) gets the Wilson score interval instead, which does not collapse to a
point (:mod:`r2act.evaluation.intervals`).

The definitions a reader needs (the paper's, in this tool's terms) live on the
:class:`MetricDef` of each metric and are rendered as the glossary of the Markdown reports
and of the README, so there is one text to keep right.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from r2act.evaluation.bootstrap import CountArray, percentile_intervals, ratio, replicate_sums
from r2act.evaluation.intervals import SMALL_N, IntervalMethod, wilson
from r2act.evaluation.scoring import ScoreTable


@dataclass(frozen=True)
class MetricDef:
    """One reported metric: its key, table label, direction, name and definition."""

    key: str
    label: str
    name: str
    definition: str
    higher_is_better: bool = True


RATE_METRICS = (
    MetricDef(
        "rca_s",
        "RCA-S",
        "RCA-Service accuracy",
        "Share of incidents whose predicted root-cause service is the labelled one.",
    ),
    MetricDef(
        "rca_t",
        "RCA-T",
        "RCA-Type accuracy",
        "Share of incidents whose predicted fault type is the labelled one.",
    ),
    MetricDef(
        "action_hit",
        "Action",
        "Action Hit",
        "Share of incidents whose predicted operation is the operation of one of the "
        "incident's valid plans.",
    ),
    MetricDef(
        "target_hit",
        "Target",
        "Target Hit",
        "Share of incidents whose predicted target service is a target of one of the "
        "incident's valid plans.",
    ),
    MetricDef(
        "exact",
        "Exact",
        "Exact Match",
        "Share of incidents whose predicted operation and target both equal those of the "
        "gold plan (other fields, such as replicas or scope, are not compared).",
    ),
    MetricDef(
        "valid",
        "Valid",
        "Recovery Validity",
        "Share of incidents whose predicted plan belongs to the incident's valid plan set "
        "P+, is not in its invalid plan set P-, and lies inside its action space A.",
    ),
    MetricDef(
        "no_op",
        "No-op",
        "No-op Rate",
        "Share of incidents with no executable action: no prediction, no plan, the "
        "no_action operation, or a plan that does not parse. Lower is better.",
        higher_is_better=False,
    ),
    MetricDef(
        "correct_rca",
        "Pr(C)",
        "Correct diagnosis",
        "Share of incidents where both the root-cause service and the fault type are "
        "right; C denotes that event.",
    ),
)
"""Metrics that are a mean of a per-incident indicator (the column of the same key)."""

CONDITIONAL_METRICS = (
    MetricDef(
        "vc",
        "VC",
        "Conditional action validity, Pr(V | C)",
        "Among the correctly diagnosed incidents (C), the share whose plan is valid (V); "
        "undefined when no incident is correctly diagnosed. Its n is the number of C "
        "incidents.",
    ),
    MetricDef(
        "ec",
        "EC",
        "Invalid-action rate after correct diagnosis, Pr(not V | C) = 1 - VC",
        "Among the correctly diagnosed incidents, the share whose plan is not valid: the "
        "recovery-decision errors left once diagnosis is right. Lower is better.",
        higher_is_better=False,
    ),
)
"""Metrics conditioned on correct diagnosis, C."""

COVERAGE = MetricDef(
    "covered",
    "Coverage",
    "Coverage",
    "Share of incidents with a usable prediction line (the others score 0 on every "
    "metric and count as no-ops).",
)

METRICS = (*RATE_METRICS, *CONDITIONAL_METRICS)
"""Every metric in report order."""

LABELS = {m.key: m.label for m in (*METRICS, COVERAGE)}


class Estimate(BaseModel):
    """A point estimate with its 95% percentile-bootstrap interval."""

    model_config = ConfigDict(frozen=True)

    value: float | None = Field(description="Point estimate; None when undefined.")
    ci_low: float | None = Field(description="Lower bound of the 95% interval.")
    ci_high: float | None = Field(description="Upper bound of the 95% interval.")
    n: int = Field(description="Incidents the estimate is a mean over.")
    undefined_replicates: int = Field(
        default=0, description="Bootstrap replicates where the metric was undefined (VC, EC)."
    )
    interval: IntervalMethod = Field(
        default="bootstrap",
        description=(
            f"How the interval was made: 'bootstrap' (percentile, over incidents), or a score "
            f"interval when n < {SMALL_N}: 'wilson' for a proportion, 'newcombe' for a paired "
            "difference."
        ),
    )


def estimate(table: ScoreTable, counts: CountArray) -> dict[str, Estimate]:
    """Every metric of ``table`` with intervals from the shared resampling ``counts``.

    One matrix product gives every replicate sum: the rate columns, plus valid-and-correct
    for the numerator of VC (its denominator is the correct_rca column).
    """
    keys = [m.key for m in RATE_METRICS] + [COVERAGE.key]
    correct = table.columns["correct_rca"]
    valid_and_correct = table.columns["valid"] * correct
    values = np.column_stack([table.matrix(keys), valid_and_correct])
    n = len(table)
    sums = replicate_sums(counts, values)
    vc_reps = ratio(sums[:, -1], sums[:, keys.index("correct_rca")])
    reps = np.column_stack([sums[:, :-1] / max(n, 1), vc_reps, 1 - vc_reps])
    low, high = percentile_intervals(reps)
    out: dict[str, Estimate] = {}
    for j, key in enumerate(keys):
        hits = int(values[:, j].sum())
        point = hits / n if n else None
        out[key] = _estimate(point, low[j], high[j], n, hits=hits)
    undefined = int(np.isnan(vc_reps).sum())
    n_c = int(correct.sum())
    valid_c = int(valid_and_correct.sum())
    vc = valid_c / n_c if n_c else None
    k = len(keys)
    out["vc"] = _estimate(vc, low[k], high[k], n_c, undefined, hits=valid_c)
    ec = None if vc is None else 1 - vc
    out["ec"] = _estimate(ec, low[k + 1], high[k + 1], n_c, undefined, hits=n_c - valid_c)
    return out


def _estimate(
    value: float | None, low: float, high: float, n: int, undefined: int = 0, *, hits: int
) -> Estimate:
    """The bootstrap bounds, or Wilson's for ``hits`` of ``n`` when n is below SMALL_N."""
    if value is not None and 0 < n < SMALL_N:
        low, high = wilson(hits, n) or (np.nan, np.nan)
        return Estimate(
            value=value,
            ci_low=low,
            ci_high=high,
            n=n,
            undefined_replicates=undefined,
            interval="wilson",
        )
    if value is None or np.isnan(low):
        return Estimate(value=value, ci_low=None, ci_high=None, n=n, undefined_replicates=undefined)
    return Estimate(
        value=value, ci_low=float(low), ci_high=float(high), n=n, undefined_replicates=undefined
    )
