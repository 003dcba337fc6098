"""Pure checks on hand-made evidence: thresholds and the group precedence."""

from __future__ import annotations

import re

from r2act.quality_gate import Group, Problem, Severity, group_for
from r2act.quality_gate.checks import effect_signals
from r2act.quality_gate.evidence import (
    EventSummary,
    LogSummary,
    MetricSummary,
    PhaseEvidence,
    SeriesStats,
)
from r2act.quality_gate.provenance import is_provenance_event, leak_regex, leak_terms
from r2act.schema import KubeEvent


def _phase(
    phase: str, errors: int, series: dict[tuple[str, str], SeriesStats] | None = None
) -> PhaseEvidence:
    p = PhaseEvidence(phase=phase, present=True, window=(0.0, 100.0))  # type: ignore[arg-type]
    p.logs = LogSummary(records=1000, error_lines=errors, services=("a",))
    p.metrics = MetricSummary(
        samples=10, queries=("cpu",), holes={"cpu": 15.0}, step_s=15.0, series=series or {}
    )
    return p


def test_error_rate_must_rise_clearly_above_baseline_to_count_as_effect() -> None:
    assert effect_signals(_phase("pre", 10), _phase("during", 15)) == []
    assert effect_signals(_phase("pre", 10), _phase("during", 40)) == ["error_lines"]


def test_a_metric_shift_beyond_noise_is_an_effect() -> None:
    key = ("cpu", '{"pod": "a"}')
    pre = _phase("pre", 0, {key: SeriesStats(0.1, 0.01, 5)})
    small = _phase("during", 0, {key: SeriesStats(0.11, 0.01, 5)})
    large = _phase("during", 0, {key: SeriesStats(0.9, 0.05, 5)})
    assert effect_signals(pre, small) == []
    assert effect_signals(pre, large) == ["metric:cpu"]


def test_failed_beats_warning_beats_pilot_beats_main() -> None:
    err = Problem(code="X", severity=Severity.ERROR, message="x")
    warn = Problem(code="Y", severity=Severity.WARNING, message="y")
    assert group_for([warn, err], pilot=True) == Group.FAILED
    assert group_for([warn], pilot=True) == Group.WARNING
    assert group_for([], pilot=True) == Group.PILOT
    assert group_for([], pilot=False) == Group.MAIN


def test_events_about_chaos_objects_are_provenance() -> None:
    def event(kind: str, name: str, source: str = "kubelet") -> KubeEvent:
        return KubeEvent(
            ts=0,
            type="Normal",
            reason="Applied",
            object_kind=kind,
            object_name=name,
            message="",
            source=source,
        )

    assert is_provenance_event(event("StressChaos", "x"), "r2act-cpu-1")
    assert is_provenance_event(event("Pod", "r2act-cpu-1"), "r2act-cpu-1")
    assert is_provenance_event(event("Pod", "p", "chaos-daemon"), "r2act-cpu-1")
    assert not is_provenance_event(event("Pod", "cartservice-1"), "r2act-cpu-1")


def test_r2act_marks_are_leak_terms_unless_the_namespace_is_named_after_one() -> None:
    common = {"incident_id": "i", "chaos_name": "", "fault_type": "dns_fault"}
    assert {"r2act.io/", "r2act-cpu-"} <= set(leak_terms(namespace="default", **common))
    assert "r2act-flag-" not in leak_terms(namespace="r2act-flag-demo", **common)
    assert "dns-fault" in leak_terms(namespace="default", **common)


def test_kind_node_names_are_no_leak_but_r2act_objects_are() -> None:
    """A kind cluster ``r2act-astronomy`` names its nodes after itself; its pods' scheduling
    events and the collector agents' records (``k8s.node.name``) are cluster furniture in
    every incident. What r2act made stays a leak: its labels, annotations, object names."""
    incident = "astronomyshop_cart_cpu_saturation_severe_r01"
    terms = leak_terms(
        incident_id=incident,
        chaos_name="r2act-cpu-0123456789",
        fault_type="cpu_saturation",
        namespace="astronomy",
    )
    leak = re.compile(leak_regex(terms))
    furniture = [
        "Successfully assigned astronomy/otel-collector-agent-x2k9q to r2act-astronomy-worker2",
        "     -> k8s.node.name: Str(r2act-astronomy-worker)",
        '{"userId": "r2act-health-probe"}',
    ]
    assert not [line for line in furniture if leak.search(line)]
    ours = [
        "annotations: r2act.io/config-fault",
        "podchaos r2act-pod-9f8e7d6c5b deleted",
        "labels: {r2act.io/incident: x}",
    ]
    assert all(leak.search(line) for line in ours)


def test_a_clear_rise_in_logged_request_latency_is_an_effect() -> None:
    pre, slow, same = _phase("pre", 0), _phase("during", 0), _phase("during", 0)
    pre.logs = LogSummary(1000, 0, ("frontend",), latency_ms=27.0)
    slow.logs = LogSummary(1000, 0, ("frontend",), latency_ms=420.0)
    same.logs = LogSummary(1000, 0, ("frontend",), latency_ms=30.0)
    assert effect_signals(pre, slow) == ["latency"]
    assert effect_signals(pre, same) == []


def test_failures_users_see_on_the_load_generator_are_an_effect() -> None:
    pre, failing, noise = _phase("pre", 0), _phase("during", 0), _phase("during", 0)
    pre.logs = LogSummary(1000, 0, ("loadgenerator",), user_failures_per_s=0.0)
    # one route of weight 1 in 23 failing outright at 10 users: about 0.08 failures/s
    failing.logs = LogSummary(1000, 0, ("loadgenerator",), user_failures_per_s=0.08)
    noise.logs = LogSummary(1000, 0, ("loadgenerator",), user_failures_per_s=0.01)
    assert effect_signals(pre, failing) == ["user_failures"]
    assert effect_signals(pre, noise) == []
    # failures already there before the fault are no evidence of it
    pre.logs = LogSummary(1000, 0, ("loadgenerator",), user_failures_per_s=0.08)
    assert effect_signals(pre, failing) == []


def _events(phase: str, warnings: int, window: tuple[float, float]) -> PhaseEvidence:
    p = _phase(phase, 0)
    p.window = window
    p.events = EventSummary(
        visible=warnings, provenance=0, visible_warnings=warnings, chaos_failures=()
    )
    return p


def test_warning_events_count_against_the_pre_windows_rate_not_its_total() -> None:
    # a healthy cluster's probe warnings: 2 in a 60 s pre window predict 4 in 120 s
    pre = _events("pre", 2, (0.0, 60.0))
    assert effect_signals(pre, _events("during", 4, (61.0, 181.0))) == []
    assert effect_signals(pre, _events("during", 5, (61.0, 181.0))) == []  # one more: no
    assert effect_signals(pre, _events("during", 12, (61.0, 181.0))) == ["warning_events"]
    quiet = _events("pre", 0, (0.0, 60.0))
    assert effect_signals(quiet, _events("during", 1, (61.0, 181.0))) == []
    assert effect_signals(quiet, _events("during", 3, (61.0, 181.0))) == ["warning_events"]


def test_a_sparse_counter_counting_a_few_by_chance_is_no_effect() -> None:
    key = ("cpu_throttled", '{"pod": "a"}')
    pre = _phase("pre", 0, {key: SeriesStats(0.0, 0.0, 4)})
    chance = _phase("during", 0, {key: SeriesStats(0.004, 0.008, 8)})
    pegged = _phase("during", 0, {key: SeriesStats(9.6, 0.4, 8)})
    assert effect_signals(pre, chance) == []
    assert effect_signals(pre, pegged) == ["metric:cpu_throttled"]
