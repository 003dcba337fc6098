"""Bench: the agent harness's CPU per tool and per model turn, on a real dataset.

Usage::

    python bench/agent_overhead.py DATASET [--cases N] [--turns T]

Two measurements over N cases spread over the dataset (view ``full``), both as CPU time
of this whole process (every thread: Arrow's pool included):

1. **Per tool.** Reading a case and building its environment (what ``select_case`` does),
   then the first call of each tool on the fresh environment (first calls pay for any
   per-case index a tool builds).
2. **Per model turn.** The LLM runner in tools mode against the scripted OpenAI-protocol
   stub of the tests, which runs in a child process of its own so its CPU is not ours. T
   turns per case: T-1 turns of two tool calls (a log search and one of services,
   events, metrics, state, topology, requests), then submit. Harness CPU per turn is the
   process's CPU over the case (reading it included) minus the CPU the calling thread
   spent inside the ``openai`` SDK call (request building and HTTP), over the turns.
   The stub's CPU is printed as the floor: the same turns cost that much merely to be
   served.

Target (issue 26 item 5): harness CPU per turn < 50 ms (median over cases). Pass or fail
is judged on that CPU figure, never on wall time; wall time is printed beside it.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit" / "agents"))

from openai_stub import OpenAIStub, Reply

from r2act.agents.cases import CaseSource
from r2act.agents.env import CaseEnvironment
from r2act.agents.llm import LlmAgent, LlmSettings
from r2act.agents.tools import call

LIMIT_MS = 50.0
PROBES: list[tuple[str, dict[str, Any]]] = [
    ("services", {}),
    ("events", {"type": "Warning"}),
    ("metrics", {"query": 'cpu_usage{service=~".+"}', "step": 15}),
    ("state", {"kind": "pod", "phase": "during"}),
    ("topology", {}),
    ("requests", {}),
]
TOOLS: list[tuple[str, dict[str, Any]]] = [
    ("services", {}),
    ("topology", {}),
    ("logs", {"contains": "error", "limit": 50}),
    ("logs", {"service": "frontend", "phase": "during"}),
    ("logs", {}),
    ("events", {"type": "Warning"}),
    ("metric_names", {}),
    ("metrics", {"query": 'cpu_usage{service=~".+"}', "step": 15}),
    ("requests", {"points": True}),
    ("state", {"kind": "pod", "phase": "during"}),
    ("action_space", {}),
]


def _serve(script: list[Reply], conn: Connection) -> None:
    """Child process: serve ``script``, send the URL, wait for 'stop', send own CPU."""
    with OpenAIStub(script) as stub:  # type: ignore[arg-type]
        conn.send(stub.base_url)
        conn.recv()
    conn.send(time.process_time())


def _label(name: str, args: dict[str, Any]) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


def _ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values):7.1f} ms  max {max(values):7.1f} ms"


def per_tool(source: CaseSource, ids: list[str]) -> dict[str, list[float]]:
    """CPU ms of reading each case and of each tool's first call on it."""
    seen: dict[str, list[float]] = {}
    for case_id in ids:
        cpu = time.process_time()
        env = CaseEnvironment(source.inputs(case_id))
        seen.setdefault("read case + environment", []).append((time.process_time() - cpu) * 1e3)
        for name, args in TOOLS:
            cpu = time.process_time()
            answer, error = call(env, name, args)
            seen.setdefault(_label(name, args), []).append((time.process_time() - cpu) * 1e3)
            assert not error, (name, answer)
    return seen


def per_turn(source: CaseSource, ids: list[str], turns: int) -> dict[str, list[float]]:
    """Harness CPU ms per turn (process CPU minus the SDK's), wall ms, stub CPU ms."""
    submit = {"rca": {"service": "frontend", "fault_type": "pod_failure"}, "plan": None}
    script: list[Reply] = []
    for _ in ids:
        for turn in range(turns - 1):
            probe = PROBES[turn % len(PROBES)]
            script.append(Reply(tool_calls=[("logs", {"contains": "error", "limit": 50}), probe]))
        script.append(Reply(tool_calls=[("submit", submit)]))
    parent, child = multiprocessing.get_context("spawn").Pipe()
    stub = multiprocessing.get_context("spawn").Process(target=_serve, args=(script, child))
    stub.start()
    base_url = parent.recv()
    agent = LlmAgent(
        LlmSettings(
            model="bench", base_url=base_url, api_key="x", mode="tools", max_steps=turns + 1
        )
    )
    seen: dict[str, list[float]] = {"harness": [], "wall": [], "sdk": []}
    try:
        for case_id in ids:
            cpu, thread, wall = time.process_time(), time.thread_time(), time.perf_counter()
            result = agent.solve(source.inputs(case_id))
            cpu, thread = time.process_time() - cpu, time.thread_time() - thread
            wall = time.perf_counter() - wall
            final = result.trajectory.final_metrics
            assert final is not None and result.failure is None, result.failure
            steps = final.extra["model_calls"]
            # the runner's own thread CPU minus its harness share is the SDK's CPU
            sdk = max(thread - final.extra["harness_cpu_s_per_step"] * steps, 0.0)
            seen["harness"].append((cpu - sdk) * 1e3 / steps)
            seen["wall"].append((wall - final.extra["model_s"]) * 1e3 / steps)
            seen["sdk"].append(sdk * 1e3 / steps)
    finally:
        parent.send("stop")
        stub_cpu = parent.recv()
        stub.join()
    seen["stub"] = [stub_cpu * 1e3 / (len(ids) * turns)]
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--turns", type=int, default=8)
    args = parser.parse_args()
    source = CaseSource(args.dataset, "full")
    every = source.ids()
    ids = every[:: max(len(every) // args.cases, 1)][: args.cases]
    tools = per_tool(source, ids)
    turns = per_turn(source, ids, args.turns)
    print(f"dataset: {args.dataset} ({len(every)} cases), {len(ids)} cases spread over it")
    print("per tool (process CPU; first call on a fresh case environment):")
    for label, values in tools.items():
        print(f"  {label:56s} {_ms(values)}")
    p50 = statistics.median(turns["harness"])
    print(
        f"per model turn ({args.turns} turns per case): harness CPU {_ms(turns['harness'])} "
        f"(limit {LIMIT_MS:.0f}); outside-the-model wall p50 "
        f"{statistics.median(turns['wall']):.1f} ms; SDK CPU per turn p50 "
        f"{statistics.median(turns['sdk']):.1f} ms; floor: the stub's CPU to serve a turn "
        f"{turns['stub'][0]:.1f} ms; ratio {p50 / max(turns['stub'][0], 1e-9):.2f}x that floor"
    )
    ok = p50 < LIMIT_MS
    print(f"{'PASS' if ok else 'FAIL'}: harness CPU per turn p50 {p50:.1f} ms < {LIMIT_MS:.0f} ms")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
