"""The agent surfaces on the Astronomy Shop, and the fault types each case is offered.

``r2act agent run`` (tools mode against the scripted OpenAI stub, and the command runner) and
``r2act mcp serve`` work a case of the Astronomy Shop smoke dataset end to end. The system
prompt and the answer schema name the case's system's fault types: ``feature_flag`` for the
Astronomy Shop, never for Online Boutique, which has no flags.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
from agent_support import r2act
from openai_stub import OpenAIStub, Reply
from test_command_runner import AGENT
from test_mcp_server import _drive

from r2act.systems import INSTALLED

SUBMIT = {
    "rca": {"service": "cart", "fault_type": "pod_failure"},
    "plan": {"operation": "restart_service", "target": "cart"},
}


def _first_case(dataset: Path) -> str:
    return r2act("agent", "cases", "--dataset", str(dataset)).stdout.split()[0]


def _agent(stub: OpenAIStub, dataset: Path, out: Path, case: str, *extra: str) -> Any:
    return r2act(
        "agent", "run", "--dataset", str(dataset), "--model", "stub-model",
        "--base-url", stub.base_url, "--out", str(out), "--attempts", "2",
        "--backoff", "0.01", "--timeout", "5", "--only", case, *extra, check=False,
    )  # fmt: skip


def _system_message(request: dict[str, Any]) -> str:
    return str(next(m["content"] for m in request["messages"] if m["role"] == "system"))


def test_tools_mode_works_an_astronomy_shop_case(astronomy_dataset: Path, tmp_path: Path) -> None:
    case, out = _first_case(astronomy_dataset), tmp_path / "tools.jsonl"
    script = [
        Reply(tool_calls=[("services", {}), ("topology", {})]),
        Reply(tool_calls=[("submit", SUBMIT)]),
    ]
    with OpenAIStub(script) as stub:
        done = _agent(stub, astronomy_dataset, out, case, "--mode", "tools")
    assert done.returncode == 0, done.stderr
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["incident_id"] == case and line["plan"] == SUBMIT["plan"]
    tool_answers = [m["content"] for m in stub.requests[1]["messages"] if m["role"] == "tool"]
    assert '"cart"' in tool_answers[0]  # the Astronomy Shop's services, not Online Boutique's
    prompt = _system_message(stub.requests[0])
    shop = INSTALLED["astronomyshop"].fault_types
    assert f"Fault types: {', '.join(f.value for f in shop)}." in prompt
    assert "feature_flag" in prompt


def _prompt_request(dataset: Path, tmp_path: Path) -> dict[str, Any]:
    case = _first_case(dataset)
    with OpenAIStub([Reply(content=json.dumps(SUBMIT))]) as stub:
        done = _agent(stub, dataset, tmp_path / f"{dataset.name}.jsonl", case)
    assert done.returncode == 0, done.stderr
    return stub.requests[0]


def test_each_system_is_offered_its_own_fault_types(
    smoke_dataset: Path, astronomy_dataset: Path, tmp_path: Path
) -> None:
    for dataset, system in (
        (smoke_dataset, "onlineboutique"),
        (astronomy_dataset, "astronomyshop"),
    ):
        request = _prompt_request(dataset, tmp_path)
        schema = request["response_format"]["json_schema"]["schema"]
        offered = schema["properties"]["rca"]["properties"]["fault_type"]["enum"]
        assert offered == [f.value for f in INSTALLED[system].fault_types]
        assert ("feature_flag" in _system_message(request)) == (system == "astronomyshop")


def test_the_command_runner_works_an_astronomy_shop_case(
    astronomy_dataset: Path, tmp_path: Path
) -> None:
    script, out = tmp_path / "agent.py", tmp_path / "cmd.jsonl"
    script.write_text(AGENT)
    case = _first_case(astronomy_dataset)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{case_dir}} stdout"
    done = r2act("agent", "run", "--dataset", str(astronomy_dataset), "--command", command,
                 "--out", str(out), "--only", case, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    case_dir = out.with_name("cmd.cases") / case
    space = json.loads((case_dir / "action_space.json").read_text())
    assert line["plan"] == {"operation": "restart_service", "target": sorted(space["targets"])[0]}
    schema = json.loads((case_dir / "answer.schema.json").read_text())
    enum = schema["properties"]["rca"]["properties"]["fault_type"]["enum"]
    assert "feature_flag" in enum and "cart" in space["targets"]


def test_an_mcp_client_works_an_astronomy_shop_case(
    astronomy_dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "mcp.jsonl"
    seen = anyio.run(_drive, astronomy_dataset, out)
    assert "cart" in seen["services"]  # type: ignore[operator]
    assert seen["logs"] == 3 and seen["metric"] == "ready" and seen["state"] == "deployment"
    assert seen["submit"] == (False, "accepted; written to mcp.jsonl")
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["incident_id"] == seen["case"] and line["plan"]["operation"] == "restart_service"
