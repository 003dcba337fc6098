"""What ``r2act mcp serve`` imports before it answers ``initialize`` (issue 26 item 5).

The server must answer within 2 s of starting; the MCP SDK alone takes about half of that
on this machine. Reading one case and verifying the dataset's digests need the case reader
and ``validate``, not the builder, the collector's campaign models or the raw-store
observation readers, which cost a tenth of a second more to import and are never used.
"""

from __future__ import annotations

import subprocess
import sys

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
