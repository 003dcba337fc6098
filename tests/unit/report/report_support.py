"""Helpers of the report tests: a small run made by the real pipeline, with hostile inputs.

The run is the demo's (the smoke campaign on the simulated cluster: collect, audit, dataset
build, baselines, replay) plus an agent run in tools mode against a scripted
OpenAI-protocol server (tests/unit/agents/openai_stub.py), so it has trajectories with tool
calls. Then hostile text is planted where untrusted text enters a report: a log line of the
dataset (a script tag, an image with onerror, a very long line), a method's name and an
agent's message and tool arguments.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "unit" / "agents"))

from openai_stub import OpenAIStub, Reply  # noqa: E402

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
LONG_LINE = "LONGLINE " + "0123456789abcdef" * 2000  # 32 KB: past the report's cut
HOSTILE_METHOD = "<img src=x onerror=alert(1)>"
PLAN = {"operation": "restart_service", "target": "cartservice"}


def r2act(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """The command line in a child process, as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "r2act", *args], capture_output=True, text=True, check=False
    )
    if check and done.returncode != 0:
        raise RuntimeError(
            f"r2act {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}"
        )
    return done


@dataclass(frozen=True)
class DemoRun:
    """The run, its report and where the hostile texts were planted."""

    run: Path
    site: Path
    hostile_incident: str
    """The incident whose logs hold HOSTILE and LONG_LINE."""
    agent_incident: str
    """An incident with a trajectory whose messages hold HOSTILE."""
    evaluation: Path
    """``r2act evaluate --json`` of the rule baseline (before the logs were tampered with:
    evaluate checks the dataset's checksums, the report reads files as they are)."""


def _plant_log_lines(dataset: Path) -> str:
    """Put HOSTILE and LONG_LINE into the first case's logs; return that case id."""
    path = dataset / "observations" / "logs.parquet"
    source = pq.ParquetFile(path)
    schema = source.schema_arrow
    out = path.with_suffix(".tmp")
    case = ""
    with pq.ParquetWriter(out, schema) as writer:
        for index in range(source.num_row_groups):
            table = source.read_row_group(index)
            if index == 0:
                case = table.column("case_id")[0].as_py()
                lines = table.column("line").to_pylist()
                lines[0], lines[1] = HOSTILE, LONG_LINE
                column = schema.get_field_index("line")
                table = table.set_column(column, schema.field("line"), pa.array(lines, pa.string()))
            writer.write_table(table, row_group_size=max(1, table.num_rows))
    out.replace(path)
    return case


def _agent(dataset: Path, out: Path) -> list[str]:
    cases = r2act("agent", "cases", "--dataset", str(dataset)).stdout.split()[:2]
    submit = {"rca": {"service": "cartservice", "fault_type": "pod_failure"}, "plan": PLAN}
    script = [
        Reply(content=HOSTILE, tool_calls=[("logs", {"service": HOSTILE, "limit": 3})]),
        Reply(content="found it", tool_calls=[("submit", submit)]),
        Reply(tool_calls=[("topology", {})]),
        Reply(tool_calls=[("submit", submit)]),
    ]
    only = [a for c in cases for a in ("--only", c)]
    with OpenAIStub(script) as stub:
        r2act(
            "agent", "run", "--dataset", str(dataset), "--model", "stub-model",
            "--base-url", stub.base_url, "--out", str(out), "--mode", "tools",
            "--max-steps", "3", "--attempts", "1", "--timeout", "5", *only,
        )  # fmt: skip
    return cases


def make_demo_run(root: Path) -> DemoRun:
    """Build the run, plant the hostile inputs and write the report (see module doc)."""
    run = root / "smoke"
    r2act("collect", str(REPO / "campaigns" / "smoke.yaml"), "--out", str(run), "-q")
    r2act("audit", str(run), "--workers", "1")
    r2act("dataset", "build", str(run))
    dataset = run / "dataset"
    for name in ("rule", "gold-mapper", "random"):
        r2act("baseline", name, "--dataset", str(dataset), "-q")
    r2act("replay", str(run / "predictions" / "rule.jsonl"), "--dataset", str(dataset))
    cases = _agent(dataset, run / "predictions" / "agent.jsonl")
    records = {
        json.loads(r)["case_id"]: json.loads(r)["incident_id"]
        for r in pq.read_table(dataset / "answers" / "incidents.parquet", columns=["record"])
        .column("record")
        .to_pylist()
    }
    evaluation = root / "rule-evaluation.json"
    r2act("evaluate", str(run / "predictions" / "rule.jsonl"), "--dataset", str(dataset),
          "--json", str(evaluation), "--replicates", "1000")  # fmt: skip
    hostile_case = _plant_log_lines(dataset)
    # a method that names a service no incident has: never a correct diagnosis, so VC and EC
    # are undefined (n/a) for it; its name is markup
    hostile = root / "hostile.jsonl"
    wrong = {"service": "nosuchservice", "fault_type": "pod_failure"}
    lines = [
        json.dumps({"incident_id": case, "rca": wrong, "plan": None, "method": HOSTILE_METHOD})
        for case in records
    ]
    hostile.write_text("\n".join(lines) + "\n", encoding="utf-8")
    site = root / "site"
    r2act("report", str(run), "--predictions", str(hostile), "--out", str(site),
          "--compare", "rule,gold-mapper", "--replicates", "1000")  # fmt: skip
    return DemoRun(run, site, records[hostile_case], records[cases[0]], evaluation)


def copy_site(demo: DemoRun, target: Path) -> Path:
    """A private copy of the site a test may change."""
    return Path(shutil.copytree(demo.site, target))
