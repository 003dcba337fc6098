"""Jaeger's HTTP query API over real HTTP, for the trace adapter's contract tests.

``JaegerStore`` holds traces in the JSON Jaeger's query service answers (``/api/services``
and ``/api/traces``: ``{"data": [...], "total", "limit", "offset", "errors"}``; a trace is
``{"traceID", "spans", "processes"}``, a span ``{"traceID", "spanID", "operationName",
"references", "startTime", "duration", "tags", "logs", "processID", "warnings"}`` with
times in microseconds, jaegertracing/jaeger ``model/json/model.go``) and answers the way
the memory store does: a trace matches a service when one of its spans is that service's
and starts within ``[start, end]``, at most ``limit`` traces, each returned whole.
``JaegerServer`` serves it on 127.0.0.1 under a base path (the chart's ``/jaeger/ui``);
``answer`` is also what the kmock API emulator calls for the service-proxy path.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

BASE_PATH = "/jaeger/ui"


@dataclass
class JaegerStore:
    """What the store holds, the failures it is told to answer with, what it was asked."""

    traces: list[dict[str, Any]] = field(default_factory=list)
    failures: list[int] = field(default_factory=list)
    """Statuses the next requests answer with, in order (then it answers normally)."""
    bodies: list[bytes] = field(default_factory=list)
    """Bodies the next requests answer with status 200, in order (after ``failures``)."""
    asked: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, path: str, params: dict[str, str]) -> tuple[int, bytes]:
        """Status and body for ``GET path?params`` (path relative to the base path)."""
        with self.lock:
            self.asked.append((path, dict(params)))
            if self.failures:
                status = self.failures.pop(0)
                return status, json.dumps({"error": "injected"}).encode()
            if self.bodies:
                return 200, self.bodies.pop(0)
            if path == "/api/services":
                names = sorted(
                    {str(p["serviceName"]) for t in self.traces for p in t["processes"].values()}
                )
                return 200, _envelope(names)
            if path == "/api/traces":
                return self._traces(params)
            return 404, b"404 page not found\n"

    def _traces(self, params: dict[str, str]) -> tuple[int, bytes]:
        if "service" not in params:
            return 400, json.dumps({"errors": [{"code": 400, "msg": "service required"}]}).encode()
        service = params["service"]
        start = int(params.get("start", "0"))
        end = int(params.get("end", str(1 << 62)))
        limit = int(params.get("limit", "20"))
        found = []
        for trace in self.traces:
            processes = trace["processes"]
            if any(
                processes[s["processID"]]["serviceName"] == service
                and start <= s["startTime"] <= end
                for s in trace["spans"]
            ):
                found.append(trace)
        return 200, _envelope(found[:limit])


def _envelope(data: list[Any]) -> bytes:
    return json.dumps(
        {"data": data, "total": len(data), "limit": 0, "offset": 0, "errors": None}
    ).encode()


def tag(key: str, value: Any) -> dict[str, Any]:
    """A Jaeger tag with the type Jaeger's JSON gives the value."""
    if isinstance(value, bool):
        kind = "bool"
    elif isinstance(value, int):
        kind = "int64"
    elif isinstance(value, float):
        kind = "float64"
    else:
        kind = "string"
    return {"key": key, "type": kind, "value": value}


@dataclass(frozen=True)
class RawSpan:
    """A span to put in a trace, before it is written as Jaeger's JSON."""

    span_id: str
    service: str
    operation: str
    start_us: int
    duration_us: int
    parent: str = ""
    tags: tuple[tuple[str, Any], ...] = ()


def trace(trace_id: str, *spans: RawSpan) -> dict[str, Any]:
    """One trace in Jaeger's JSON, one process per service (``p1``, ``p2``, ...)."""
    processes: dict[str, dict[str, Any]] = {}
    ids: dict[str, str] = {}
    for span in spans:
        if span.service not in ids:
            ids[span.service] = f"p{len(ids) + 1}"
            processes[ids[span.service]] = {
                "serviceName": span.service,
                "tags": [tag("telemetry.sdk.language", "go"), tag("host.name", "pod-1")],
            }
    return {
        "traceID": trace_id,
        "spans": [
            {
                "traceID": trace_id,
                "spanID": s.span_id,
                "flags": 1,
                "operationName": s.operation,
                "references": (
                    [{"refType": "CHILD_OF", "traceID": trace_id, "spanID": s.parent}]
                    if s.parent
                    else []
                ),
                "startTime": s.start_us,
                "duration": s.duration_us,
                "tags": [tag(k, v) for k, v in s.tags],
                "logs": [],
                "processID": ids[s.service],
                "warnings": None,
            }
            for s in spans
        ],
        "processes": processes,
        "warnings": None,
    }


class JaegerServer:
    """``JaegerStore`` over HTTP on 127.0.0.1, under ``BASE_PATH``."""

    def __init__(self, store: JaegerStore) -> None:
        self.store = store
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if not parts.path.startswith(BASE_PATH + "/"):
                    status, body = 404, b"404 page not found\n"
                else:
                    path = parts.path[len(BASE_PATH) :]
                    status, body = outer.store.answer(path, dict(parse_qsl(parts.query)))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The query service's URL, base path included (what ``traces.store`` names)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{BASE_PATH}"

    def __enter__(self) -> JaegerServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
