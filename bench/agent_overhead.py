"""Bench: the LLM runner's own time per model turn, against a scripted local endpoint.

Usage::

    python bench/agent_overhead.py DATASET [--cases N] [--turns T]

Runs tools mode over N cases, T turns each (two tool calls per turn: a log search and one
of services/events/metrics/state, then submit), against the scripted OpenAI-protocol stub
of the tests, in this process. Harness time per turn is the case's thread CPU time minus
the CPU time spent inside the ``openai`` SDK call (its request building and HTTP), divided
by the turns: building the case environment, answering tools, parsing replies and
recording the trajectory. Wall time is printed too; on a shared machine it includes
waiting for a CPU. Also printed: the SDK share per call, and
process CPU time per turn (an upper bound, since the stub runs in this process).
Target (issue 14): harness < 50 ms per turn.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit" / "agents"))

from openai_stub import OpenAIStub, Reply

from r2act.agents.cases import CaseSource
from r2act.agents.llm import LlmAgent, LlmSettings

LIMIT_MS = 50.0
PROBES = [
    ("services", {}),
    ("events", {"type": "Warning"}),
    ("metrics", {"query": 'cpu_usage{service=~".+"}', "step": 15}),
    ("state", {"kind": "pod", "phase": "during"}),
    ("topology", {}),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--turns", type=int, default=8)
    args = parser.parse_args()
    source = CaseSource(args.dataset, "full")
    ids = source.ids()[: args.cases]
    submit = {"rca": {"service": "frontend", "fault_type": "pod_failure"}, "plan": None}
    script: list[Reply | object] = []
    for _ in ids:
        for turn in range(args.turns - 1):
            probe = PROBES[turn % len(PROBES)]
            script.append(Reply(tool_calls=[("logs", {"contains": "error", "limit": 50}), probe]))
        script.append(Reply(tool_calls=[("submit", submit)]))
    with OpenAIStub(script) as stub:  # type: ignore[arg-type]
        agent = LlmAgent(
            LlmSettings(
                model="bench",
                base_url=stub.base_url,
                api_key="x",
                mode="tools",
                max_steps=args.turns + 1,
            )
        )
        cpu = time.process_time()
        results = [agent.solve(source.inputs(c)) for c in ids]
        cpu = time.process_time() - cpu
    harness, harness_cpu, sdk = [], [], []
    for result in results:
        final = result.trajectory.final_metrics
        assert final is not None and result.failure is None, result.failure
        harness.append(final.extra["harness_s_per_step"] * 1000)
        harness_cpu.append(final.extra["harness_cpu_s_per_step"] * 1000)
        sdk.append(final.extra["model_s"] * 1000 / final.extra["model_calls"])
    turns = len(ids) * args.turns
    p50 = statistics.median(harness_cpu)
    print(
        f"{len(ids)} cases x {args.turns} turns: harness CPU per turn p50 {p50:.1f} ms, "
        f"max {max(harness_cpu):.1f} ms (limit {LIMIT_MS:.0f}); wall p50 "
        f"{statistics.median(harness):.1f} ms; SDK+HTTP+stub wall per call "
        f"{statistics.median(sdk):.1f} ms; process CPU per turn {cpu * 1000 / turns:.1f} ms"
    )
    return 0 if p50 < LIMIT_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
