"""A real HTTP server speaking the OpenAI chat-completions protocol, with scripted replies.

Each POST to ``/v1/chat/completions`` takes the next entry of the script: a reply (an
assistant message, optionally with tool calls), an HTTP error status, or a stall longer
than the client's timeout. Hostile entries answer 200 with what a broken or malicious
endpoint sends: any raw body (invalid JSON, an HTML page, ``choices`` empty or null), a
valid reply dripped a few bytes at a time, or a body of hundreds of megabytes streamed
without being held in memory. Every request body is kept so tests can check what the
runner sent (messages, tools, tool_choice, response_format).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """An assistant message: text and/or tool calls ``(name, arguments)``."""

    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    prompt_tokens: int = 100
    completion_tokens: int = 20


@dataclass
class Status:
    """An HTTP error reply."""

    code: int
    message: str = "scripted error"


@dataclass
class Stall:
    """Answer only after ``seconds`` (longer than the client's timeout)."""

    seconds: float


@dataclass
class Raw:
    """A 200 reply with exactly this body and content type."""

    body: bytes
    content_type: str = "application/json"


@dataclass
class Drip:
    """A valid reply sent ``chunk`` bytes every ``every`` seconds (each read is quick)."""

    reply: Reply
    chunk: int = 8
    every: float = 0.2


@dataclass
class Huge:
    """A valid-looking reply whose content is ``megabytes`` MB, streamed in 1 MB blocks."""

    megabytes: int


Entry = Reply | Status | Stall | Raw | Drip | Huge


def _completion(reply: Reply, model: str, number: int) -> dict[str, Any]:
    calls = [
        {
            "id": f"call_{number}_{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for i, (name, args) in enumerate(reply.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1767225600,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }


class OpenAIStub:
    """Start with ``with OpenAIStub(script) as stub:``; ``stub.base_url`` is the /v1 URL."""

    def __init__(self, script: list[Entry] | None = None) -> None:
        self.script: deque[Entry] = deque(script or [])
        self.requests: list[dict[str, Any]] = []
        self.refuse_response_format = False
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with stub._lock:
                    stub.requests.append(body)
                    number = len(stub.requests)
                    if stub.refuse_response_format and "response_format" in body:
                        entry: Entry = Status(400, "response_format is not supported")
                    else:
                        entry = (
                            stub.script.popleft() if stub.script else Status(500, "script empty")
                        )
                if isinstance(entry, Stall):
                    time.sleep(entry.seconds)
                    entry = Reply(content="{}")
                if isinstance(entry, Status):
                    payload = {
                        "error": {"message": entry.message, "type": "scripted", "code": None}
                    }
                    self._send(entry.code, payload)
                    return
                if isinstance(entry, Raw):
                    self._send_bytes(200, entry.body, entry.content_type)
                elif isinstance(entry, Drip):
                    data = json.dumps(_completion(entry.reply, "stub", number)).encode()
                    self._send_bytes(200, data, "application/json", entry.chunk, entry.every)
                elif isinstance(entry, Huge):
                    self._send_huge(entry.megabytes)
                else:
                    self._send(200, _completion(entry, body.get("model", "stub"), number))

            def _send(self, code: int, payload: dict[str, Any]) -> None:
                self._send_bytes(code, json.dumps(payload).encode(), "application/json")

            def _send_bytes(
                self, code: int, data: bytes, kind: str, chunk: int = 0, every: float = 0.0
            ) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if not chunk:
                        self.wfile.write(data)
                        return
                    for start in range(0, len(data), chunk):
                        self.wfile.write(data[start : start + chunk])
                        self.wfile.flush()
                        time.sleep(every)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout); nothing to do

            def _send_huge(self, megabytes: int) -> None:
                head = b'{"id":"x","object":"chat.completion","created":1,"model":"stub",'
                head += b'"choices":[{"index":0,"finish_reason":"stop","message":'
                head += b'{"role":"assistant","content":"'
                tail = b'"}}]}'
                block = b"a" * (1 << 20)
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    # no Content-Length: the client learns the size only by reading
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(head)
                    for _ in range(megabytes):
                        self.wfile.write(block)
                    self.wfile.write(tail)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL."""
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
