"""Trajectories in Harbor's Agent Trajectory Interchange Format (ATIF v1.4), and run summaries.

ATIF fits what a run records: a root object with ``schema_version``, ``session_id``,
``agent`` (name, version, model) and ``steps`` (system prompt, user prompt, then one agent
step per model call with its ``tool_calls``, the ``observation`` results keyed by
``source_call_id`` and per-step ``metrics`` with token counts and ``cost_usd``), plus
``final_metrics``. SREGym converts its agents' traces to the same format, so tools that
read theirs read ours. What ATIF has no field for lives in the ``extra`` objects it
provides: per-step latency, retries and harness time; per-case outcome and failure kind.

The models are written here from the published field tables (no code was copied); they
accept only the fields used, so a typo in the writer fails loudly in tests.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ATIF_VERSION = "ATIF-v1.4"


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Agent(_M):
    """Which agent system produced the trajectory."""

    name: str
    version: str
    model_name: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class ToolCall(_M):
    """One function call of an agent step."""

    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]


class ObservationResult(_M):
    """The answer to one tool call (or to a non-tool action when ``source_call_id`` is None)."""

    source_call_id: str | None = None
    content: str | None = None


class Observation(_M):
    """Environment feedback of one step."""

    results: list[ObservationResult]


class Metrics(_M):
    """Token counts and cost of one model call."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class Step(_M):
    """One turn: the system prompt, a user message or an agent's model call."""

    step_id: int
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    message: str
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class FinalMetrics(_M):
    """Totals over the trajectory."""

    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: int | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class Trajectory(_M):
    """One case's whole interaction."""

    schema_version: Literal["ATIF-v1.4"] = "ATIF-v1.4"
    session_id: str
    agent: Agent
    steps: list[Step] = Field(default_factory=list)
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    def add(self, source: Literal["system", "user", "agent"], message: str, **fields: Any) -> Step:
        """Append a step with the next id."""
        step = Step(step_id=len(self.steps) + 1, source=source, message=message, **fields)
        self.steps.append(step)
        return step

    def finish(self, extra: dict[str, Any]) -> None:
        """Fill ``final_metrics`` from the agent steps, with ``extra`` (outcome, timings)."""
        agent = [s for s in self.steps if s.source == "agent" and s.metrics is not None]
        costs = [s.metrics.cost_usd for s in agent if s.metrics and s.metrics.cost_usd is not None]

        def total(name: str) -> int:
            return sum(getattr(s.metrics, name) or 0 for s in agent)

        tools = Counter(c.function_name for s in self.steps for c in (s.tool_calls or []))
        self.final_metrics = FinalMetrics(
            total_prompt_tokens=total("prompt_tokens"),
            total_completion_tokens=total("completion_tokens"),
            total_cached_tokens=total("cached_tokens"),
            total_cost_usd=round(sum(costs), 8) if costs else None,
            total_steps=len(self.steps),
            extra={"tool_calls": dict(sorted(tools.items())), **extra},
        )


def write_json_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary sibling (never a half file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def trajectory_dir(predictions: Path) -> Path:
    """Where a run writes its trajectories: ``<out stem>.trajectories/`` beside ``--out``."""
    return predictions.with_name(predictions.stem + ".trajectories")


def summary_path(predictions: Path) -> Path:
    """Where a run writes its summary: ``<out stem>.summary.json`` beside ``--out``."""
    return predictions.with_name(predictions.stem + ".summary.json")


def read_trajectories(directory: Path) -> list[Trajectory]:
    """Every trajectory in ``directory`` (sorted by file name); unreadable ones are skipped."""
    out = []
    for path in sorted(directory.glob("*.json")):
        try:
            out.append(Trajectory.model_validate_json(path.read_bytes()))
        except (OSError, ValueError):
            continue
    return out


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return round(ordered[rank - 1], 6)


def summarize(trajectories: list[Trajectory]) -> dict[str, Any]:
    """Per-run figures: cases, tokens, cost, p50/p95 seconds per case, failures by kind."""
    finals = [t.final_metrics for t in trajectories if t.final_metrics is not None]
    seconds = [float(f.extra.get("latency_s", 0.0)) for f in finals]
    harness = [float(f.extra.get("harness_s_per_step", 0.0)) for f in finals]
    harness_cpu = [float(f.extra.get("harness_cpu_s_per_step", 0.0)) for f in finals]
    failures = Counter(str(f.extra["failure"]) for f in finals if f.extra.get("failure"))
    tools: Counter[str] = Counter()
    for f in finals:
        tools.update(f.extra.get("tool_calls", {}))
    costs = [f.total_cost_usd for f in finals if f.total_cost_usd is not None]
    answered = sum(1 for f in finals if f.extra.get("outcome") == "answered")
    return {
        "cases": len(finals),
        "answered": answered,
        "failures": dict(sorted(failures.items())),
        "prompt_tokens": sum(f.total_prompt_tokens or 0 for f in finals),
        "completion_tokens": sum(f.total_completion_tokens or 0 for f in finals),
        "cost_usd": round(sum(costs), 8) if costs else None,
        "model_calls": sum(int(f.extra.get("model_calls", 0)) for f in finals),
        "tool_calls": dict(sorted(tools.items())),
        "seconds_per_case": {"p50": percentile(seconds, 50), "p95": percentile(seconds, 95)},
        "harness_ms_per_step": {
            "p50": _ms(percentile(harness, 50)),
            "p95": _ms(percentile(harness, 95)),
        },
        "harness_cpu_ms_per_step": {
            "p50": _ms(percentile(harness_cpu, 50)),
            "p95": _ms(percentile(harness_cpu, 95)),
        },
    }


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000, 3)


def dump(data: dict[str, Any]) -> str:
    """Indented, key-sorted JSON for summaries."""
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
