"""The bounded ``traces`` tool (issue 24 point 3): offered only in view ``full+traces``,
searching spans by service, operation, status, phase and time with a row limit, and
fetching one trace by id; driven through the MCP client like the other MCP tests.

The spans come from ``tests/traces_fixture.py``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from r2act.agents.cases import CaseSource
from r2act.agents.env import CaseEnvironment
from r2act.agents.tools import call, openai_tools, tools_for
from r2act.datasets import load_records
from traces_fixture import traced_dataset


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return traced_dataset(tmp_path_factory.mktemp("traced-agents"))


def _text(result: object) -> str:
    content = result.content  # type: ignore[attr-defined]
    return "".join(getattr(block, "text", "") for block in content)


def _checkout_case(dataset: Path) -> str:
    record = next(r for r in load_records(dataset) if r.labels.service == "checkoutservice")
    return str(record.case_id)


async def _drive(dataset: Path, out: Path, view: str, case_id: str) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "r2act",
            "mcp",
            "serve",
            "--dataset",
            str(dataset),
            "--out",
            str(out),
            "--view",
            view,
        ],
        env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    seen: dict[str, Any] = {}
    async with Client(params) as client:
        seen["tools"] = {t.name: t for t in (await client.list_tools()).tools}
        if "traces" not in seen["tools"]:
            return seen
        await client.call_tool("select_case", {"case_id": case_id})
        ask = {"service": "checkoutservice", "status": "error", "phase": "during", "limit": 2}
        search = await client.call_tool("traces", ask)
        seen["search"] = (search.is_error, json.loads(_text(search)))
        trace_id = seen["search"][1]["spans"][0]["trace_id"]
        fetched = await client.call_tool("traces", {"trace_id": trace_id})
        seen["trace"] = (fetched.is_error, json.loads(_text(fetched)))
        big = await client.call_tool("traces", {"limit": 201})
        seen["big"] = (big.is_error, _text(big))
        missing = await client.call_tool("traces", {"trace_id": "0" * 32})
        seen["missing"] = (missing.is_error, _text(missing))
    return seen


def test_an_mcp_client_searches_spans_and_fetches_a_trace(traced: Path, tmp_path: Path) -> None:
    case_id = _checkout_case(traced)
    seen = anyio.run(_drive, traced, tmp_path / "out.jsonl", "full+traces", case_id)
    schema = seen["tools"]["traces"].input_schema["properties"]
    assert {"trace_id", "service", "operation", "status", "since", "until", "limit"} <= set(schema)
    error, found = seen["search"]
    assert not error and 0 < len(found["spans"]) <= 2
    assert found["matched"] > len(found["spans"]) and "left out" in found["note"]
    assert {s["service"] for s in found["spans"]} == {"checkoutservice"}
    assert {(s["status"], s["phase"]) for s in found["spans"]} == {("error", "during")}
    starts = [s["start"] for s in found["spans"]]
    assert starts == sorted(starts) and all("attributes" not in s for s in found["spans"])
    ops = found["operations"]
    assert ops and all(o["errors"] == o["spans"] for o in ops)  # every match is an error
    assert sum(o["spans"] for o in ops) == found["matched"]
    error, trace = seen["trace"]
    spans = trace["spans"]
    assert not error and {s["trace_id"] for s in spans} == {trace["trace_id"]}
    ids = {s["span_id"] for s in spans}
    roots = [s for s in spans if not s["parent_id"]]
    assert len(roots) == 1 and all(s["parent_id"] in ids for s in spans if s["parent_id"])
    assert any(s["service"] == "checkoutservice" and s["status"] == "error" for s in spans)
    assert all(isinstance(s["attributes"], dict) for s in spans)
    assert seen["big"][0] and "200" in seen["big"][1]
    assert seen["missing"][0] and "not in this case" in seen["missing"][1]


def test_the_paper_views_do_not_offer_the_traces_tool(traced: Path, tmp_path: Path) -> None:
    seen = anyio.run(_drive, traced, tmp_path / "out.jsonl", "full", _checkout_case(traced))
    assert "traces" not in seen["tools"] and "metrics" in seen["tools"]
    for view in ("logs", "logs+events", "full"):
        assert "traces" not in {t.name for t in tools_for(view)}
        assert "traces" not in {t["function"]["name"] for t in openai_tools(view)}
    assert "traces" in {t["function"]["name"] for t in openai_tools("full+traces")}
    case = CaseSource(traced, "full").inputs(_checkout_case(traced))
    answer, is_error = call(CaseEnvironment(case), "traces", {})
    assert is_error and "not in view 'full'" in answer


def test_search_filters_by_operation_and_time(traced: Path) -> None:
    case = CaseSource(traced, "full+traces").inputs(_checkout_case(traced))
    env = CaseEnvironment(case)
    assert case.traces is not None
    middle = float(case.traces["start"].median())
    answer = env.traces(operation="PlaceOrder", since=middle, limit=200)
    assert answer["spans"] and all("PlaceOrder" in s["operation"] for s in answer["spans"])
    assert all(s["start"] >= middle for s in answer["spans"])
    every = case.traces[case.traces["operation"].str.contains("PlaceOrder")]
    assert answer["matched"] == int((every["start"] >= middle).sum())
    assert env.traces(service="checkoutservice", until=middle - 1e9)["matched"] == 0
