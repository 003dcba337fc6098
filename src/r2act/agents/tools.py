"""The tool catalogue: names, descriptions and argument schemas, shared by MCP and the runner.

One pydantic model per tool defines its arguments, so the JSON Schema an OpenAI-compatible
endpoint or an MCP client sees is generated, and :func:`call` validates an agent's
arguments with the same model before the environment answers. Every answer is returned as
compact JSON with sorted keys (deterministic bytes for identical questions).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from r2act.agents.tool_types import MAX_LIMIT, Answer, ToolError
from r2act.schema import RcaPrediction, RecoveryPlan

if TYPE_CHECKING:  # the catalogue is importable without the environment's Arrow machinery
    from r2act.agents.env import CaseEnvironment

PhaseName = Literal["pre", "during", "post"]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoArgs(_Args):
    """No arguments."""


class LogsArgs(_Args):
    """Arguments of ``logs``."""

    service: str | None = Field(
        default=None,
        max_length=253,
        description="Deployment name (see services), e.g. the entry point's.",
    )
    phase: PhaseName | None = Field(
        default=None, description="pre, during or post; all if omitted."
    )
    since: float | None = Field(default=None, description="Earliest timestamp (epoch seconds).")
    until: float | None = Field(default=None, description="Latest timestamp (epoch seconds).")
    contains: str | None = Field(default=None, max_length=200, description="Substring to match.")
    limit: int | None = Field(default=None, ge=1, le=MAX_LIMIT, description="Lines to return.")


class EventsArgs(_Args):
    """Arguments of ``events``."""

    phase: PhaseName | None = Field(default=None, description="pre, during or post.")
    object_name: str | None = Field(
        default=None, max_length=253, description="Object name prefix, e.g. a pod."
    )
    reason: str | None = Field(
        default=None, max_length=128, description="Event reason, e.g. 'BackOff'."
    )
    type: Literal["Normal", "Warning"] | None = Field(default=None, description="Event type.")
    limit: int | None = Field(default=None, ge=1, le=MAX_LIMIT, description="Events to return.")


class MetricsArgs(_Args):
    """Arguments of ``metrics``."""

    query: str = Field(
        max_length=300,
        description='Selector: NAME or NAME{label="v",label=~"re"}; labels include service, '
        "pod, container. Names: see metric_names.",
    )
    phase: PhaseName | None = Field(default=None, description="pre, during or post.")
    step: float | None = Field(
        default=None, ge=1, le=3600, description="Bucket points by this many seconds."
    )


class RequestsArgs(_Args):
    """Arguments of ``requests``."""

    service: str | None = Field(
        default=None,
        max_length=253,
        description="Deployment name (see services), e.g. the entry point's.",
    )
    route: str | None = Field(
        default=None, max_length=80, description="Route as 'METHOD /path', e.g. 'GET /product/*'."
    )
    source: Literal["locust-stats", "frontend-log"] | None = Field(
        default=None,
        description="locust-stats: what users saw; frontend-log: what the entry point logged.",
    )
    phase: PhaseName | None = Field(default=None, description="pre, during or post.")
    points: bool = Field(default=False, description="Add [ts, requests/s, errors/s] per step.")


class TracesArgs(_Args):
    """Arguments of ``traces``."""

    trace_id: str | None = Field(
        default=None,
        max_length=64,
        description="Fetch this whole trace (its spans with attributes); the other "
        "arguments are then ignored.",
    )
    service: str | None = Field(
        default=None, max_length=253, description="Service that emitted the span (see services)."
    )
    operation: str | None = Field(
        default=None, max_length=200, description="Substring of the span name."
    )
    status: Literal["unset", "ok", "error"] | None = Field(
        default=None, description="Span status code."
    )
    phase: PhaseName | None = Field(default=None, description="pre, during or post.")
    since: float | None = Field(default=None, description="Earliest span start (epoch seconds).")
    until: float | None = Field(default=None, description="Latest span start (epoch seconds).")
    limit: int | None = Field(default=None, ge=1, le=MAX_LIMIT, description="Spans to return.")


class StateArgs(_Args):
    """Arguments of ``state``."""

    kind: Literal["deployment", "pod"] = Field(description="What to list.")
    name: str | None = Field(
        default=None, max_length=253, description="One deployment, or a pod or app name."
    )
    phase: PhaseName = Field(default="during", description="State read at the end of this phase.")


class SubmitArgs(_Args):
    """Arguments of ``submit``: the prediction models themselves, so the schema is theirs."""

    rca: RcaPrediction | None = Field(
        default=None, description="Root cause: {'service': ..., 'fault_type': ...}."
    )
    plan: RecoveryPlan | None = Field(
        default=None,
        description="Recovery plan: {'operation': ..., 'target': ..., other fields the "
        "operation needs}; see action_space. Null: do nothing.",
    )


@dataclass(frozen=True)
class Tool:
    """One tool: its name, what it answers and its argument model."""

    name: str
    description: str
    args: type[_Args]
    run: Callable[[CaseEnvironment, _Args], Answer]
    views: tuple[str, ...] = ()
    """The views it is offered in; every view when empty (a tool of a modality the
    paper's views do not have is not offered there, so their catalogue is unchanged)."""

    def offered(self, view: str) -> bool:
        """Whether the tool is in the catalogue of ``view``."""
        return not self.views or view in self.views

    def schema(self) -> dict[str, Any]:
        """The argument JSON Schema (no titles; every property described)."""
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        schema.pop("description", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema.setdefault("properties", {})
        return schema


def _a(args: _Args) -> dict[str, Any]:
    return args.model_dump(exclude_none=True)


TOOLS: tuple[Tool, ...] = (
    Tool(
        "services",
        "Deployments, their pods, log lines and events per phase, and phase time windows.",
        NoArgs,
        lambda e, a: e.services(),
    ),
    Tool(
        "topology",
        "Deployments with endpoints, memory limits, dependency variables and "
        "callees; HTTP routes of the entry point.",
        NoArgs,
        lambda e, a: e.topology(),
    ),
    Tool(
        "logs",
        "Raw log lines in time order, filtered by service, phase, time and substring.",
        LogsArgs,
        lambda e, a: e.logs(**_a(a)),
    ),
    Tool(
        "events",
        "Kubernetes events in time order (views logs+events and full).",
        EventsArgs,
        lambda e, a: e.events(**_a(a)),
    ),
    Tool(
        "metric_names",
        "Names of the stored metrics (view full).",
        NoArgs,
        lambda e, a: e.metric_names(),
    ),
    Tool(
        "metrics",
        "Metric series per phase (min/mean/max/last, points with step) (view full).",
        MetricsArgs,
        lambda e, a: e.metrics(**_a(a)),
    ),
    Tool(
        "requests",
        "Request rates, errors and latency per route as users and the entry point saw them, "
        "per phase (view full).",
        RequestsArgs,
        lambda e, a: e.requests(**_a(a)),
    ),
    Tool(
        "traces",
        "Spans (view full+traces): search by service, operation, status, phase and start "
        "time (spans in start order, a row limit, per-operation counts, errors and "
        "latency), or fetch one whole trace by trace_id.",
        TracesArgs,
        lambda e, a: e.traces(**_a(a)),
        views=("full+traces",),
    ),
    Tool(
        "state",
        "Deployments or pods as read at the end of a phase (view full).",
        StateArgs,
        lambda e, a: e.state(**_a(a)),
    ),
    Tool(
        "action_space",
        "Operations, targets and field values a recovery plan may use.",
        NoArgs,
        lambda e, a: e.action_space(),
    ),
    Tool(
        "submit",
        "Submit the final answer: rca and plan. Call once when done.",
        SubmitArgs,
        lambda e, a: e.submit(**_a(a)),
    ),
)
BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}


def tools_for(view: str) -> tuple[Tool, ...]:
    """The catalogue offered in ``view``, in ``TOOLS`` order."""
    return tuple(t for t in TOOLS if t.offered(view))


def render(answer: Answer) -> str:
    """An answer as compact, key-sorted JSON."""
    return json.dumps(answer, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def call(
    env: CaseEnvironment, name: str, arguments: dict[str, Any] | str | None
) -> tuple[str, bool]:
    """Run tool ``name``; returns (answer JSON, is_error). Never raises on agent input."""
    tool = BY_NAME.get(name)
    if tool is None:
        return render({"error": f"unknown tool {name!r} (tools: {', '.join(BY_NAME)})"}), True
    try:
        raw = (
            json.loads(arguments) if isinstance(arguments, str) and arguments.strip() else arguments
        )
        args = tool.args.model_validate(raw or {})
        return render(tool.run(env, args)), False
    except json.JSONDecodeError as error:
        return render({"error": f"arguments are not JSON: {error.msg}"}), True
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "arguments"
        return render({"error": f"{where}: {first['msg']}"}), True
    except ToolError as error:
        return render({"error": str(error)}), True


@functools.cache
def _openai_tools(view: str) -> str:
    return json.dumps(
        [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.schema(),
                },
            }
            for t in tools_for(view)
        ]
    )


def openai_tools(view: str = "full") -> list[dict[str, Any]]:
    """The catalogue of ``view`` as OpenAI chat-completions ``tools`` (a fresh copy; built
    once per view)."""
    tools: list[dict[str, Any]] = json.loads(_openai_tools(view))
    return tools
