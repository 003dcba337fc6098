"""Summaries of a replay: per-fault-type rates, validity/recovery agreement, label findings.

The 2x2 agreement of offline validity with live recovery is the point of replaying: where
they disagree, either the labels are too strict (invalid but recovered) or too loose (valid
but not recovered), and the report lists those incidents for a human to look at.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from pydantic import BaseModel, ConfigDict, Field, computed_field

from r2act.replay.outcomes import ReplayOutcome

REPORT_SCHEMA_VERSION = "1.0"


class FaultTypeRow(BaseModel):
    """One row of the per-fault-type table (the paper's Table VIII)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fault_type: str = Field(description="Fault type, or 'all'.")
    planned: int = Field(description="Predictions replayed (executed or refused).")
    offline_valid: int = Field(description="Of those, offline-valid.")
    executed: int = Field(description="Plans actually applied to the cluster.")
    recovered: int = Field(description="Executed plans that recovered within the window.")
    gated_recovered: int = Field(description="Offline-valid and recovered.")
    no_effect: int = Field(
        default=0, description="Not judged: the fault left the system healthy (not in planned)."
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gated_rate(self) -> float:
        """Validity-gated recovered over planned (0 when nothing was planned)."""
        return self.gated_recovered / self.planned if self.planned else 0.0


class Agreement(BaseModel):
    """Offline validity against live recovery, counted over executed plans only.

    A refused plan never ran, so live recovery says nothing about it: counting it as
    "invalid and not recovered" would inflate the agreement with cases nobody tested.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    valid_recovered: int = Field(description="Offline-valid and recovered: agreement.")
    valid_not_recovered: int = Field(description="Offline-valid but not recovered: too loose?")
    invalid_recovered: int = Field(description="Offline-invalid but recovered: too strict?")
    invalid_not_recovered: int = Field(description="Offline-invalid, not recovered: agreement.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def agreement_rate(self) -> float:
        """Share of predictions where offline validity and live recovery agree."""
        total = (
            self.valid_recovered
            + self.valid_not_recovered
            + self.invalid_recovered
            + self.invalid_not_recovered
        )
        agree = self.valid_recovered + self.invalid_not_recovered
        return agree / total if total else 0.0


class Finding(BaseModel):
    """An incident where offline validity and live recovery disagree."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    incident_id: str = Field(description="Incident.")
    kind: str = Field(
        description="'valid_not_recovered', 'invalid_recovered' or 'no_health_effect'."
    )
    plan: str = Field(description="The plan, compactly.")


class ReplayReport(BaseModel):
    """Everything ``report.json`` holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: str = Field(default=REPORT_SCHEMA_VERSION, description="Report version.")
    rows: list[FaultTypeRow] = Field(description="Per fault type, then 'all'.")
    agreement: Agreement = Field(description="Offline validity vs live recovery.")
    findings: list[Finding] = Field(description="Disagreeing incidents.")
    refused: int = Field(description="Predictions refused before touching the cluster.")
    errors: int = Field(description="Predictions whose replay failed for cluster reasons.")
    no_effect: int = Field(
        default=0, description="Predictions not judged because the fault left the system healthy."
    )
    ttr_median_s: float | None = Field(description="Median time to recover of recovered cases.")
    ttr_max_s: float | None = Field(description="Longest time to recover.")
    ttr_values_s: list[float] = Field(description="Every time to recover, ascending.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ttr_quantiles_s(self) -> dict[str, float]:
        """Time-to-recover distribution: min, p25, median, p75, p90, max (empty: none)."""
        return ttr_quantiles(self.ttr_values_s)


def ttr_quantiles(values: Sequence[float]) -> dict[str, float]:
    """Nearest-rank quantiles of ascending ``values`` (no interpolation: observed times)."""
    if not values:
        return {}
    points = {"min": 0.0, "p25": 0.25, "median": 0.5, "p75": 0.75, "p90": 0.9, "max": 1.0}
    last = len(values) - 1
    return {name: float(values[round(q * last)]) for name, q in points.items()}


def _plan_text(outcome: ReplayOutcome) -> str:
    plan = outcome.plan
    if not isinstance(plan, dict):
        return "null"
    fields = ", ".join(f"{k}={v}" for k, v in plan.items() if k != "operation")
    return f"{plan.get('operation')}({fields})"


def _row(
    name: str, outcomes: Sequence[ReplayOutcome], no_effect: Sequence[ReplayOutcome]
) -> FaultTypeRow:
    return FaultTypeRow(
        fault_type=name,
        no_effect=len(no_effect),
        planned=len(outcomes),
        offline_valid=sum(o.offline_valid for o in outcomes),
        executed=sum(o.status == "executed" for o in outcomes),
        recovered=sum(o.recovered for o in outcomes),
        gated_recovered=sum(o.gated_recovered for o in outcomes),
    )


def summarize(outcomes: Sequence[ReplayOutcome]) -> ReplayReport:
    """Build the report from the outcomes of one replay run (errors are excluded from rates)."""
    scored = [o for o in outcomes if o.status not in ("error", "no_effect")]
    unjudged = [o for o in outcomes if o.status == "no_effect"]
    by_type: dict[str, list[ReplayOutcome]] = {}
    for outcome in scored:
        by_type.setdefault(outcome.fault_type, []).append(outcome)
    quiet: dict[str, list[ReplayOutcome]] = {}
    for outcome in unjudged:
        quiet.setdefault(outcome.fault_type, []).append(outcome)
    rows = [
        _row(name, by_type.get(name, []), quiet.get(name, []))
        for name in sorted(set(by_type) | set(quiet))
    ]
    rows.append(_row("all", scored, unjudged))
    findings = [
        Finding(
            incident_id=o.incident_id,
            kind="valid_not_recovered" if o.offline_valid else "invalid_recovered",
            plan=_plan_text(o),
        )
        for o in scored
        if o.offline_valid != o.recovered
    ] + [
        Finding(incident_id=o.incident_id, kind="no_health_effect", plan=_plan_text(o))
        for o in unjudged
    ]
    ttrs = sorted(o.time_to_recover_s for o in scored if o.time_to_recover_s is not None)
    executed = [o for o in scored if o.status == "executed"]
    return ReplayReport(
        rows=rows,
        agreement=Agreement(
            valid_recovered=sum(o.offline_valid and o.recovered for o in executed),
            valid_not_recovered=sum(o.offline_valid and not o.recovered for o in executed),
            invalid_recovered=sum(not o.offline_valid and o.recovered for o in executed),
            invalid_not_recovered=sum(not o.offline_valid and not o.recovered for o in executed),
        ),
        findings=findings,
        refused=sum(o.status == "refused" for o in outcomes),
        errors=sum(o.status == "error" for o in outcomes),
        no_effect=len(unjudged),
        ttr_median_s=median(ttrs) if ttrs else None,
        ttr_max_s=ttrs[-1] if ttrs else None,
        ttr_values_s=ttrs,
    )


def ttr_text(report: ReplayReport) -> str:
    """'n = 147 recovered; min 0.0 s, p25 5.0 s, median 10.0 s, ...'."""
    parts = ", ".join(f"{k} {v:.1f} s" for k, v in report.ttr_quantiles_s.items())
    return f"n = {len(report.ttr_values_s)} recovered; {parts}"


def to_markdown(report: ReplayReport) -> str:
    """The report as Markdown: the per-type table, the agreement matrix and the findings."""
    lines = [
        "# Replay report",
        "",
        "| fault type | planned | offline-valid | executed | recovered | gated recovered "
        "| gated rate | not judged (no effect) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report.rows:
        lines.append(
            f"| {row.fault_type} | {row.planned} | {row.offline_valid} | {row.executed} | "
            f"{row.recovered} | {row.gated_recovered} | {row.gated_rate:.3f} | {row.no_effect} |"
        )
    a = report.agreement
    lines += [
        "",
        "## Offline validity vs live recovery",
        "",
        "Executed plans only (refused plans never ran).",
        "",
        "| | recovered | not recovered |",
        "|---|---:|---:|",
        f"| offline-valid | {a.valid_recovered} | {a.valid_not_recovered} |",
        f"| offline-invalid | {a.invalid_recovered} | {a.invalid_not_recovered} |",
        "",
        f"Agreement: {a.agreement_rate:.3f}. Refused: {report.refused}. "
        f"Not judged (fault without health effect): {report.no_effect}. Errors: {report.errors}.",
    ]
    if report.ttr_values_s:
        lines.append(f"Time to recover: {ttr_text(report)}.")
    lines += ["", "## Label findings", ""]
    if not report.findings:
        lines.append("None: offline validity and live recovery agree on every incident.")
    for finding in report.findings:
        lines.append(f"- `{finding.incident_id}` {finding.kind}: `{finding.plan}`")
    return "\n".join(lines) + "\n"
