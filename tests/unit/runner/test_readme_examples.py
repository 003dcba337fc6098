"""The README's commands run as written, in order, as a new user types them (issue 27 18, 19, 24).

The test copies the checkout, then runs every shell block of the README in one bash session
(so the Quickstart's ``. .venv/bin/activate`` holds for the rest, as in a terminal) and the
Python block with the interpreter that session has. The Quickstart really creates
``.venv`` and really ``pip install -e .``-s the copy into it; only its dependencies come
from the interpreter running the tests (a ``.pth`` line in the new venv), so the test needs
no download but the build backend. What is not run as written, and why:

- ``./scripts/test`` is this very suite;
- ``mcp serve --transport http`` serves until stopped: it is started, probed, then stopped;
- the LLM example talks to ``http://localhost:11434/v1``: a scripted OpenAI-compatible
  server answers there (the block is skipped, saying so, when the port is taken);
- ``r2act collect campaigns/astronomy-shop.yaml`` (the whole second-system campaign, some
  90 to 180 CPU seconds, more than the rest of the README together) is planned instead:
  ``r2act campaign plan`` loads and plans the same manifest, and the demo just before it
  runs the collector on that system (its smoke campaign).

Then it checks what the README promises: ``r2act`` is the new venv's, the demo names the
next command, the predictions example is JSON Lines for a case of the example dataset,
outputs land where the README says, and nothing else appears in the checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "unit" / "agents"))

from openai_stub import OpenAIStub, Reply  # noqa: E402

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
LLM_PORT = 11434
FULL_SECOND = "campaigns/astronomy-shop.yaml"
"""The full campaign of the second system: planned, not collected (see above)."""
SUBMIT = {
    "rca": {"service": "frontend", "fault_type": "pod_failure"},
    "plan": {"operation": "restart_service", "target": "frontend"},
}


def blocks() -> list[tuple[str, str]]:
    """(language, text) of every fenced block of the README, in order."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def _session(llm: bool) -> str:
    """One bash script: every README block in order, the exceptions handled as documented."""
    parts = ["set -euo pipefail"]
    for language, text in blocks():
        if language == "bash" and text.strip() == "./scripts/test":
            continue
        if language == "bash" and "mcp serve" in text:
            stdio, http = text.split("\nr2act mcp serve", 1)
            parts += [stdio, f"(r2act mcp serve{http.replace(chr(92) + chr(10), '')}) &"]
            parts += [
                "server=$!",
                "for _ in $(seq 60); do curl -s -o /dev/null http://127.0.0.1:8765/mcp && break;"
                " sleep 1; done",
                "curl -s -o /dev/null -w 'mcp http: %{http_code}\\n' http://127.0.0.1:8765/mcp",
                "kill $server; wait $server || true",
            ]
            continue
        if language == "bash" and "localhost:11434" in text and not llm:
            parts.append("echo 'skipped: the LLM example (port 11434 is taken)'")
            continue
        if language == "bash":
            parts.append(
                text.replace(f"r2act collect {FULL_SECOND}", f"r2act campaign plan {FULL_SECOND}")
            )
            if "./scripts/demo" in text:
                parts.append('echo "r2act resolves to: $(command -v r2act)"')
        elif language == "python":
            parts.append(f"python - <<'README_PY'\n{text}README_PY")
    return "\n".join(parts) + "\n"


def _copy_checkout(target: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=False
    ).stdout
    names = [n for n in files.decode().split("\0") if n] if files else []
    if not names:  # not a git checkout: everything but the usual local state
        shutil.copytree(
            REPO,
            target,
            ignore=shutil.ignore_patterns(
                ".git", ".venv*", "r2act-runs", "__pycache__", "*.egg-info"
            ),
        )
        return
    for name in names:
        if (REPO / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)


def test_quickstart_json_example_is_one_line_for_a_smoke_case() -> None:
    examples = [t for lang, t in blocks() if lang == "bash" and "mine.jsonl <<'EOF'" in t]
    assert len(examples) == 1
    body = examples[0].split("<<'EOF'\n", 1)[1].split("\nEOF", 1)[0]
    assert "\n" not in body.strip()  # JSON Lines: one object, one line
    assert "onlineboutique_cartservice_dns_fault_severe_r01" in body  # smoke has it


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("curl") is None, reason="curl not installed")
def test_readme_runs_as_written_in_a_fresh_venv(tmp_path: Path) -> None:
    repo = tmp_path / "r2act"
    _copy_checkout(repo)
    before = {p.name for p in repo.iterdir()}
    # The Quickstart's `python3 -m venv .venv` keeps a venv that exists: made here first with
    # a line that lends it this interpreter's packages (the dependencies, not r2act).
    shims = tmp_path / "bin"
    shims.mkdir()
    base = Path(getattr(sys, "_base_executable", sys.executable))
    (shims / "python3").symlink_to(base)
    subprocess.run([str(base), "-m", "venv", str(repo / ".venv")], check=True)
    purelib = sysconfig.get_paths()["purelib"]
    site = next((repo / ".venv" / "lib").glob("python3*/site-packages"))
    (site / "zz_test_dependencies.pth").write_text(purelib + "\n")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "R2ACT"))
    }
    env["PATH"] = f"{shims}:{env.get('PATH', '/usr/bin:/bin')}"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["HOME"] = os.environ.get("HOME", str(tmp_path))
    llm = _port_free(LLM_PORT)
    script = _session(llm)
    stub = OpenAIStub([Reply(tool_calls=[("submit", SUBMIT)]) for _ in range(60)])
    if llm:
        from http.server import ThreadingHTTPServer
        from threading import Thread

        handler = stub.server.RequestHandlerClass
        stub.server.server_close()
        stub.server = ThreadingHTTPServer(("127.0.0.1", LLM_PORT), handler)
        stub.server.daemon_threads = True
        stub._thread = Thread(target=stub.server.serve_forever, daemon=True)
    with stub:
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-4000:]
    assert f"r2act resolves to: {repo}/.venv/bin/r2act" in done.stdout
    assert re.search(r"^next: .*\n  r2act compare ", done.stdout, re.M), "demo names no next step"
    assert "is not JSON Lines" not in log and "Traceback" not in log
    assert "are not in the dataset and were ignored" not in log  # ids of the example dataset
    assert "mcp http: " in done.stdout and "error lines" in done.stdout  # both MCP examples
    assert "270 incidents in 51 non-empty cells" in done.stdout  # as the README's comment says
    predictions = repo / "r2act-runs" / "smoke" / "predictions"
    for name in ("rule", "gold-mapper", "mine", "mcp", "my-agent"):
        assert (predictions / f"{name}.jsonl").is_file(), name
    assert (predictions / "my-agent.trajectories").is_dir()  # the names the README gives
    assert (predictions / "my-agent.summary.json").is_file()
    if llm:
        assert (predictions / "qwen-tools.jsonl").is_file() and stub.requests
    stray = {p.name for p in repo.iterdir()} - before - {".venv", "r2act-runs"}
    assert not stray, f"the README's commands left {sorted(stray)} in the checkout"


def test_no_run_output_is_committed_at_the_root() -> None:
    """Item 24: an evaluation figure, predictions or a demo run are outputs, not sources."""
    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=False
    ).stdout.split()
    if not listed:
        pytest.skip("not a git checkout")
    root = [n for n in listed if "/" not in n]
    assert not [n for n in root if n.endswith((".png", ".pdf", ".svg", ".jsonl"))], root
    assert not [n for n in listed if n.startswith(("r2act-runs/", "r2act-demo/"))]
    ignored = (REPO / ".gitignore").read_text().split()
    assert "r2act-runs/" in ignored and "/mcp.jsonl" in ignored
