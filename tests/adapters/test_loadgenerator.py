"""deploy/loadgenerator: Online Boutique's own locustfile, run by real Locust, opens one
connection per request with r2act_load.py and one per user without it.

The server below answers like Go's net/http server does on this point: it keeps a
connection open between requests unless the request says ``Connection: close``, and then
answers with ``Connection: close`` and closes it. It counts connections and requests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LOAD_FILE = REPO / "deploy" / "loadgenerator" / "r2act_load.py"
LOCUST_REASON = (
    "Locust not installed (scripts/test installs Locust 2.43.0 into .venv-locust; "
    "or set R2ACT_LOCUST to a locust executable)"
)
USERS = 4


def _locust() -> str | None:
    for candidate in (os.environ.get("R2ACT_LOCUST"), str(REPO / ".venv-locust/bin/locust")):
        if candidate and Path(candidate).is_file():
            return candidate
    return shutil.which("locust")


@dataclass
class Counts:
    connections: int = 0
    requests: int = 0


class _Frontend(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    counts: Counts

    def setup(self) -> None:
        self.counts.connections += 1
        super().setup()

    def _answer(self) -> None:
        self.counts.requests += 1
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        if self.headers.get("Connection", "").lower() == "close":
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"ok")

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the counts are the output."""


@pytest.fixture
def frontend() -> Iterator[tuple[str, Counts]]:
    counts = Counts()
    handler = type("Frontend", (_Frontend,), {"counts": counts})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", counts
    server.shutdown()
    server.server_close()


def _run_locust(locustfile: Path, host: str, upstream: Path) -> str:
    locust = _locust()
    if locust is None:
        pytest.skip(LOCUST_REASON)
    env = {
        **os.environ,
        "LOCUST_LOCUSTFILE": str(locustfile),
        "R2ACT_UPSTREAM_LOCUSTFILE": str(upstream),
    }
    args = ["--host", host, "--headless", "-u", str(USERS), "-r", str(USERS), "--run-time", "6s"]
    done = subprocess.run(
        [locust, *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _upstream(reference_dir: Path) -> Path:
    return reference_dir / "online-boutique" / "src-v0.10.6" / "loadgenerator" / "locustfile.py"


def test_r2act_load_opens_a_new_connection_for_every_request(
    reference_dir: Path, frontend: tuple[str, Counts]
) -> None:
    host, counts = frontend
    output = _run_locust(LOAD_FILE, host, _upstream(reference_dir))
    assert counts.requests >= USERS  # every user's on_start visits "/"
    assert counts.connections == counts.requests
    assert "Error report" not in output  # Locust prints it only when a request failed


def test_the_stock_locustfile_keeps_one_connection_per_user(
    reference_dir: Path, frontend: tuple[str, Counts]
) -> None:
    host, counts = frontend
    upstream = _upstream(reference_dir)
    _run_locust(upstream, host, upstream)
    assert counts.requests >= USERS
    assert counts.connections <= USERS
