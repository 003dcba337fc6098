"""``r2act mcp serve --transport http`` driven by official ``mcp`` clients over loopback.

A real server process per test: one session's pathological label matcher must not hold up
another session; two sessions' selections and submissions stay apart (handshake sessions
and the stateless protocol's handles); a foreign Host or Origin, and a missing bearer
token, are refused; the advertised schemas carry the limits the tools enforce.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter

from r2act import __version__
from r2act.schema import RecoveryPlan

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def _serve(
    dataset: Path, out: Path, *extra: str, env: dict[str, str] | None = None
) -> Iterator[str]:
    port = _free_port()
    argv = [sys.executable, "-m", "r2act", "mcp", "serve", "--dataset", str(dataset),
            "--out", str(out), "--transport", "http", "--port", str(port), *extra]  # fmt: skip
    proc = subprocess.Popen(
        argv, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"server exited {proc.returncode}: {proc.stderr.read()}")  # type: ignore[union-attr]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("server did not listen within 60 s")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def served(
    smoke_dataset: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """One default server for the tests that need no options of their own: (URL, --out)."""
    out = tmp_path_factory.mktemp("served") / "p.jsonl"
    with _serve(smoke_dataset, out) as url:
        yield url, out


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _post(url: str, headers: dict[str, str]) -> int:
    """Status of an initialize POST sent with exactly these extra headers."""
    host, port = url.split("//")[1].split("/", maxsplit=1)[0].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    body = json.dumps(INIT)
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    conn.putrequest("POST", "/mcp", skip_host=True)
    merged = {"Host": f"{host}:{port}", **base, **headers}
    for key, value in merged.items():
        conn.putheader(key, value)
    conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body.encode())
    status = conn.getresponse().status
    conn.close()
    return status


async def _first_case(client: Client) -> list[str]:
    listing = _text(await client.call_tool("list_cases", {}))
    return [row.split("\t")[0] for row in listing.splitlines()]


def test_a_pathological_matcher_does_not_hold_up_another_session(
    served: tuple[str, Path],
) -> None:
    seen: dict[str, Any] = {}

    async def slow(url: str) -> None:
        async with Client(url, mode="legacy") as a:
            cases = await _first_case(a)
            await a.call_tool("select_case", {"case_id": cases[0]})
            started = time.monotonic()
            result = await a.call_tool("metrics", {"query": 'ready{pod=~"(.*.*)*x"}'})
            seen["slow"] = (time.monotonic() - started, result.is_error, _text(result))

    async def other(url: str) -> None:
        async with Client(url, mode="legacy") as b:
            cases = await _first_case(b)
            await b.call_tool("select_case", {"case_id": cases[1]})
            await anyio.sleep(0.3)  # the first session's matcher is running by now
            started = time.monotonic()
            services = json.loads(_text(await b.call_tool("services", {})))
            seen["other"] = (time.monotonic() - started, len(services["services"]))

    async def both(url: str) -> None:
        with anyio.fail_after(60):  # the old server never answered either session
            async with anyio.create_task_group() as group:
                group.start_soon(slow, url)
                group.start_soon(other, url)

    anyio.run(both, served[0])
    seconds, count = seen["other"]
    # the old server never answered (Python's re backtracked for ever, holding the GIL);
    # the bound is loose for a loaded machine, the matcher itself takes milliseconds
    assert count > 5 and seconds < 30, seen
    seconds, is_error, text = seen["slow"]
    assert seconds < 30 and not is_error, seen
    answer = json.loads(text)
    # RE2 semantics, fully anchored: only pods whose name ends in "x" match
    assert all(s["labels"]["pod"].endswith("x") for s in answer["series"])


def test_sessions_keep_their_own_case_and_submissions(served: tuple[str, Path]) -> None:
    url, out = served
    seen: dict[str, Any] = {}

    async def drive(url: str) -> None:
        async with Client(url, mode="legacy") as a, Client(url, mode="legacy") as b:
            cases = await _first_case(a)
            picked_a = _text(await a.call_tool("select_case", {"case_id": cases[0]}))
            picked_b = _text(await b.call_tool("select_case", {"case_id": cases[1]}))
            seen["handles"] = (picked_a.split()[-1], picked_b.split()[-1])
            plan = {"operation": "no_action"}
            seen["a"] = _text(await a.call_tool("submit", {"plan": plan}))
            seen["b"] = _text(await b.call_tool("submit", {"plan": plan}))
            seen["cases"] = cases
        # the stateless protocol keeps no session: a handle from select_case stands in
        async with Client(url) as c:
            orphan = await c.call_tool("services", {})
            seen["orphan"] = (orphan.is_error, _text(orphan))
            picked = _text(await c.call_tool("select_case", {"case_id": cases[2]}))
            handle = picked.split()[-1]
            services = await c.call_tool("services", {"session": handle})
            seen["stateless"] = (services.is_error, sorted(json.loads(_text(services))))
            seen["c"] = _text(
                await c.call_tool("submit", {"plan": {"operation": "no_action"}, "session": handle})
            )
            seen["c_handle"] = handle

    anyio.run(drive, url)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    cases = seen["cases"]
    assert [line["incident_id"] for line in lines] == cases[:3], seen
    sessions = [line["evidence"]["mcp_session"] for line in lines]
    assert sessions == [*seen["handles"], seen["c_handle"]] and len(set(sessions)) == 3
    assert all(line["method"] == "mcp-agent" for line in lines)
    assert lines[0]["evidence"]["client"].startswith("mcp")
    assert seen["orphan"][0] and "session=<handle>" in seen["orphan"][1]
    assert seen["stateless"] == (False, ["phases", "services", "view"])


def test_foreign_host_and_origin_are_refused(served: tuple[str, Path]) -> None:
    url = served[0]
    port = url.split(":")[2].split("/")[0]
    assert _post(url, {}) == 200
    assert _post(url, {"Origin": f"http://localhost:{port}"}) == 200
    assert _post(url, {"Host": "evil.example:80"}) == 421
    assert _post(url, {"Origin": "http://evil.example"}) == 403
    # another program on this machine (another local port) is another origin
    assert _post(url, {"Origin": "http://127.0.0.1:1"}) == 403


def test_off_loopback_needs_a_token_and_the_token_is_checked(
    smoke_dataset: Path, tmp_path: Path
) -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "r2act", "mcp", "serve", "--dataset", str(smoke_dataset),
         "--transport", "http", "--host", "0.0.0.0", "--port", str(_free_port())],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    assert "--token-env" in refused.stderr and "Traceback" not in refused.stderr
    seen: dict[str, Any] = {}

    async def drive(url: str) -> None:
        headers = {"Authorization": "Bearer s3cret-token"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            seen["cases"] = len(await _first_case(client))

    env = {"R2ACT_TEST_TOKEN": "s3cret-token"}
    with _serve(smoke_dataset, tmp_path / "p.jsonl", "--token-env", "R2ACT_TEST_TOKEN",
                env=env) as url:  # fmt: skip
        assert _post(url, {}) == 401
        assert _post(url, {"Authorization": "Bearer wrong"}) == 401
        assert _post(url, {"Authorization": "Bearer s3cret-token"}) == 200
        assert _post(url, {"Authorization": "Bearer s3cret-token", "Host": "evil:1"}) == 421
        anyio.run(drive, url)
    assert seen["cases"] > 5


def test_advertised_schemas_state_what_is_enforced(served: tuple[str, Path]) -> None:
    seen: dict[str, Any] = {}

    async def drive(url: str) -> None:
        async with Client(url, mode="legacy") as client:
            init = client.session._initialize_result
            seen["version"] = init.server_info.version if init else None
            seen["tools"] = {t.name: t.input_schema for t in (await client.list_tools()).tools}
            cases = await _first_case(client)
            await client.call_tool("select_case", {"case_id": cases[0]})
            big = await client.call_tool("logs", {"limit": 201})
            long = await client.call_tool("events", {"reason": "x" * 129})
            seen["refused"] = (big.is_error, long.is_error)

    anyio.run(drive, served[0])
    assert seen["version"] == __version__
    tools = seen["tools"]
    limit = next(a for a in tools["logs"]["properties"]["limit"]["anyOf"] if a["type"] != "null")
    assert (limit["minimum"], limit["maximum"]) == (1, 200)
    for tool, name in (("logs", "contains"), ("logs", "service"), ("events", "reason"),
                       ("events", "object_name"), ("state", "name"), ("requests", "route"),
                       ("metrics", "query"), ("select_case", "case_id")):  # fmt: skip
        prop = tools[tool]["properties"][name]
        typed = [a for a in prop.get("anyOf", [prop]) if a.get("type") == "string"]
        assert typed and "maxLength" in typed[0], (tool, name, prop)
    step = tools["metrics"]["properties"]["step"]["anyOf"][0]
    assert (step["minimum"], step["maximum"]) == (1, 3600)
    submit = tools["submit"]
    shipped = TypeAdapter(RecoveryPlan).json_schema()
    plan = submit["properties"]["plan"]
    assert plan["anyOf"][0]["discriminator"]["propertyName"] == "operation"
    assert set(shipped["$defs"]) <= set(submit["$defs"])
    for name, definition in shipped["$defs"].items():
        assert submit["$defs"][name] == definition
    assert seen["refused"] == (True, True)


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_serve_refuses_an_edited_dataset(
    smoke_dataset: Path, tmp_path: Path, transport: str
) -> None:
    import shutil

    copy = tmp_path / "dataset"
    shutil.copytree(smoke_dataset, copy)
    logs = copy / "observations" / "logs.parquet"
    logs.write_bytes(logs.read_bytes()[:-16] + b"\0" * 16)
    argv = [sys.executable, "-m", "r2act", "mcp", "serve", "--dataset", str(copy),
            "--transport", transport, "--port", str(_free_port())]  # fmt: skip
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2, done.stderr
    assert "observations/logs.parquet" in done.stderr and "--no-verify" in done.stderr
    assert done.stderr.count("\n") == 1


def test_budgets_are_per_session(smoke_dataset: Path, tmp_path: Path) -> None:
    seen: list[tuple[str, bool, str]] = []

    async def drive(url: str) -> None:
        async with Client(url, mode="legacy") as a, Client(url, mode="legacy") as b:
            cases = await _first_case(a)
            await a.call_tool("select_case", {"case_id": cases[0]})
            await b.call_tool("select_case", {"case_id": cases[0]})
            for name, client in (("a", a), ("a", a), ("a", a), ("b", b)):
                result = await client.call_tool("topology", {})
                seen.append((name, result.is_error, _text(result)[:90]))
            done = await a.call_tool("submit", {"plan": None})  # submit is never budgeted
            seen.append(("a", done.is_error, _text(done)))

    with _serve(smoke_dataset, tmp_path / "p.jsonl", "--max-calls", "2") as url:
        anyio.run(drive, url)
    assert [e for _, e, _ in seen] == [False, False, True, False, False], seen
    assert "budget of 2 tool calls" in seen[2][2]


def test_a_call_past_its_time_limit_answers_an_error_and_others_go_on() -> None:
    from mcp.server.mcpserver.exceptions import ToolError as McpToolError

    from r2act.agents.mcp_server import _bounded

    results: dict[str, Any] = {}

    async def slow() -> None:
        try:
            await _bounded(lambda: time.sleep(3) or "late", 0.5, "metrics")  # type: ignore[func-returns-value]
        except McpToolError as error:
            results["slow"] = (str(error), time.monotonic() - started)

    async def quick() -> None:
        await anyio.sleep(0.1)
        results["quick"] = (await _bounded(lambda: "ok", 5, "services"), time.monotonic() - started)

    async def both() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(slow)
            group.start_soon(quick)

    started = time.monotonic()
    anyio.run(both)
    message, when = results["slow"]
    assert "longer than 0.5 s" in message and when < 2
    assert results["quick"][0] == "ok" and results["quick"][1] < 0.5
