"""Methods and agents plug in: tools over a case, an MCP server, LLM and command runners.

Reads datasets through one boundary (:mod:`r2act.agents.cases`) and never imports the
cluster package. Start with :class:`CaseSource` (a dataset's cases, method-visible inputs
only), :class:`CaseEnvironment` (the tools over one case) and :func:`run_cases` (a solver
over a dataset: predictions, ATIF trajectories, a run summary). The ``mcp`` and ``openai``
SDKs are imported only by the modules that use them (``agents.mcp_server``, ``agents.llm``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from r2act._lazy import exports

if TYPE_CHECKING:
    from r2act.agents.answers import FinalAnswer, answer_schema, parse_answer
    from r2act.agents.cases import CaseInputs, CaseSource
    from r2act.agents.env import CaseEnvironment
    from r2act.agents.run import RunReport, run_cases
    from r2act.agents.tool_types import ToolError
    from r2act.agents.tools import TOOLS, call

__getattr__ = exports(
    __name__,
    {
        **dict.fromkeys(("FinalAnswer", "answer_schema", "parse_answer"), "r2act.agents.answers"),
        **dict.fromkeys(("CaseInputs", "CaseSource"), "r2act.agents.cases"),
        "CaseEnvironment": "r2act.agents.env",
        **dict.fromkeys(("RunReport", "run_cases"), "r2act.agents.run"),
        "ToolError": "r2act.agents.tool_types",
        **dict.fromkeys(("TOOLS", "call"), "r2act.agents.tools"),
    },
)
"""Names are imported on first use: the MCP server's start reads the catalogue and one
dataset table, and pays neither for the tool environment nor for the runners."""

__all__ = [
    "TOOLS",
    "CaseEnvironment",
    "CaseInputs",
    "CaseSource",
    "FinalAnswer",
    "RunReport",
    "ToolError",
    "answer_schema",
    "call",
    "parse_answer",
    "run_cases",
]
