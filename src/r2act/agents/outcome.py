"""What solving one case yields: the prediction line to write (if any) and the trajectory."""

from __future__ import annotations

from dataclasses import dataclass

from r2act.agents.answers import FinalAnswer
from r2act.agents.trajectory import Trajectory
from r2act.schema import Prediction

METHOD_FAILURES = frozenset({"malformed_answer", "no_answer", "bad_output", "command_failed"})
"""Failures that are the method's own: an abstaining line is written and resume keeps it.
Every other failure kind is the infrastructure's: no line, so a resumed run retries."""


@dataclass(frozen=True)
class CaseResult:
    """One case's outcome."""

    case_id: str
    prediction: Prediction | None
    failure: str | None
    trajectory: Trajectory

    @classmethod
    def of(
        cls,
        case_id: str,
        method: str,
        answer: FinalAnswer | None,
        failure: str | None,
        trajectory: Trajectory,
    ) -> CaseResult:
        """The line to write: the answer; an abstention for a method failure; else none."""
        if answer is not None:
            return cls(case_id, answer.prediction(case_id, method), None, trajectory)
        line = None
        if failure in METHOD_FAILURES:
            line = Prediction(incident_id=case_id, method=method, evidence={"failure": failure})
        return cls(case_id, line, failure, trajectory)
