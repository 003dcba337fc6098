"""``r2act agent run --command`` with hostile paths and programs, and the run-level options.

A case directory whose path holds shell syntax is passed quoted (an ``sh -c`` template
runs no injected command); a program that floods its output, or writes a huge answer, is
stopped or refused with the runner's memory bounded (peak RSS measured by the kernel);
``--method`` names the predictions; an edited dataset is refused unless ``--no-verify``.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from agent_support import r2act, run_measured

from r2act.agents.command import command_argv
from r2act.agents.trajectory import Trajectory, trajectory_dir

PEAK_MB = 300
ANSWERING = """
import json, sys
from pathlib import Path
case = Path(sys.argv[1])
space = json.loads((case / "action_space.json").read_text())
target = sorted(space["targets"])[0]
print(json.dumps({"rca": {"service": target, "fault_type": "pod_failure"},
                  "plan": {"operation": "restart_service", "target": target}}))
"""
FLOOD = """
import sys
block = b"x" * (1 << 20) + b"\\n"
for _ in range(400):
    sys.stdout.buffer.write(block)
print('{"rca": {}, "plan": null}')
"""
HUGE_ANSWER = """
import os, sys
with open(os.path.join(sys.argv[1], "answer.json"), "wb") as f:
    f.truncate(400 << 20)  # a 400 MB (sparse) answer file
"""


def _peak_run(*args: str) -> tuple[int, str, float]:
    """Run the CLI; (exit code, stderr, peak RSS in MB of the runner process)."""
    with tempfile.TemporaryDirectory() as scratch:
        return run_measured(list(args), Path(scratch) / "peak")


def _one_case(dataset: Path) -> str:
    return r2act("agent", "cases", "--dataset", str(dataset)).stdout.split()[0]


def test_substituted_paths_are_quoted_for_a_shell(smoke_dataset: Path, tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(ANSWERING)
    work = tmp_path / "w"
    work.mkdir()
    out = work / "a;touch PWNED;b.jsonl"
    inner = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{case_dir}}"
    command = f"sh -c {shlex.quote(inner)}"
    case = _one_case(smoke_dataset)
    done = subprocess.run(
        [sys.executable, "-m", "r2act", "agent", "run", "--dataset", str(smoke_dataset),
         "--command", command, "--out", str(out), "--only", case],
        capture_output=True, text=True, cwd=work, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not (work / "PWNED").exists() and not (work / "b.cases").exists()
    line = json.loads(out.read_text())
    assert line["incident_id"] == case and line["plan"]["operation"] == "restart_service"


def test_command_argv_quotes_inside_arguments_only() -> None:
    path = Path("/tmp/x y;z")
    assert command_argv("prog {case_dir}", path) == ["prog", "/tmp/x y;z"]
    assert command_argv("prog --dir={case_dir}", path) == ["prog", "--dir='/tmp/x y;z'"]
    assert command_argv("sh -c 'prog {case_dir}'", path) == ["sh", "-c", "prog '/tmp/x y;z'"]


def test_a_flooding_program_is_stopped_with_memory_bounded(
    smoke_dataset: Path, tmp_path: Path
) -> None:
    script = tmp_path / "flood.py"
    script.write_text(FLOOD)
    out = tmp_path / "flood.jsonl"
    case = _one_case(smoke_dataset)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{case_dir}}"
    code, err, peak = _peak_run("agent", "run", "--dataset", str(smoke_dataset), "--command",
                                command, "--out", str(out), "--only", case)  # fmt: skip
    assert code == 0, err
    assert peak < PEAK_MB, f"peak RSS {peak:.0f} MB for 400 MB of output"
    line = json.loads(out.read_text())
    assert line["evidence"] == {"failure": "bad_output"}
    trajectory = Trajectory.model_validate_json((trajectory_dir(out) / f"{case}.json").read_text())
    step = next(s for s in trajectory.steps if s.source == "agent")
    assert "was stopped" in step.extra["why"] and len(step.message) <= 4000


def test_a_huge_answer_file_is_refused_unread(smoke_dataset: Path, tmp_path: Path) -> None:
    script = tmp_path / "huge.py"
    script.write_text(HUGE_ANSWER)
    out = tmp_path / "huge.jsonl"
    case = _one_case(smoke_dataset)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{case_dir}}"
    code, err, peak = _peak_run("agent", "run", "--dataset", str(smoke_dataset), "--command",
                                command, "--out", str(out), "--only", case)  # fmt: skip
    assert code == 0, err
    assert peak < PEAK_MB, f"peak RSS {peak:.0f} MB for a 400 MB answer.json"
    assert json.loads(out.read_text())["evidence"] == {"failure": "bad_output"}
    trajectory = Trajectory.model_validate_json((trajectory_dir(out) / f"{case}.json").read_text())
    step = next(s for s in trajectory.steps if s.source == "agent")
    assert "answer.json is" in step.extra["why"]


def test_method_names_the_predictions(smoke_dataset: Path, tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(ANSWERING)
    out = tmp_path / "named.jsonl"
    case = _one_case(smoke_dataset)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{case_dir}}"
    r2act("agent", "run", "--dataset", str(smoke_dataset), "--command", command,
          "--out", str(out), "--only", case, "--method", "my-agent-v2")  # fmt: skip
    assert json.loads(out.read_text())["method"] == "my-agent-v2"
    summary = json.loads(out.with_name("named.summary.json").read_text())
    assert summary["method"] == "my-agent-v2"


def test_agent_run_refuses_an_edited_dataset(smoke_dataset: Path, tmp_path: Path) -> None:
    copy = tmp_path / "dataset"
    shutil.copytree(smoke_dataset, copy)
    logs = copy / "observations" / "logs.parquet"
    table = pq.read_table(logs)
    lines = table.column("line").to_pylist()
    lines[0] = "edited: this line was not in the published dataset"
    column = pa.array(lines, table.schema.field("line").type)
    pq.write_table(table.set_column(table.schema.get_field_index("line"), "line", column), logs)
    script = tmp_path / "agent.py"
    script.write_text(ANSWERING)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{case_dir}}"
    out = tmp_path / "edited.jsonl"
    args = ["agent", "run", "--dataset", str(copy), "--command", command, "--out", str(out),
            "--only", _one_case(smoke_dataset)]  # fmt: skip
    refused = r2act(*args, check=False)
    assert refused.returncode == 2, refused.stderr
    assert "observations/logs.parquet" in refused.stderr and "--no-verify" in refused.stderr
    assert refused.stderr.count("\n") == 1 and not out.exists()
    told = r2act(*args, "--no-verify", check=False)  # told explicitly, it runs
    assert told.returncode == 0, told.stderr
    assert "not verifying" in told.stderr and len(out.read_text().splitlines()) == 1
