"""How the real-cluster adapter reads API JSON: times, log lines, Chaos Mesh status, rollback."""

from __future__ import annotations

from typing import Any

import pytest

from r2act.cluster.kube.parse import (
    chaos_status,
    dns_names,
    event_time,
    format_time,
    http_scope,
    parse_time,
    rollback_source,
    same_template,
    split_log_line,
    stuck_deletion_detail,
)


def test_kubelet_nanosecond_timestamps_parse_to_the_microsecond() -> None:
    assert parse_time("2026-05-28T20:26:40.123456789Z") == pytest.approx(1780000000.123456)
    assert parse_time("2026-05-28T20:26:40Z") == 1780000000.0
    assert parse_time("2026-05-28T22:26:40.5+02:00") == 1780000000.5
    assert format_time(1780000000.9) == "2026-05-28T20:26:40Z"


def test_log_lines_split_into_timestamp_and_the_line_verbatim() -> None:
    assert split_log_line('2026-05-28T20:26:40.000000001Z {"a": 1}  x') == (
        1780000000.0,
        '{"a": 1}  x',
    )
    assert split_log_line("2026-05-28T20:26:40Z ") == (1780000000.0, "")
    assert split_log_line("no timestamp here") is None
    assert split_log_line("") is None


def test_event_time_prefers_last_seen_over_creation() -> None:
    event = {
        "firstTimestamp": "2026-05-28T20:00:00Z",
        "lastTimestamp": "2026-05-28T20:26:40Z",
        "metadata": {"creationTimestamp": "2026-05-28T19:00:00Z"},
    }
    assert event_time(event) == 1780000000.0
    assert event_time({"eventTime": "2026-05-28T20:26:40.000001Z"}) == pytest.approx(
        1780000000.000001
    )
    assert event_time({}) is None


def _chaos(conditions: dict[str, str], records: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "kind": "StressChaos",
        "metadata": {"name": "r2act-x", "finalizers": ["chaos-mesh/records"]},
        "status": {
            "conditions": [{"type": k, "status": v} for k, v in conditions.items()],
            "experiment": {"desiredPhase": "Run", "containerRecords": records},
        },
    }


def test_a_failed_apply_record_is_a_failed_injection_not_a_confirmed_one() -> None:
    record = {
        "id": "boutique/cart-1/server",
        "phase": "Not Injected",
        "events": [
            {"type": "Failed", "operation": "Apply", "message": "cgroup v2", "timestamp": "t"},
            {"type": "Weird", "operation": "Apply", "timestamp": "t"},
        ],
    }
    status = chaos_status(_chaos({"Selected": "True", "AllInjected": "False"}, [record]))
    assert status.failed() and not status.injected()
    assert len(status.records[0].events) == 1  # unknown event types are dropped, not fatal
    assert status.records[0].pod == "cart-1"


def test_injected_needs_selected_all_injected_and_every_record_injected() -> None:
    good = {"id": "boutique/cart-1", "phase": "Injected"}
    waiting = {"id": "boutique/cart-2", "phase": "Injected/Wait"}
    both = {"Selected": "True", "AllInjected": "True"}
    assert chaos_status(_chaos(both, [good])).injected({"cart-1"})
    assert not chaos_status(_chaos(both, [good, waiting])).injected()
    assert not chaos_status(_chaos({"Selected": "True"}, [good])).injected()


def test_stuck_deletion_detail_names_finalizers_and_records_still_injected() -> None:
    obj = _chaos({"AllRecovered": "False"}, [{"id": "boutique/cart-1", "phase": "Injected"}])
    obj["metadata"]["deletionTimestamp"] = "2026-05-28T20:26:40Z"
    detail = stuck_deletion_detail(obj)
    assert "chaos-mesh/records" in detail and "boutique/cart-1" in detail
    assert "AllRecovered=False" in detail


def test_http_scope_and_dns_names_read_the_rule_a_plan_names() -> None:
    assert http_scope({"spec": {"method": "GET", "path": "/cart"}}) == "GET /cart"
    assert http_scope({"spec": {"path": "/product/*"}}) == "ANY /product/*"
    assert http_scope({"spec": {}}) is None
    assert dns_names({"spec": {"patterns": ["cartservice", "cartservice.*"]}}) == {"cartservice"}


def _template(image: str, extra_label: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "cart", **(extra_label or {})}, "creationTimestamp": None},
        "spec": {"containers": [{"name": "server", "image": image}]},
    }


def _rs(revision: int, image: str, owner: str = "uid-1") -> dict[str, Any]:
    return {
        "metadata": {
            "annotations": {"deployment.kubernetes.io/revision": str(revision), "n": str(revision)},
            "ownerReferences": [{"uid": owner}],
        },
        "spec": {"template": _template(image, {"pod-template-hash": f"h{revision}"})},
    }


def test_rollback_returns_to_the_highest_revision_below_the_current_one() -> None:
    deployment = {
        "metadata": {
            "uid": "uid-1",
            "annotations": {"deployment.kubernetes.io/revision": "3", "mine": "x"},
        },
        "spec": {"template": _template("v3")},
    }
    replicasets = [_rs(1, "v1"), _rs(2, "v2"), _rs(3, "v3"), _rs(9, "other", owner="uid-2")]
    found = rollback_source(deployment, replicasets)
    assert found is not None
    revision, template, annotations = found
    assert revision == 2
    assert template == {
        "metadata": {"labels": {"app": "cart"}},
        "spec": {"containers": [{"name": "server", "image": "v2"}]},
    }
    assert annotations == {"deployment.kubernetes.io/revision": "3", "n": "2"}
    assert same_template(template, _template("v2", {"pod-template-hash": "zz"}))
    assert rollback_source(deployment, [_rs(3, "v3")]) is None
