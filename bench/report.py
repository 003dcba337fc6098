"""Bench: ``r2act report`` on a paper-scale run: build CPU time, page weight, leaderboard load.

Usage::

    r2act collect campaigns/r2act-302.yaml     # simulated cluster: r2act-runs/r2act-302/
    r2act audit && r2act dataset build
    for b in random majority keyword rule gold-mapper; do r2act baseline $b; done
    r2act replay r2act-runs/r2act-302/predictions/rule.jsonl
    python bench/report.py [RUN_DIR]

Targets (issue 25): the whole report (302 incidents, 5 methods, replay and trajectories)
builds in <= 30 s of CPU time, measured over the whole process tree; no page or data file
is over 5 MB; the leaderboard loads in <= 2 s in headless Chromium (measured when Playwright
and Debian's ``chromium`` are installed; said when not).

When the run has no agent trajectories, a sixth method is added with one ATIF trajectory per
case, written with r2act's own trajectory models in the shape the LLM runner writes in tools
mode (a system prompt, the case prompt, then eight agent steps, each with a tool call and a
4 KB result, token counts, cost and latency): what a report must render, without needing an
LLM endpoint. Its answers are the rule baseline's. The site goes to a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT_CPU_S = 30.0
LIMIT_PAGE = 5 * 2**20
LIMIT_LOAD_S = 2.0
STEPS = 8
RESULT_BYTES = 4096


def _newest_run() -> Path:
    runs = [p.parent for p in Path("r2act-runs").glob("*/dataset") if p.is_dir()]
    if not runs:
        sys.exit("no run found: pass RUN_DIR (see the usage in this file's docstring)")
    return max(runs, key=lambda p: p.stat().st_mtime)


def _agent_files(run: Path, out: Path) -> tuple[Path, Path]:
    """An 'agent' predictions file (the rule baseline's lines) and one trajectory per case."""
    from r2act.agents.trajectory import (
        Agent,
        Metrics,
        Observation,
        ObservationResult,
        ToolCall,
        Trajectory,
    )

    source = run / "predictions" / "rule.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    predictions = out / "agent.jsonl"
    trajectories = out / "agent.trajectories"
    trajectories.mkdir(parents=True)
    rows = [json.loads(line) for line in lines if line.strip()]
    predictions.write_text(
        "".join(json.dumps({**r, "method": "agent"}) + "\n" for r in rows), encoding="utf-8"
    )
    result = ("2026-01-01T00:00:00Z frontend GET /cart 500 took_ms=812 " * 80)[:RESULT_BYTES]
    for row in rows:
        case = row["incident_id"]
        trajectory = Trajectory(
            session_id=f"{case}:tools",
            agent=Agent(name="r2act-llm-runner", version="bench", model_name="bench-model"),
        )
        trajectory.add("system", "You are an SRE diagnosing one incident. " * 20)
        trajectory.add("user", f"Investigate case {case} with the tools, then submit.")
        for step in range(STEPS):
            call = ToolCall(
                tool_call_id=f"call_{step}",
                function_name="logs",
                arguments={"service": "frontend", "phase": "during", "limit": 50},
            )
            trajectory.add(
                "agent",
                f"Step {step}: reading the frontend's errors during the fault.",
                tool_calls=[call],
                observation=Observation(
                    results=[ObservationResult(source_call_id=call.tool_call_id, content=result)]
                ),
                metrics=Metrics(
                    prompt_tokens=2400 + step * 900, completion_tokens=60, cost_usd=0.0004
                ),
                extra={"latency_s": 1.2, "retries": 0},
            )
        trajectory.finish({"outcome": "answered", "latency_s": 9.8, "model_calls": STEPS})
        (trajectories / f"{case}.json").write_text(trajectory.model_dump_json(indent=1), "utf-8")
    return predictions, trajectories


def _build(run: Path, site: Path, extra: list[str]) -> tuple[float, float]:
    """Build the report in a child process; (CPU s of its whole tree, wall s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, "-m", "r2act", "report", str(run), "--out", str(site), *extra]
    subprocess.run(command, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def _weights(site: Path) -> dict[str, object]:
    files = [p for p in site.rglob("*") if p.is_file()]
    pages = [p for p in files if p.suffix == ".html"]
    largest = max(files, key=lambda p: p.stat().st_size)
    largest_page = max(pages, key=lambda p: p.stat().st_size)
    return {
        "files": len(files),
        "pages": len(pages),
        "total_mib": round(sum(p.stat().st_size for p in files) / 2**20, 1),
        "largest_file": (str(largest.relative_to(site)), largest.stat().st_size),
        "largest_page": (str(largest_page.relative_to(site)), largest_page.stat().st_size),
        "leaderboard_kib": round((site / "index.html").stat().st_size / 1024, 1),
    }


def _load_seconds(page: Path) -> float | None:
    """Load time of ``page`` in headless Chromium (navigation start to load end), or None."""
    chromium = os.environ.get("R2ACT_CHROMIUM") or shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if chromium is None:
        return None
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        tab = browser.new_page()
        tab.goto(page.resolve().as_uri())  # a first visit warms the browser's own caches
        tab = browser.new_page()
        tab.goto(page.resolve().as_uri(), wait_until="load")
        timing = tab.evaluate(
            "() => { const t = performance.getEntriesByType('navigation')[0];"
            " return t.loadEventEnd - t.startTime; }"
        )
        browser.close()
    return float(timing) / 1000


def main() -> int:
    """Build, measure, print; exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", nargs="?", type=Path)
    args = parser.parse_args()
    run = args.run or _newest_run()
    with tempfile.TemporaryDirectory(prefix="r2act-bench-report-") as tmp:
        extra: list[str] = []
        has_agent = any((run / "predictions").glob("*.trajectories"))
        if not has_agent:
            predictions, trajectories = _agent_files(run, Path(tmp) / "agent")
            extra = ["--predictions", str(predictions), "--trajectories", str(trajectories)]
        site = Path(tmp) / "site"
        cpu, wall = _build(run, site, extra)
        weights = _weights(site)
        load = _load_seconds(site / "index.html")
        methods = len(list((run / "predictions").glob("*.jsonl"))) + (0 if has_agent else 1)
        replays = len(list((run / "replay").glob("*/replay.jsonl")))
    print(f"run: {run}  ({methods} methods, {replays} replay(s), trajectories"
          f"{' of the run' if has_agent else ' synthesised for every case'})")  # fmt: skip
    print(f"build: {cpu:.1f} s CPU (whole process tree), {wall:.1f} s wall  "
          f"[target <= {LIMIT_CPU_S:.0f} s CPU]")  # fmt: skip
    print(f"site: {weights['pages']} pages, {weights['files']} files, {weights['total_mib']} MiB; "
          f"leaderboard {weights['leaderboard_kib']} KiB")  # fmt: skip
    name, size = weights["largest_page"]  # type: ignore[misc]
    fname, fsize = weights["largest_file"]  # type: ignore[misc]
    print(f"largest page: {name} {size / 2**20:.2f} MiB; largest file: {fname} "
          f"{fsize / 2**20:.2f} MiB  [target < 5 MiB]")  # fmt: skip
    if load is None:
        print("leaderboard load: not measured (needs Playwright and Debian's chromium)")
    else:
        print(f"leaderboard load in headless Chromium: {load:.2f} s  "
              f"[target <= {LIMIT_LOAD_S:.0f} s]")  # fmt: skip
    ok = cpu <= LIMIT_CPU_S and fsize < LIMIT_PAGE and (load is None or load <= LIMIT_LOAD_S)
    print("PASS" if ok else "OVER TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
