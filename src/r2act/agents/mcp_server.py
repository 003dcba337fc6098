"""``r2act mcp serve``: the tool environment as an MCP server (official ``mcp`` SDK).

An MCP-capable agent lists the cases (``list_cases``), picks one (``select_case``), asks
the same tools as :mod:`r2act.agents.tools` about it and ends with ``submit``, whose
answer is appended to the predictions file as one line. The first submission for a case
counts (``r2act evaluate`` reads the first line per id), so a second one is refused.
The server holds one selected case: run one agent per server.

Tool errors come back as MCP tool errors (``is_error``) with a message that says how to
ask, never a traceback.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError

from r2act.agents.cases import CaseSource
from r2act.agents.env import CaseEnvironment
from r2act.agents.run import finished_ids
from r2act.agents.tools import BY_NAME, call

INSTRUCTIONS = (
    "Benchmark cases of Kubernetes microservice incidents. Call list_cases, then "
    "select_case, investigate with services/topology/logs/events/metric_names/metrics/"
    "requests/state/action_space, and finish with submit(rca, plan). One submission per "
    "case counts."
)
Phase = Literal["pre", "during", "post"]


class CaseServer:
    """State of one server: the dataset view, the selected case, the predictions file."""

    def __init__(self, source: CaseSource, out: Path, method: str = "mcp-agent") -> None:
        self.source = source
        self.out = out
        self.method = method
        self.env: CaseEnvironment | None = None
        self._lock = threading.Lock()
        self.submitted = finished_ids(out)

    def select(self, case_id: str) -> str:
        """Make ``case_id`` the case every tool answers about."""
        if case_id not in set(self.source.ids()):
            raise McpToolError(f"unknown case {case_id!r}; call list_cases")
        self.env = CaseEnvironment(self.source.inputs(case_id))
        return f"selected {case_id} (view {self.source.view})"

    def ask(self, name: str, arguments: dict[str, Any]) -> str:
        """Answer tool ``name`` about the selected case."""
        if self.env is None:
            raise McpToolError("no case selected; call list_cases, then select_case")
        answer, error = call(self.env, name, {k: v for k, v in arguments.items() if v is not None})
        if error:
            raise McpToolError(answer)
        return answer

    def submit(self, rca: dict[str, Any] | None, plan: dict[str, Any] | None) -> str:
        """Check the answer and append it as a predictions line (once per case)."""
        if self.env is None:
            raise McpToolError("no case selected; call list_cases, then select_case")
        case_id = self.env.case.case_id
        with self._lock:
            if case_id in self.submitted:
                raise McpToolError(f"{case_id} already has a submission; the first one counts")
            self.ask("submit", {"rca": rca, "plan": plan})
            assert self.env.submission is not None
            line = self.env.submission.model_copy(update={"method": self.method})
            self.out.parent.mkdir(parents=True, exist_ok=True)
            with self.out.open("a", encoding="utf-8", newline="\n") as handle:
                handle.write(line.model_dump_json() + "\n")
            self.submitted.add(case_id)
        return f"accepted; written to {self.out.name}"


def build_server(source: CaseSource, out: Path, method: str = "mcp-agent") -> MCPServer:
    """An MCP server over ``source`` that appends submissions to ``out``."""
    state = CaseServer(source, out, method)
    server: MCPServer = MCPServer("r2act", instructions=INSTRUCTIONS, log_level="WARNING")

    def describe(name: str) -> str:
        return BY_NAME[name].description

    @server.tool(description="Case ids of the dataset, with whether each has a submission.")
    def list_cases() -> str:
        rows = [f"{c}\t{'submitted' if c in state.submitted else 'open'}" for c in source.ids()]
        return "\n".join(rows)

    @server.tool(description="Choose the case the other tools answer about.")
    def select_case(case_id: str) -> str:
        return state.select(case_id)

    @server.tool(description=describe("services"))
    def services() -> str:
        return state.ask("services", {})

    @server.tool(description=describe("topology"))
    def topology() -> str:
        return state.ask("topology", {})

    @server.tool(description=describe("logs"))
    def logs(  # noqa: PLR0917 - the tool's arguments
        service: str | None = None,
        phase: Phase | None = None,
        since: float | None = None,
        until: float | None = None,
        contains: str | None = None,
        limit: int | None = None,
    ) -> str:
        return state.ask(
            "logs",
            {
                "service": service,
                "phase": phase,
                "since": since,
                "until": until,
                "contains": contains,
                "limit": limit,
            },
        )

    @server.tool(description=describe("events"))
    def events(
        phase: Phase | None = None,
        object_name: str | None = None,
        reason: str | None = None,
        type: Literal["Normal", "Warning"] | None = None,
        limit: int | None = None,
    ) -> str:
        return state.ask(
            "events",
            {
                "phase": phase,
                "object_name": object_name,
                "reason": reason,
                "type": type,
                "limit": limit,
            },
        )

    @server.tool(description=describe("metric_names"))
    def metric_names() -> str:
        return state.ask("metric_names", {})

    @server.tool(description=describe("metrics"))
    def metrics(query: str, phase: Phase | None = None, step: float | None = None) -> str:
        return state.ask("metrics", {"query": query, "phase": phase, "step": step})

    @server.tool(description=describe("requests"))
    def requests(
        service: str | None = None,
        route: str | None = None,
        source: Literal["locust-stats", "frontend-log"] | None = None,
        phase: Phase | None = None,
        points: bool = False,
    ) -> str:
        return state.ask(
            "requests",
            {
                "service": service,
                "route": route,
                "source": source,
                "phase": phase,
                "points": points,
            },
        )

    @server.tool(name="state", description=describe("state"))
    def state_(
        kind: Literal["deployment", "pod"], name: str | None = None, phase: Phase = "during"
    ) -> str:
        return state.ask("state", {"kind": kind, "name": name, "phase": phase})

    @server.tool(description=describe("action_space"))
    def action_space() -> str:
        return state.ask("action_space", {})

    @server.tool(description=describe("submit"))
    def submit(rca: dict[str, Any] | None = None, plan: dict[str, Any] | None = None) -> str:
        return state.submit(rca, plan)

    del list_cases, select_case, services, topology, logs, events, metric_names, metrics
    del requests, state_, action_space, submit  # registered on the server; the names are not needed
    return server
