"""What ``r2act mcp serve`` does before it answers ``initialize`` (issue 26 item 5).

The server must answer within 2 s of starting; the MCP SDK alone takes about half of that
on this machine. Reading one case and verifying the dataset's digests need the case reader
and ``validate``, not the builder, the collector's campaign models or the raw-store
observation readers, which cost a tenth of a second more to import and are never used.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from r2act.errors import DataError

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
        "import r2act.cli.mcp, r2act.agents.mcp_server, r2act.datasets.validate\n"
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

    from r2act.cli._verify import verify_dataset
    from r2act.datasets import layout

    module = sys.modules["r2act.datasets.validate"]

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
