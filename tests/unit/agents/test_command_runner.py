"""``r2act agent run --command``: a program per case, its inputs as files, its answer read back."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from agent_support import r2act

from r2act.agents.trajectory import Trajectory, summary_path, trajectory_dir

AGENT = """
import json, sys
from pathlib import Path
case = Path(sys.argv[1])
meta = json.loads((case / "case.json").read_text())
space = json.loads((case / "action_space.json").read_text())
lines = [json.loads(l) for l in (case / "logs.jsonl").read_text().splitlines()]
assert lines and set(lines[0]) == {"phase", "ts", "pod", "service", "line"}
assert "state.json" in meta["files"] and "metrics.jsonl" in meta["files"]
mode = sys.argv[2]
if mode == "fail":
    sys.exit(3)
if mode == "garbage":
    print("no answer here")
    sys.exit(0)
target = sorted(space["targets"])[0]
answer = {"rca": {"service": target, "fault_type": "pod_failure"},
          "plan": {"operation": "restart_service", "target": target}}
if mode == "file":
    (case / "answer.json").write_text(json.dumps(answer))
    print("wrote answer.json")
else:
    print("thinking...")
    print(json.dumps(answer))
"""


def _run(dataset: Path, out: Path, script: Path, mode: str, cases: list[str]) -> object:
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{case_dir}} {mode}"
    only = [a for c in cases for a in ("--only", c)]
    return r2act("agent", "run", "--dataset", str(dataset), "--command", command,
                 "--out", str(out), *only, check=False)  # fmt: skip


def test_a_program_answers_through_stdout_or_a_file(smoke_dataset: Path, tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    cases = r2act("agent", "cases", "--dataset", str(smoke_dataset)).stdout.split()[:4]
    out = tmp_path / "cmd.jsonl"
    for mode, picked in (("stdout", cases[:1]), ("file", cases[1:2])):
        done = _run(smoke_dataset, out, script, mode, picked)
        assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    for mode, picked in (("fail", cases[2:3]), ("garbage", cases[3:4])):
        done = _run(smoke_dataset, out, script, mode, picked)
        assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    lines = {json.loads(x)["incident_id"]: json.loads(x) for x in out.read_text().splitlines()}
    assert set(lines) == set(cases)
    for case in cases[:2]:
        assert lines[case]["plan"]["operation"] == "restart_service"
        assert lines[case]["method"] == "command:python" + sys.executable.split("python")[-1]
    assert lines[cases[2]]["evidence"] == {"failure": "command_failed"}
    assert lines[cases[3]]["evidence"] == {"failure": "bad_output"}
    failed = Trajectory.model_validate_json((trajectory_dir(out) / f"{cases[2]}.json").read_text())
    agent_step = next(s for s in failed.steps if s.source == "agent")
    assert agent_step.extra["exit_code"] == 3
    summary = json.loads(summary_path(out).read_text())
    assert summary["failures"] == {"bad_output": 1, "command_failed": 1}
    case_dir = out.with_name("cmd.cases") / cases[0]
    assert {p.name for p in case_dir.iterdir()} >= {
        "case.json", "topology.json", "action_space.json", "logs.jsonl", "events.jsonl",
        "metrics.jsonl", "state.json", "answer.schema.json",
    }  # fmt: skip
    assert cases[0] in (case_dir / "case.json").read_text()
