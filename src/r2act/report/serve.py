"""``r2act report --serve``: a local preview of a written site, on loopback only.

The site needs no server (it opens from the file system); this is for a browser that
restricts ``file://`` pages, or a remote machine reached through an SSH tunnel. It binds
127.0.0.1 and never another interface, serves only the site directory, and stops on Ctrl-C.
"""

from __future__ import annotations

import functools
import http.server
from collections.abc import Callable
from pathlib import Path

LOOPBACK = "127.0.0.1"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return


def serve(site: Path, port: int = 8000, ready: Callable[[str], None] | None = None) -> None:
    """Serve ``site`` at http://127.0.0.1:PORT/ until interrupted (port 0: any free port)."""
    handler = functools.partial(_Quiet, directory=str(site))
    with http.server.ThreadingHTTPServer((LOOPBACK, port), handler) as server:
        url = f"http://{LOOPBACK}:{server.server_address[1]}/index.html"
        if ready is not None:
            ready(url)
        server.serve_forever()
