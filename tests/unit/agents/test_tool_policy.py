"""The tools expose what a correct decision needs: a scripted method that reads only tool
answers recovers (valid plan under the dataset's policy) at least 95% of a sampled
simulated dataset: one incident per realizable cell and intensity of the paper campaign.
"""

from __future__ import annotations

from pathlib import Path

from scripted_policy import decide

from r2act import evaluation
from r2act.agents import CaseEnvironment, CaseInputs, CaseSource, run_cases
from r2act.agents.answers import validate_answer
from r2act.agents.outcome import CaseResult
from r2act.agents.trajectory import Agent, Trajectory
from r2act.datasets import load_records
from r2act.evaluation.evaluate import resolve_ids


class ToolPolicy:
    """The scripted policy as a runner solver (it sees a CaseEnvironment, nothing else)."""

    method = "scripted-tool-policy"

    def solve(self, case: CaseInputs) -> CaseResult:
        decision = decide(CaseEnvironment(case))
        answer, why = validate_answer(
            {
                "rca": {"service": decision.service, "fault_type": decision.fault_type},
                "plan": decision.plan,
                "evidence": decision.why,
            }
        )
        assert answer is not None, why
        trajectory = Trajectory(session_id=case.case_id, agent=Agent(name=self.method, version="1"))
        trajectory.finish({"outcome": "answered", "failure": None})
        return CaseResult.of(case.case_id, self.method, answer, None, trajectory)


def test_a_tool_only_policy_recovers_the_sampled_dataset(
    sample_dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "policy.jsonl"
    report = run_cases(CaseSource(sample_dataset, "full"), ToolPolicy(), out)
    records = load_records(sample_dataset)
    assert report.written == len(records) >= 40
    predictions = resolve_ids(evaluation.read_predictions(out), records)  # case -> incident id
    scored = evaluation.score_file(records, predictions)
    misses = [
        f"{s.incident_id} ({s.fault_type} on {s.service}): {s.error}"
        for s in scored.scores
        if not s.valid
    ]
    validity = 1 - len(misses) / len(records)
    assert validity >= 0.95, "\n".join(misses)
    rca = sum(s.correct_rca for s in scored.scores) / len(records)
    assert rca >= 0.9, rca
