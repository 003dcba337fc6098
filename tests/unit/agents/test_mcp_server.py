"""``r2act mcp serve`` driven over stdio by a client from the official ``mcp`` SDK."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from agent_support import r2act
from mcp import Client, StdioServerParameters

from r2act.datasets import load_records


def _text(result: object) -> str:
    content = result.content  # type: ignore[attr-defined]
    return "".join(getattr(block, "text", "") for block in content)


async def _drive(dataset: Path, out: Path) -> dict[str, object]:
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
            "full",
            "--method",
            "mcp-test",
        ],
        env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    seen: dict[str, object] = {}
    async with Client(params) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        seen["tools"] = tools
        early = await client.call_tool("logs", {})
        seen["early"] = (early.is_error, _text(early))
        listing = _text(await client.call_tool("list_cases", {}))
        case_id = listing.splitlines()[0].split("\t")[0]
        seen["case"] = case_id
        picked = await client.call_tool("select_case", {"case_id": case_id})
        seen["selected"] = _text(picked)
        services = json.loads(_text(await client.call_tool("services", {})))
        seen["services"] = [s["name"] for s in services["services"]]
        logs = json.loads(_text(await client.call_tool("logs", {"phase": "during", "limit": 3})))
        seen["logs"] = len(logs["lines"])
        metric = json.loads(_text(await client.call_tool("metrics", {"query": "ready"})))
        seen["metric"] = metric["metric"]
        state = json.loads(_text(await client.call_tool("state", {"kind": "deployment"})))
        seen["state"] = state["kind"]
        space = json.loads(_text(await client.call_tool("action_space", {})))
        target = space["targets"][0]
        wrong = await client.call_tool("metrics", {"query": "nope"})
        seen["wrong"] = (wrong.is_error, _text(wrong))
        plan = {"operation": "restart_service", "target": target}
        first = await client.call_tool(
            "submit", {"rca": {"service": target, "fault_type": "pod_failure"}, "plan": plan}
        )
        seen["submit"] = (first.is_error, _text(first))
        again = await client.call_tool("submit", {"plan": plan})
        seen["again"] = (again.is_error, _text(again))
        seen["listing"] = _text(await client.call_tool("list_cases", {}))
    return seen


def test_an_mcp_client_works_a_whole_case_over_stdio(smoke_dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "mcp.jsonl"
    seen = anyio.run(_drive, smoke_dataset, out)
    assert {"list_cases", "select_case", "services", "topology", "logs", "events",
            "metric_names", "metrics", "state", "action_space", "submit"} <= seen["tools"]  # type: ignore[operator]  # fmt: skip
    assert seen["early"][0] and "no case selected" in seen["early"][1]  # type: ignore[index]
    assert str(seen["selected"]).startswith(f"selected {seen['case']}")
    assert "frontend" in seen["services"]  # type: ignore[operator]
    assert seen["logs"] == 3 and seen["metric"] == "ready" and seen["state"] == "deployment"
    assert seen["wrong"][0] and "not stored" in seen["wrong"][1]  # type: ignore[index]
    assert seen["submit"] == (False, "accepted; written to mcp.jsonl")
    assert seen["again"][0] and "first one counts" in seen["again"][1]  # type: ignore[index]
    assert f"{seen['case']}\tsubmitted" in str(seen["listing"])
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["incident_id"] == seen["case"]
    assert lines[0]["method"] == "mcp-test" and lines[0]["plan"]["operation"] == "restart_service"
    # the submission is an ordinary predictions line: evaluate scores it by case id
    report = tmp_path / "report.json"
    r2act("evaluate", str(out), "--dataset", str(smoke_dataset), "--json", str(report),
          "--replicates", "200")  # fmt: skip
    method = json.loads(report.read_text())["methods"][0]
    assert method["parse"]["predictions"] == 1
    assert method["metrics"]["covered"]["value"] == 1 / len(load_records(smoke_dataset))
