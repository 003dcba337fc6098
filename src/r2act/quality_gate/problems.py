"""Problems, severities, groups and the per-incident verdict the audit writes.

A check never raises and never decides a group on its own: it returns Problems. The group
follows from the worst severity, so a reader can always see *every* reason an incident was
held back, not just the first one found (the SWE-bench ``checks.py`` idea).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from r2act.schema import FaultType, Intensity


class Severity(StrEnum):
    """How bad a problem is: ``error`` fails the incident, ``warning`` parks it."""

    ERROR = "error"
    WARNING = "warning"


class Group(StrEnum):
    """Where the audit puts an incident; exactly one per incident."""

    MAIN = "main"
    WARNING = "warning"
    FAILED = "failed"
    PILOT = "pilot"
    SPARE = "spare"
    """Passed every check, but its cell already had its quota of main incidents."""


class Problem(BaseModel):
    """One finding of a check (or of dataset validation)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str = Field(description="Stable machine-readable reason, e.g. 'INJECTION_FAILED'.")
    severity: Severity = Field(description="'error' fails the incident; 'warning' parks it.")
    message: str = Field(description="One sentence for a human reader.")
    evidence: dict[str, JsonValue] = Field(
        default_factory=dict, description="The facts the finding rests on (paths, counts...)."
    )
    where: str = Field(default="", description="Phase, file or incident the problem is about.")

    def line(self) -> str:
        """The problem as one printable line."""
        where = f"{self.where}: " if self.where else ""
        return f"{where}{self.code}: {self.message}"


def error(code: str, message: str, where: str = "", **evidence: Any) -> Problem:
    """Shorthand for an error-severity Problem."""
    return Problem(
        code=code, severity=Severity.ERROR, message=message, where=where, evidence=evidence
    )


def warning(code: str, message: str, where: str = "", **evidence: Any) -> Problem:
    """Shorthand for a warning-severity Problem."""
    return Problem(
        code=code, severity=Severity.WARNING, message=message, where=where, evidence=evidence
    )


def group_for(problems: Iterable[Problem], pilot: bool) -> Group:
    """failed > warning > pilot > main: the most serious finding decides.

    A pilot incident that also broke is reported as failed (its reasons are more telling
    than its campaign flag); a clean pilot incident is still kept out of the main set.
    """
    severities = {p.severity for p in problems}
    if Severity.ERROR in severities:
        return Group.FAILED
    if Severity.WARNING in severities:
        return Group.WARNING
    return Group.PILOT if pilot else Group.MAIN


class Verdict(BaseModel):
    """The audit's decision on one raw incident: one line of ``audit/audit.jsonl``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    incident_id: str = Field(description="Incident id (the raw directory name).")
    group: Group = Field(description="main, warning, failed, pilot or spare.")
    problems: list[Problem] = Field(description="Every problem found, errors first.")
    campaign: str | None = Field(default=None, description="Campaign name, if known.")
    service: str | None = Field(default=None, description="Root-cause service, if known.")
    fault_type: FaultType | None = Field(default=None, description="Fault type, if known.")
    intensity: Intensity | None = Field(default=None, description="Intensity, if known.")
    repetition: int | None = Field(default=None, description="Repetition, if known.")
    quota: int | None = Field(
        default=None, description="Main incidents its cell wanted (None: no quota)."
    )
    policy: str | None = Field(
        default=None, description="Recovery policy its record was labelled under, if any."
    )
    pilot: bool = Field(default=False, description="The campaign was a pilot.")
    log_records: int = Field(default=0, ge=0, description="Log records over all phases read.")
    schema_version: Literal["1.0"] = Field(default="1.0", description="Verdict format version.")

    @property
    def reasons(self) -> list[str]:
        """Distinct problem codes, in order of appearance."""
        return list(dict.fromkeys(p.code for p in self.problems))
