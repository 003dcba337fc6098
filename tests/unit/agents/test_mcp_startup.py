"""What ``r2act mcp serve`` does before it answers ``initialize`` (issue 26 item 5).

The server must answer within 2 s of starting; the MCP SDK alone takes about half of that
on this machine. Reading one case and verifying the dataset's digests need the case reader
and ``validate``, not the builder, the collector's campaign models or the raw-store
observation readers, which cost a tenth of a second more to import and are never used.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from r2act.errors import DataError

HEAVY = ("pandas", "pyarrow.dataset", "yaml")
"""Modules the start path once imported and no longer needs (pandas alone cost about 0.2
CPU s, a fifth of the start): ``pq.read_table`` pulled in ``pyarrow.dataset`` and pandas,
``Schema.empty_table`` pandas, the dataset card's writer ``yaml``."""

OPENED_LATER = ("pyarrow", "numpy", "r2act.systems", "r2act.agents.env", "re2")
"""Modules the start no longer imports before ``initialize``: Arrow (with NumPy, about a
third of a CPU second) comes with the case reader, which the first ``list_cases`` or
``select_case`` opens; the systems (their renderers, about 0.17 s) with the reader too;
the tool environment and RE2 with the first question."""

_STAGES = """
import json, sys
from pathlib import Path

import mcp.server.mcpserver
from r2act.cli import main

HEAVY, LATER, DATASET = sys.argv[1:4]
seen = {}

def heavy(names=HEAVY):
    return sorted(m for m in names.split(",") if m in sys.modules)

def run(server, *args, **kwargs):  # the CLI's last step: stop there, then go on by hand
    from r2act.agents.mcp_server import CaseServer, Session

    seen["serving"] = heavy()
    seen["serving, opened later"] = heavy(LATER)
    state = CaseServer(Path(DATASET), "full", Path(DATASET) / "never-written.jsonl")
    session = Session("s")
    state.select(session, state.source.ids()[0])
    seen["selected"] = heavy()
    state.ask(session, "services", {})
    seen["asked"] = heavy()
    print(json.dumps(seen))
    raise SystemExit(0)

mcp.server.mcpserver.MCPServer.run = run
sys.argv = ["r2act", "mcp", "serve", "--dataset", DATASET, "--out", "/dev/null"]
main()
"""

NOT_NEEDED = (
    "r2act.campaigns",
    "r2act.quality_gate.provenance",
    "r2act.datasets.observations",
    "r2act.datasets.build",
    "r2act.collector",
    "mlcroissant",
    "matplotlib",
)


def test_serving_imports_neither_the_builder_nor_the_campaign_models() -> None:
    code = (
        "import sys\n"
        "import r2act.cli.mcp, r2act.agents.mcp_server, r2act.datasets.validation\n"
        "from r2act.agents.cases import CaseSource\n"
        f"print(sorted(m for m in {NOT_NEEDED!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]", done.stdout


def test_serve_checks_every_files_digest_but_parses_no_answer(
    smoke_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``mcp serve`` hands out observations only: it refuses a file whose digest changed
    (answers included) without parsing the records, which ``evaluate`` checks on scoring."""
    import shutil

    import r2act.datasets.validation as module
    from r2act.cli._verify import verify_dataset
    from r2act.datasets import layout

    def forbidden(*_: object) -> object:
        raise AssertionError("serving parsed the answers")

    monkeypatch.setattr(module, "_records", forbidden)
    verify_dataset(smoke_dataset, verify=True, command="mcp serve", files_only=True)
    copy = Path(shutil.copytree(smoke_dataset, tmp_path / "dataset"))
    answers = copy / layout.INCIDENTS
    answers.write_bytes(answers.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(DataError, match=r"answers/incidents\.parquet.*SHA256SUMS"):
        verify_dataset(copy, verify=True, command="mcp serve", files_only=True)
    (copy / "extra.txt").write_text("x")
    answers.write_bytes((smoke_dataset / layout.INCIDENTS).read_bytes())
    with pytest.raises(DataError, match=r"extra\.txt"):
        verify_dataset(copy, verify=True, command="mcp serve", files_only=True)


def test_no_heavy_module_before_the_first_question_about_a_case(smoke_dataset: Path) -> None:
    """The real ``r2act mcp serve`` start (CLI, digest check, case reader, server) up to
    ``run``, then a selection and a first question, in a fresh interpreter: neither pandas
    nor the other modules of ``HEAVY`` are loaded until the first question converts the
    selected case to DataFrames; that question loads pandas (so the check can fail). Up
    to ``run`` not even Arrow, the systems or the tool environment are loaded."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _STAGES,
            ",".join(HEAVY),
            ",".join(OPENED_LATER),
            str(smoke_dataset),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["serving"] == [], f"imported before initialize: {seen['serving']}"
    assert seen["serving, opened later"] == [], seen["serving, opened later"]
    assert seen["selected"] == [], f"imported by select_case: {seen['selected']}"
    assert "pandas" in seen["asked"]


def test_the_case_reader_opens_on_first_use_and_its_problem_is_a_tool_error(
    smoke_dataset: Path, tmp_path: Path
) -> None:
    """The server starts without opening the dataset; the first ``list_cases`` (here: the
    reader it asks for) opens it once, and a view the dataset cannot serve (spans of runs
    that collected none) answers as an MCP tool error naming the problem, not a crash."""
    from mcp.server.mcpserver.exceptions import ToolError

    from r2act.agents.mcp_server import CaseServer

    served = CaseServer(smoke_dataset, "full", tmp_path / "p.jsonl")
    assert served._source is None
    assert served.source is served.source and served.source.ids()
    wrong = CaseServer(smoke_dataset, "full+traces", tmp_path / "p.jsonl")
    with pytest.raises(ToolError, match=r"view 'full\+traces' needs .*traces\.parquet"):
        _ = wrong.source
