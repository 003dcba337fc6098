"""Each kind of broken raw incident lands in the right group with the right reason."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from gate_rawfactory import RawSpec, write_raw_incident

from r2act.actions import policy_named
from r2act.errors import DataError
from r2act.quality_gate import Group, audit_incident, read_verdicts, run_audit
from r2act.quality_gate.audit import judge_incident, worker_pool
from r2act.schema import BenchmarkRecord, PlannedIncident

POD = "onlineboutique_cartservice_pod_failure_severe_r01"
DNS = "onlineboutique_paymentservice_dns_fault_severe_r02"

CASES = {
    "healthy": (RawSpec(), Group.MAIN, set()),
    "missing_phase": (RawSpec(missing_phase="post"), Group.FAILED, {"PHASE_MISSING"}),
    "empty_logs": (RawSpec(empty_logs_phase="during"), Group.FAILED, {"LOGS_EMPTY"}),
    "failed_injection": (RawSpec(injection="failed"), Group.FAILED, {"INJECTION_FAILED"}),
    "unconfirmed": (RawSpec(injection="unconfirmed"), Group.WARNING, {"INJECTION_UNCONFIRMED"}),
    "log_leak": (RawSpec(leak="logs"), Group.FAILED, {"GROUND_TRUTH_LEAK"}),
    "event_leak": (RawSpec(leak="events"), Group.FAILED, {"GROUND_TRUTH_LEAK"}),
    "metric_leak": (RawSpec(leak="metrics"), Group.FAILED, {"GROUND_TRUTH_LEAK"}),
    "metric_gap": (RawSpec(metric_gap=True), Group.WARNING, {"METRIC_GAPS"}),
    "no_effect": (RawSpec(effect=False), Group.WARNING, {"NO_OBSERVABLE_EFFECT"}),
    "not_recovered": (RawSpec(recovered=False), Group.WARNING, {"RECOVERY_NOT_VERIFIED"}),
    "incomplete": (RawSpec(complete=False), Group.FAILED, {"INCOMPLETE"}),
    "pilot": (RawSpec(pilot=True), Group.PILOT, set()),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_raw_incident_lands_in_its_group_with_its_reason(
    case: str, tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    spec, group, reasons = CASES[case]
    root = write_raw_incident(tmp_path, incidents[POD], spec)
    verdict, record = audit_incident(root)
    assert verdict.group == group, verdict.problems
    assert set(verdict.reasons) == reasons
    assert (record is not None) == (group == Group.MAIN)


def test_chaos_object_events_are_provenance_not_a_leak(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    # the healthy factory incident carries an 'Applied' event on the chaos object itself
    root = write_raw_incident(tmp_path, incidents[DNS])
    events = (root / "during" / "events.jsonl").read_text()
    assert "ConfigFault" in events
    verdict, _ = audit_incident(root)
    assert verdict.group == Group.MAIN


def test_corrupt_gzip_fails_the_incident_not_the_audit(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    root = write_raw_incident(tmp_path, incidents[POD])
    (root / "pre" / "logs.jsonl.gz").write_bytes(b"\x1f\x8b\x08garbage")
    verdict, _ = audit_incident(root)
    assert verdict.group == Group.FAILED
    assert verdict.reasons == ["FILE_UNREADABLE"]


def test_annotation_that_does_not_parse_is_failed(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    root = write_raw_incident(tmp_path, incidents[POD])
    document = json.loads((root / "incident.json").read_text())
    del document["timestamps"]
    (root / "incident.json").write_text(json.dumps(document))
    verdict, _ = audit_incident(root)
    assert verdict.group == Group.FAILED
    assert "ANNOTATION_INVALID" in verdict.reasons


def test_main_record_carries_labels_and_plan_sets(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    root = write_raw_incident(tmp_path, incidents[DNS])
    _, record = audit_incident(root)
    assert isinstance(record, BenchmarkRecord)
    assert record.labels.service == "paymentservice"
    assert record.labels.mechanism == "config-fault-address-nxdomain"
    assert record.policy == "r2act-mechanics/3"
    assert record.gold_plan.model_dump() == {
        "operation": "repair_dependency",
        "target": "checkoutservice",  # the primary caller holds PAYMENT_SERVICE_ADDR
        "dependency": "paymentservice:50051",
    }
    assert len(record.valid_plans) == 2 and len(record.invalid_plans) == 2
    assert record.observations.log_records == 3 * 20 * 4
    assert record.observations.phases == ["pre", "during", "post"]
    # events about the chaos object are not counted as method-visible
    assert record.observations.event_records == 1 + 2 + 1


def test_audit_writes_verdicts_records_and_report(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    write_raw_incident(tmp_path, incidents[POD])
    write_raw_incident(tmp_path, incidents[DNS], RawSpec(injection="failed"))
    stale = tmp_path / "audit" / "records" / "old.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    result = run_audit(tmp_path, workers=1)
    assert [v.incident_id for v in result.verdicts] == sorted([POD, DNS])
    assert [v.incident_id for v in read_verdicts(tmp_path)] == sorted([POD, DNS])
    assert sorted(p.name for p in (tmp_path / "audit" / "records").iterdir()) == [f"{POD}.json"]
    report = (tmp_path / "audit" / "report.md").read_text()
    assert "| INJECTION_FAILED | error | 1 |" in report
    assert "| cartservice |" in report


def test_an_interrupted_audit_leaves_no_verdicts_that_disagree_with_its_records(
    tmp_path: Path, incidents: dict[str, PlannedIncident], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_raw_incident(tmp_path, incidents[POD])
    write_raw_incident(tmp_path, incidents[DNS])
    run_audit(tmp_path, workers=1)
    calls = []

    def interrupted(*args: object, **kwargs: object) -> object:
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return judge_incident(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("r2act.quality_gate.audit.judge_incident", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_audit(tmp_path, workers=1)
    assert not (tmp_path / "audit" / "audit.jsonl").exists()
    assert not (tmp_path / "audit" / "report.md").exists()
    with pytest.raises(DataError, match="no audit found"):
        read_verdicts(tmp_path)


def test_audit_ignores_hidden_resume_debris(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    write_raw_incident(tmp_path, incidents[POD])
    (tmp_path / "raw" / ".partial").mkdir()
    result = run_audit(tmp_path, workers=1)
    assert len(result.verdicts) == 1


def test_audit_of_an_empty_run_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no raw incidents"):
        run_audit(tmp_path)


def test_parallel_audit_gives_the_same_verdicts_as_serial(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    ids = sorted(incidents)[:8]
    for n, incident_id in enumerate(ids):
        write_raw_incident(tmp_path, incidents[incident_id], RawSpec(effect=n % 3 != 0))
    serial = (run_audit(tmp_path, workers=1), (tmp_path / "audit" / "audit.jsonl").read_bytes())
    parallel = (run_audit(tmp_path, workers=2), (tmp_path / "audit" / "audit.jsonl").read_bytes())
    assert serial[1] == parallel[1]
    assert serial[0].count(Group.WARNING) == 3


def test_audit_workers_die_on_sigterm_even_when_their_parent_ignores_it() -> None:
    """The pool stops its workers with SIGTERM (after taking the task queue's lock, so a
    worker left alive blocks ``terminate`` forever); a parent that ignores SIGTERM, as a
    collection stopped by a signal leaves the process, must not hand that to them."""
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with worker_pool(1) as pool:
            seen = pool.apply(signal.getsignal, (signal.SIGTERM,))
            ctrl_c = pool.apply(signal.getsignal, (signal.SIGINT,))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == signal.SIG_DFL
    assert ctrl_c == signal.SIG_IGN  # Ctrl-C is the parent's


def test_a_log_line_that_is_not_a_record_fails_the_incident(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    import gzip

    root = write_raw_incident(tmp_path, incidents[POD])
    good = gzip.decompress((root / "post" / "logs.jsonl.gz").read_bytes())
    (root / "post" / "logs.jsonl.gz").write_bytes(gzip.compress(good + b'{"ts": 1, "pod": "x"\n'))
    verdict, _ = audit_incident(root)
    assert verdict.reasons == ["FILE_UNREADABLE"]


def test_latency_is_measured_from_the_frontends_request_lines(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    import gzip

    from r2act.quality_gate import gather

    root = write_raw_incident(tmp_path, incidents[POD])
    line = json.dumps({"http.resp.took_ms": 40, "message": "request complete"})
    record = {
        "ts": 1.0,
        "pod": "frontend-1",
        "container": "server",
        "service": "frontend",
        "line": line,
    }
    payload = (json.dumps(record) + "\n").encode() * 3
    (root / "pre" / "logs.jsonl.gz").write_bytes(gzip.compress(payload))
    assert gather(root).phases["pre"].logs.latency_ms == 40.0  # type: ignore[union-attr]


def _locust_row(method: str, name: str, counts: tuple[int, int], rates: tuple[float, float]) -> str:
    """A stats row as Locust 2.43 prints it (``StatsEntry.to_string``, stats.py L562-579)."""
    (reqs, fails), (rps, fps) = counts, rates
    kind = f"{method} " if method else ""
    cell = f"{fails}({100 * fails / reqs:.2f}%)"
    times = f"|{41:>7d} {12:>7d} {160:>7d}{41:>7d} |"
    return f"{kind:<8} {name:<76} {reqs:>7d} {cell:>12} {times} {rps:>7.2f} {fps:>11.2f}"


def test_users_failures_are_read_from_the_load_generators_stats_rows(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    import gzip

    from r2act.quality_gate import gather

    root = write_raw_incident(tmp_path, incidents[POD])
    table = [  # two prints; the first print's total lags its rows
        (0.0, _locust_row("GET", "/", (50, 9), (0.08, 0.08))),
        (0.0, _locust_row("GET", "/cart", (150, 0), (0.24, 0.0))),
        (0.0, _locust_row("", "Aggregated", (1000, 9), (1.8, 0.0))),
        (2.0, _locust_row("GET", "/", (51, 10), (0.08, 0.1))),
        (2.0, _locust_row("", "Aggregated", (1004, 10), (1.8, 0.1))),
        (2.0, "GET / 3(1.00%) | is not a stats row: it lacks Locust's columns"),
    ]
    payload = b"".join(
        (
            json.dumps(
                {"ts": ts, "pod": "loadgenerator-1", "container": "main"}
                | {"service": "loadgenerator", "line": line}
            )
            + "\n"
        ).encode()
        for ts, line in table
    )
    (root / "during" / "logs.jsonl.gz").write_bytes(gzip.compress(payload))
    evidence = gather(root)
    assert evidence.phases["during"].logs.user_failures_per_s == pytest.approx(0.09)  # type: ignore[union-attr]
    # the factory's pre logs have no load generator: nothing to read
    assert evidence.phases["pre"].logs.user_failures_per_s is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("file", "code"),
    [("state.json", "STATE_MISSING"), ("chaos_status.json", "CHAOS_STATUS_MISSING")],
)
def test_a_phase_without_kubernetes_state_or_chaos_status_is_failed(
    file: str, code: str, tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    root = write_raw_incident(tmp_path, incidents[POD])
    (root / "during" / file).unlink()
    verdict, record = audit_incident(root)
    assert verdict.group == Group.FAILED
    assert code in verdict.reasons
    assert record is None


def test_an_incident_without_an_injection_time_is_failed_as_never_injected(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    root = write_raw_incident(tmp_path, incidents[POD])
    document = json.loads((root / "incident.json").read_text())
    document["timestamps"]["injected_at"] = None
    (root / "incident.json").write_text(json.dumps(document))
    verdict, _ = audit_incident(root)
    assert verdict.group == Group.FAILED
    assert "NEVER_INJECTED" in verdict.reasons


def test_a_deployment_not_ready_before_injection_is_an_unhealthy_baseline_warning(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    root = write_raw_incident(tmp_path, incidents[POD])
    state = json.loads((root / "pre" / "state.json").read_text())
    state["deployments"][0]["ready_replicas"] = 0
    state["deployments"][0]["available_replicas"] = 0
    (root / "pre" / "state.json").write_text(json.dumps(state))
    verdict, record = audit_incident(root)
    assert verdict.group == Group.WARNING
    assert "UNHEALTHY_BASELINE" in verdict.reasons
    assert record is None


def test_the_paper_policy_is_selectable_and_every_record_and_verdict_names_its_policy(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    write_raw_incident(tmp_path, incidents[DNS])
    result = run_audit(tmp_path, workers=1, policy=policy_named("paper-table-ii/1"))
    (verdict,) = result.verdicts
    assert verdict.policy == "paper-table-ii/1"
    record = BenchmarkRecord.model_validate_json(
        (tmp_path / "audit" / "records" / f"{DNS}.json").read_text()
    )
    assert record.policy == "paper-table-ii/1"
    assert record.gold_plan.model_dump()["target"] == "paymentservice"  # Table II: S itself


def test_clean_incidents_beyond_their_cell_quota_are_spares_without_records(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    cell = [i for i in incidents.values() if i.id.startswith(POD.rsplit("_r", 1)[0])]
    assert len(cell) == 3
    for incident in cell:  # a quota of 2 with one spare
        write_raw_incident(tmp_path, incident.model_copy(update={"quota": 2}))
    result = run_audit(tmp_path, workers=1)
    groups = {v.incident_id: v.group for v in result.verdicts}
    ordered = sorted(groups)
    assert [groups[i] for i in ordered] == [Group.MAIN, Group.MAIN, Group.SPARE]
    records = sorted(p.stem for p in (tmp_path / "audit" / "records").glob("*.json"))
    assert records == ordered[:2]
    assert not (tmp_path / "audit" / "logs" / f"{ordered[2]}.parquet").exists()
