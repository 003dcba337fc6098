"""The tools computed with Arrow answer what the obvious row-by-row computation answers:
``services`` counts, ``logs`` filters (a ``contains`` text is a literal, whatever its
characters) in time order with stored order breaking ties, and ``requests`` series."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from r2act.actions import system_action_space
from r2act.agents import CaseEnvironment
from r2act.datasets.cases import Case
from r2act.schema import PHASES
from r2act.systems import ONLINE_BOUTIQUE as OB

SERVICES = ("frontend", "cartservice", "checkoutservice")
WORDS = ("error", "a.b", "x(y", "[1]", "50%", "c:\\n", "a b", "é{", "^$", "|", "*+?", "\\E")


def _arrow_frame(columns: dict[str, list[Any]]) -> pd.DataFrame:
    """A frame as the reader gives it: Arrow-backed columns through ``to_pandas``."""
    frame: pd.DataFrame = pa.table(columns).to_pandas()
    return frame


def _case(seed: int = 7, rows: int = 400) -> Case:
    rng = random.Random(seed)
    logs: dict[str, list[Any]] = {c: [] for c in ("phase", "ts", "pod", "service", "line")}
    for _ in range(rows):
        service = rng.choice(SERVICES)
        phase = rng.choice(PHASES)
        logs["phase"].append(phase)
        logs["ts"].append(float(rng.randrange(0, 40)))  # many ties
        logs["pod"].append(f"{service}-7d4f-{rng.choice('ab')}")
        logs["service"].append(service)
        logs["line"].append(" ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 4))))
    events = {
        "phase": ["pre", "during", "during"],
        "ts": [1.0, 2.0, 3.0],
        "type": ["Normal", "Warning", "Warning"],
        "reason": ["Pulled", "BackOff", "Unhealthy"],
        "object_kind": ["Pod", "Pod", "Pod"],
        "object_name": ["cartservice-7d4f-a", "cartservice-7d4f-a", "frontend-7d4f-b"],
        "message": ["pulled", "back-off", "probe failed"],
        "count": [1, 3, 2],
    }
    requests: dict[str, list[Any]] = {
        c: []
        for c in ("phase", "ts", "source", "service", "route", "requests_per_s",
                  "errors_per_s", "error_ratio", "latency_p95_ms")
    }  # fmt: skip
    for step in range(60):
        for source, service, route in (
            ("locust-stats", "frontend", "GET /cart"),
            ("frontend-log", "cartservice", "*"),
            ("locust-stats", "frontend", "*"),
        ):
            requests["phase"].append(PHASES[step // 20])
            requests["ts"].append(float(60 - step))  # stored out of time order
            requests["source"].append(source)
            requests["service"].append(service)
            requests["route"].append(route)
            requests["requests_per_s"].append(None if service != "frontend" else rng.random())
            requests["errors_per_s"].append(rng.random())
            requests["error_ratio"].append(None)
            requests["latency_p95_ms"].append(rng.random() * 100)
    return Case(
        case_id="case-0123456789ab",
        view="full",
        topology=OB,
        action_space=system_action_space(OB),
        logs=_arrow_frame(logs),
        events=_arrow_frame(events),
        requests=_arrow_frame(requests),
    )


def test_services_counts_log_lines_and_events_per_service_and_phase() -> None:
    case = _case()
    answer = CaseEnvironment(case).services()
    lines = Counter(zip(case.logs["service"], case.logs["phase"], strict=True))
    by_name = {s["name"]: s for s in answer["services"]}
    assert [s["name"] for s in answer["services"]] == list(OB.names)
    for name in SERVICES:
        assert by_name[name]["log_lines"] == {p: lines[(name, p)] for p in PHASES}
        pods = {p for p, s in zip(case.logs["pod"], case.logs["service"], strict=True) if s == name}
        assert by_name[name]["pods"] == sorted(pods)
    assert by_name["cartservice"]["events"] == {"pre": 1, "during": 1, "post": 0}
    assert by_name["frontend"]["events"] == {"pre": 0, "during": 1, "post": 0}
    for phase in PHASES:
        stamps = [t for t, p in zip(case.logs["ts"], case.logs["phase"], strict=True) if p == phase]
        events = [t for t, p in zip(case.events["ts"], case.events["phase"], strict=True)  # type: ignore[index]
                  if p == phase]  # fmt: skip
        both = stamps + events
        assert answer["phases"][phase] == [min(both), max(both)]


@pytest.mark.parametrize("contains", [*WORDS, "error a.b", "nowhere"])
def test_logs_contains_is_a_literal_and_answers_in_time_order(contains: str) -> None:
    case = _case()
    answer = CaseEnvironment(case).logs(phase="during", contains=contains, limit=200)
    rows = [
        (position, ts, pod, line)
        for position, (ts, pod, line, phase) in enumerate(
            zip(
                case.logs["ts"],
                case.logs["pod"],
                case.logs["line"],
                case.logs["phase"],
                strict=True,
            )
        )
        if phase == "during" and contains in line
    ]
    rows.sort(key=lambda r: (r[1], r[0]))  # time order; stored order breaks ties
    assert answer["matched"] == len(rows)
    assert answer["lines"] == [[ts, pod, line] for _, ts, pod, line in rows[:200]]


def test_logs_filters_combine_and_the_limit_cuts_after_ordering() -> None:
    case = _case(seed=3)
    env = CaseEnvironment(case)
    answer = env.logs(service="cartservice", since=10.0, until=30.0, limit=5)
    rows = sorted(
        (
            (ts, position, pod, line)
            for position, (ts, pod, line, service) in enumerate(
                zip(
                    case.logs["ts"],
                    case.logs["pod"],
                    case.logs["line"],
                    case.logs["service"],
                    strict=True,
                )
            )
            if service == "cartservice" and 10.0 <= ts <= 30.0
        ),
    )
    assert answer["matched"] == len(rows) > 5
    assert answer["lines"] == [[ts, pod, line] for ts, _, pod, line in rows[:5]]
    assert "showing 5 of" in answer["note"]


def test_requests_give_each_series_its_steps_in_time_order() -> None:
    case = _case()
    answer = CaseEnvironment(case).requests(points=True)
    frame = case.requests
    assert frame is not None
    keys = sorted(set(zip(frame["source"], frame["service"], frame["route"], strict=True)))
    assert [(s["source"], s["service"], s["route"]) for s in answer["series"]] == keys
    for series in answer["series"]:
        for phase, stats in series["phases"].items():
            part = frame[
                (frame["source"] == series["source"])
                & (frame["service"] == series["service"])
                & (frame["route"] == series["route"])
                & (frame["phase"] == phase)
            ].sort_values("ts")
            assert stats["steps"] == len(part)
            assert [p[0] for p in stats["points"]] == list(part["ts"])
            assert stats["errors_per_s"]["max"] == round(float(part["errors_per_s"].max()), 6)
            assert ("requests_per_s" in stats) == (series["service"] == "frontend")


def test_hand_built_frames_of_any_dtype_are_answered() -> None:
    """Categorical columns (as ``load`` gives) and an empty untyped log table still work."""
    case = _case(rows=50)
    typed = case.logs.astype({"phase": "category", "service": "category", "pod": "category"})
    expected = CaseEnvironment(case)
    got = CaseEnvironment(replace(case, logs=typed))
    assert got.services() == expected.services()
    assert got.logs(phase="during", service="frontend") == expected.logs(
        phase="during", service="frontend"
    )
    empty = pd.DataFrame({c: [] for c in ("phase", "ts", "pod", "service", "line")})
    bare = CaseEnvironment(replace(case, logs=empty, events=None))
    assert bare.logs(contains="error") == {"lines": [], "matched": 0}
    assert all(
        s["log_lines"] == {"pre": 0, "during": 0, "post": 0} for s in bare.services()["services"]
    )
