"""The audit report says which cells ended below their quota, so a short cell is never silent."""

from __future__ import annotations

from r2act.quality_gate.problems import Group, Verdict
from r2act.quality_gate.report import render_report, shortfalls
from r2act.schema import FaultType, Intensity


def _verdict(rep: int, group: Group, service: str = "cartservice") -> Verdict:
    return Verdict(
        incident_id=f"{service}_pod_r{rep:02d}",
        group=group,
        problems=[],
        service=service,
        fault_type=FaultType.POD_FAILURE,
        intensity=Intensity.SEVERE,
        repetition=rep,
        quota=3,
    )


def test_a_cell_that_did_not_reach_its_quota_is_listed_with_what_it_lacks() -> None:
    verdicts = [
        _verdict(1, Group.MAIN),
        _verdict(2, Group.WARNING),
        _verdict(3, Group.MAIN),
        *(_verdict(r, Group.MAIN, "frontend") for r in (1, 2, 3)),
        _verdict(4, Group.SPARE, "frontend"),
    ]
    assert shortfalls(verdicts) == {("cartservice", "pod_failure", "severe"): (2, 3)}
    report = render_report("c", verdicts)
    assert "## Cells below quota" in report
    assert "1 cells lack 1 main incidents" in report
    assert "| cartservice | pod_failure | severe | 2 | 3 |" in report


def test_full_cells_add_no_section() -> None:
    verdicts = [_verdict(r, Group.MAIN) for r in (1, 2, 3)] + [_verdict(4, Group.SPARE)]
    assert shortfalls(verdicts) == {}
    assert "below quota" not in render_report("c", verdicts)
