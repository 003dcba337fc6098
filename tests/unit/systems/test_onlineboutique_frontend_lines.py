"""The frontend's per-request lines: each slot of logrus' sorted JSON holds its own value.

``request started`` and ``request complete`` are filled positionally (a tuple, for speed),
so a slot order that drifted from logrus' sorted keys would silently put the session in
the path; these tests read the lines back as JSON and check every field against what the
request drew.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from r2act.cluster.sim.podlogs import PodLogger
from r2act.schema import LogLine
from r2act.systems import ONLINE_BOUTIQUE
from r2act.systems.logformats import go_line, rfc3339nano
from r2act.systems.onlineboutique.render_frontend import (
    positional,
    probe_kinds,
    request_renderer,
)
from r2act.systems.onlineboutique.shop import PRODUCTS

UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
TS = 1_767_225_608.140379


def _logger() -> PodLogger:
    return PodLogger(ONLINE_BOUTIQUE, "frontend-7d9c-x2b4q", "frontend", "server", seed=11, users=8)


def _render(method: str, path: str, error: tuple[str, str] | None = None) -> list[LogLine]:
    logger = _logger()
    n, render = request_renderer(logger, method, path, 4.0, error)
    out: list[LogLine] = []
    render(TS, random.Random(3), out)
    assert len(out) == n
    return out


def test_positional_keeps_the_templates_text_and_checks_the_slot_order() -> None:
    fields = {"http.req.id": '"%(rid)s"', "session": '"%(session)s"'}
    template = go_line("debug", "100%(x)s sure", fields, "%(ts)s")
    made = positional(template, ("rid", "session", "ts"))
    values = {"rid": "r-1", "session": "s-2", "ts": "T"}
    assert made % ("r-1", "s-2", "T") == template % values
    with pytest.raises(ValueError, match="template slots"):
        positional(template, ("session", "rid", "ts"))


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/", 200), ("GET", "/product/*", 200), ("POST", "/cart", 302)],
)
def test_started_and_complete_carry_the_requests_own_fields(
    method: str, path: str, status: int
) -> None:
    lines = _render(method, path)
    started, complete = json.loads(lines[0].line), json.loads(lines[-1].line)
    assert started["message"] == "request started"
    assert complete["message"] == "request complete"
    sessions = _logger().sessions
    for record in (started, complete):
        assert UUID4.match(record["http.req.id"])
        assert record["http.req.method"] == method
        assert record["session"] in sessions
        if path.endswith("*"):
            assert record["http.req.path"][len(path) - 1 :] in PRODUCTS
        else:
            assert record["http.req.path"] == path
    for key in ("http.req.id", "http.req.path", "session"):
        assert started[key] == complete[key]
    assert started["timestamp"] == rfc3339nano(lines[0].ts)
    assert complete["timestamp"] == rfc3339nano(lines[-1].ts)
    took_ms = (lines[-1].ts - lines[0].ts) * 1000
    assert abs(complete["http.resp.took_ms"] - took_ms) < 1
    assert complete["http.resp.status"] == status
    assert (complete["http.resp.bytes"] == 0) == (status == 302)


def test_a_failed_request_completes_with_500_and_logs_the_error_between() -> None:
    lines = _render("GET", "/cart", ("unavailable", "cartservice"))
    records = [json.loads(x.line) for x in lines]
    assert records[-1]["http.resp.status"] == 500
    assert 4000 <= records[-1]["http.resp.bytes"] < 5500
    errors = [r for r in records if r["message"] == "request error"]
    assert len(errors) == 1
    assert errors[0]["http.req.id"] == records[0]["http.req.id"]
    assert [x.ts for x in lines] == sorted(x.ts for x in lines)


def test_a_probe_logs_the_kubelets_session_on_healthz_in_both_lines() -> None:
    ((rate, n, probe),) = probe_kinds(_logger())
    assert (rate, n) == (0.2, 2)
    seen: set[str] = set()
    for seed in range(40):
        out: list[LogLine] = []
        probe(TS, random.Random(seed), out)
        started, complete = (json.loads(x.line) for x in out)
        assert started["message"] == "request started"
        assert complete["message"] == "request complete"
        for record in (started, complete):
            assert record["http.req.path"] == "/_healthz"
            assert record["http.req.method"] == "GET"
            assert record["session"] in ("x-readiness-probe", "x-liveness-probe")
        assert started["http.req.id"] == complete["http.req.id"]
        assert UUID4.match(started["http.req.id"])
        assert started["session"] == complete["session"]
        assert (complete["http.resp.status"], complete["http.resp.bytes"]) == (200, 2)
        assert complete["timestamp"] == rfc3339nano(out[1].ts)
        seen.add(started["session"])
    assert len(seen) == 2
