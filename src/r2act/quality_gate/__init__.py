"""Quality gate: checks over raw incidents that return Problems, grouping, record building.

Reads files only; never imports the cluster package. ``run_audit`` reads ``RUN/raw`` and
writes ``RUN/audit`` (verdicts, records of main incidents, report). The dataset builder
reuses the raw readers and the provenance split from here, so the line between
method-visible data and ground truth is drawn in one place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from r2act._lazy import exports

if TYPE_CHECKING:
    from r2act.quality_gate.audit import (
        AUDIT_DIR,
        AUDIT_JSONL,
        RECORDS_DIR,
        REPORT_MD,
        STAGED_LOGS_DIR,
        AuditResult,
        audit_incident,
        read_verdicts,
        run_audit,
    )
    from r2act.quality_gate.checks import CHECKS, effect_signals, run_checks
    from r2act.quality_gate.evidence import IncidentEvidence, PhaseEvidence, gather
    from r2act.quality_gate.problems import Group, Problem, Severity, Verdict, group_for
    from r2act.quality_gate.provenance import is_provenance_event, leak_terms
    from r2act.quality_gate.records import MECHANISM, build_record, planned_record, record_for
    from r2act.quality_gate.runs import resolve_run_dir
    from r2act.quality_gate.verdict import is_clean, judge

__getattr__ = exports(
    __name__,
    {
        **dict.fromkeys(
            (
                "AUDIT_DIR",
                "AUDIT_JSONL",
                "RECORDS_DIR",
                "REPORT_MD",
                "STAGED_LOGS_DIR",
                "AuditResult",
                "audit_incident",
                "read_verdicts",
                "run_audit",
            ),
            "r2act.quality_gate.audit",
        ),
        **dict.fromkeys(("CHECKS", "effect_signals", "run_checks"), "r2act.quality_gate.checks"),
        **dict.fromkeys(
            ("IncidentEvidence", "PhaseEvidence", "gather"), "r2act.quality_gate.evidence"
        ),
        **dict.fromkeys(
            ("Group", "Problem", "Severity", "Verdict", "group_for"), "r2act.quality_gate.problems"
        ),
        **dict.fromkeys(("is_provenance_event", "leak_terms"), "r2act.quality_gate.provenance"),
        **dict.fromkeys(
            ("MECHANISM", "build_record", "planned_record", "record_for"),
            "r2act.quality_gate.records",
        ),
        "resolve_run_dir": "r2act.quality_gate.runs",
        **dict.fromkeys(("is_clean", "judge"), "r2act.quality_gate.verdict"),
    },
)
"""Names are imported on first use: a reader of the raw store's formats (``rawstore``, via
``datasets.layout``) does not pay for the audit, its checks and the campaigns they read."""

__all__ = [
    "AUDIT_DIR",
    "AUDIT_JSONL",
    "CHECKS",
    "MECHANISM",
    "RECORDS_DIR",
    "REPORT_MD",
    "STAGED_LOGS_DIR",
    "AuditResult",
    "Group",
    "IncidentEvidence",
    "PhaseEvidence",
    "Problem",
    "Severity",
    "Verdict",
    "audit_incident",
    "build_record",
    "effect_signals",
    "gather",
    "group_for",
    "is_clean",
    "is_provenance_event",
    "judge",
    "leak_terms",
    "planned_record",
    "read_verdicts",
    "record_for",
    "resolve_run_dir",
    "run_audit",
    "run_checks",
]
