"""Lane interference: an incident whose baseline or fault window overlaps another lane's
fault on a shared node is parked with a warning that says which, where and when."""

from __future__ import annotations

from r2act.quality_gate.interference import CODE, LaneWindows, interference
from r2act.quality_gate.problems import Severity


def lane(
    incident: str, name: str, start: float, *, nodes: tuple[str, ...] = ("n1",), cluster: str = "c"
) -> LaneWindows:
    """An incident starting at ``start``: 300 s pre, 120 s during, recovered 30 s later."""
    return LaneWindows(
        incident_id=incident,
        lane=name,
        cluster=cluster,
        nodes=frozenset(nodes),
        windows={
            "pre": (start, start + 300),
            "during": (start + 300, start + 420),
            "post": (start + 480, start + 600),
        },
        disturbance=(start + 300, start + 450),
    )


def test_a_fault_in_another_lane_on_a_shared_node_during_my_baseline_is_flagged() -> None:
    mine = lane("a", "lane-1", 0)
    other = lane("b", "lane-2", 100)  # its fault: 400..550, over my fault window 300..420
    found = interference([mine, other])
    (problem,) = found["a"]
    assert problem.code == CODE and problem.severity == Severity.WARNING
    assert problem.where == "during"
    assert "b in lane-2 on shared node n1" in problem.message
    assert problem.evidence["disturbance"] == [400.0, 550.0]
    # a's fault 300..450 overlaps both b's baseline 100..400 and b's fault window 400..520
    assert [p.where for p in found["b"]] == ["pre", "during"]


def test_no_warning_across_nodes_clusters_lanes_or_time() -> None:
    base = lane("a", "lane-1", 0)
    assert interference([base, lane("b", "lane-2", 100, nodes=("n2",))]) == {}
    assert interference([base, lane("b", "lane-2", 100, cluster="other")]) == {}
    assert interference([base, lane("b", "lane-1", 100)]) == {}  # one lane: sequential
    assert interference([base, lane("b", "lane-2", 1000)]) == {}  # after a has finished
    # an incident that never injected disturbs nobody; windows that only touch do not overlap
    never = LaneWindows("b", "lane-2", "c", frozenset({"n1"}), {"pre": (0.0, 300.0)}, None)
    assert interference([base, never]) == {}
