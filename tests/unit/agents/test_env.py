"""The tool environment: answers come from the chosen view only, are bounded and
deterministic, and never carry an answer (label, gold, plan sets, fault, chaos object) or
an incident id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from r2act.agents import CaseEnvironment, CaseSource, call
from r2act.agents.env import MAX_LIMIT, MAX_LINE_CHARS
from r2act.datasets import load_records

QUESTIONS: list[tuple[str, dict[str, Any]]] = [
    ("services", {}),
    ("topology", {}),
    ("logs", {}),
    ("logs", {"phase": "during", "contains": "error", "limit": MAX_LIMIT}),
    ("logs", {"service": "frontend", "phase": "post", "limit": 5}),
    ("events", {}),
    ("events", {"type": "Warning", "limit": MAX_LIMIT}),
    ("metric_names", {}),
    ("metrics", {"query": "ready"}),
    ("metrics", {"query": 'cpu_usage{service=~".+"}', "step": 15}),
    ("metrics", {"query": "memory_limit", "phase": "during"}),
    ("requests", {}),
    ("requests", {"source": "locust-stats", "phase": "during", "points": True}),
    ("state", {"kind": "deployment"}),
    ("state", {"kind": "pod", "phase": "during"}),
    ("state", {"kind": "deployment", "phase": "post"}),
    ("action_space", {}),
]
ANSWER_WORDS = (
    '"fault_type"', "gold", "valid_plans", "invalid_plans", "mechanism", "intensity",
    "PodChaos", "StressChaos", "NetworkChaos", "HTTPChaos", "DNSChaos", "ConfigFault",
    "chaos-mesh", "r2act.io/", "incident",
)  # fmt: skip


def _answers(source: CaseSource, case_id: str) -> list[str]:
    env = CaseEnvironment(source.inputs(case_id))
    return [call(env, name, args)[0] for name, args in QUESTIONS]


def test_no_tool_answer_carries_an_answer_field_or_an_incident_id(smoke_dataset: Path) -> None:
    records = load_records(smoke_dataset)
    incident_ids = [r.incident_id for r in records]
    source = CaseSource(smoke_dataset, "full")
    assert sorted(source.ids()) == sorted(r.case_id for r in records)
    seen = 0
    for case_id in source.ids():
        for answer in _answers(source, case_id):
            seen += 1
            assert case_id not in answer
            leaked = [i for i in incident_ids if i in answer]
            assert not leaked, leaked
            words = [w for w in ANSWER_WORDS if w in answer]
            assert not words, (words, answer[:300])
    assert seen == len(records) * len(QUESTIONS)


@pytest.mark.parametrize(
    ("view", "refused"),
    [
        ("logs", {"events", "metric_names", "metrics", "requests", "state"}),
        ("logs+events", {"metric_names", "metrics", "requests", "state"}),
    ],
)
def test_a_view_answers_only_its_modalities(
    smoke_dataset: Path, view: str, refused: set[str]
) -> None:
    source = CaseSource(smoke_dataset, view)
    env = CaseEnvironment(source.inputs(source.ids()[0]))
    for name, args in QUESTIONS:
        answer, error = call(env, name, args)
        if name in refused:
            assert error and f"not in view {view!r}" in json.loads(answer)["error"], answer
        else:
            assert not error, answer


def test_answers_are_deterministic_and_bounded(smoke_dataset: Path) -> None:
    source = CaseSource(smoke_dataset, "full")
    case = source.ids()[3]
    assert _answers(source, case) == _answers(CaseSource(smoke_dataset, "full"), case)
    env = CaseEnvironment(source.inputs(case))
    logs = json.loads(call(env, "logs", {})[0])
    assert len(logs["lines"]) == 50 < logs["matched"]
    assert logs["note"] == (
        f"showing 50 of {logs['matched']}; {logs['matched'] - 50} left out "
        "(narrow with service, phase, since/until or contains, or raise limit)"
    )
    stamps = [line[0] for line in logs["lines"]]
    assert stamps == sorted(stamps)
    big = json.loads(call(env, "logs", {"limit": MAX_LIMIT})[0])
    assert len(big["lines"]) == MAX_LIMIT
    assert all(len(line[2]) <= MAX_LINE_CHARS for line in big["lines"])
    assert call(env, "logs", {"limit": MAX_LIMIT + 1})[1]
    window = json.loads(call(env, "services", {})[0])["phases"]["during"]
    inside = json.loads(call(env, "logs", {"since": window[0], "until": window[0] + 5})[0])
    assert inside["lines"] and all(
        window[0] - 0.001 <= line[0] <= window[0] + 5.001 for line in inside["lines"]
    )
    series = json.loads(call(env, "metrics", {"query": 'ready{service="frontend"}', "step": 10})[0])
    assert {s["labels"]["service"] for s in series["series"]} == {"frontend"}
    points = series["series"][0]["phases"]["during"]["points"]
    assert [p[0] for p in points] == sorted(p[0] for p in points)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"query": "nope"}, "not stored for this case"),
        ({"query": 'ready{service="x"'}, "write NAME or NAME{"),
        ({"query": 'ready{pod=~"("}'}, "bad regex"),
    ],
)
def test_bad_metric_questions_say_how_to_ask(
    smoke_dataset: Path, args: dict[str, Any], message: str
) -> None:
    source = CaseSource(smoke_dataset, "full")
    env = CaseEnvironment(source.inputs(source.ids()[0]))
    answer, error = call(env, "metrics", args)
    assert error and message in json.loads(answer)["error"]


def test_submit_checks_shape_and_action_space(smoke_dataset: Path) -> None:
    source = CaseSource(smoke_dataset, "full")
    env = CaseEnvironment(source.inputs(source.ids()[0]))
    bad = call(env, "submit", {"plan": {"operation": "restart_service"}})
    assert bad[1] and "plan" in json.loads(bad[0])["error"]
    outside = call(env, "submit", {"plan": {"operation": "restart_service", "target": "nope"}})
    assert outside[1] and "outside the action space" in outside[0]
    assert env.submission is None
    good = {"operation": "restart_service", "target": "cartservice"}
    assert call(env, "submit", {"rca": {"service": "cartservice"}, "plan": good}) == (
        '{"accepted":true}',
        False,
    )
    assert env.submission is not None and env.submission.incident_id == source.ids()[0]


def test_requests_show_what_users_and_the_frontend_saw_of_a_failing_backend(
    smoke_dataset: Path,
) -> None:
    """cartservice down: users' cart page fails (Locust's failures/s rise from zero) and
    the frontend's errors on it are attributed to cartservice, the backend it called."""
    record = next(
        r
        for r in load_records(smoke_dataset)
        if r.labels.service == "cartservice" and r.labels.fault_type.value == "pod_failure"
    )
    env = CaseEnvironment(CaseSource(smoke_dataset, "full").inputs(record.case_id))
    users = json.loads(call(env, "requests", {"source": "locust-stats", "route": "GET /cart"})[0])[
        "series"
    ]
    assert len(users) == 1
    phases = users[0]["phases"]
    assert phases["pre"]["errors_per_s"]["max"] == 0
    assert phases["during"]["errors_per_s"]["mean"] > 0
    logged = json.loads(call(env, "requests", {"source": "frontend-log", "phase": "during"})[0])
    blamed: dict[str, float] = {}
    for series in logged["series"]:
        if series["service"] != "frontend":
            rate = series["phases"]["during"]["errors_per_s"]["mean"]
            blamed[series["service"]] = blamed.get(series["service"], 0.0) + rate
    # checkout fails too (its order step calls cart), far less often than every cart page
    assert max(blamed, key=lambda s: blamed[s]) == "cartservice"
    answer, error = call(env, "requests", {"service": "nosuch"})
    assert error and "unknown" in json.loads(answer)["error"]
