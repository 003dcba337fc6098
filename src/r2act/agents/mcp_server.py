"""``r2act mcp serve``: the tool environment as an MCP server (official ``mcp`` SDK).

An MCP-capable agent lists the cases (``list_cases``), picks one (``select_case``), asks
the same tools as :mod:`r2act.agents.tools` about it and ends with ``submit``, whose
answer is appended to the predictions file as one line. The first submission for a case
counts (``r2act evaluate`` reads the first line per id), so a second one is refused.

Everything a client changes lives in its own :class:`Session`: the selected case, its
tool-call budget and what it submitted. On stdio the connection is the session; over
streamable HTTP with the handshake protocol it is the transport's ``mcp-session-id``;
the stateless 2026-07-28 protocol keeps no session, so ``select_case`` returns a handle
that the client passes back as ``session``. Two clients never see each other's case.

Each tool call runs on a worker thread under a hard time limit, so one slow question
answers with an error after ``call_timeout_s`` and never holds up another session (the
label matchers themselves run in linear time, see :func:`r2act.agents.env.label_regex`).
The advertised argument schemas are generated from the same pydantic models that check
the arguments (:mod:`r2act.agents.tools`), so a client sees exactly what is enforced.
Tool errors come back as MCP tool errors (``is_error``) with a message that says how to
ask, never a traceback.
"""

from __future__ import annotations

import dataclasses
import functools
import hmac
import inspect
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import anyio.to_thread
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError

from r2act import __version__
from r2act.agents.run import finished_ids
from r2act.agents.tools import Tool, call, tools_for
from r2act.errors import DataError

if TYPE_CHECKING:  # the case reader and the environment are imported where first used
    from r2act.agents.cases import CaseRows, CaseSource
    from r2act.agents.env import CaseEnvironment

INSTRUCTIONS = (
    "Benchmark cases of Kubernetes microservice incidents. Call list_cases, then "
    "select_case, investigate with services/topology/logs/events/metric_names/metrics/"
    "requests/state/action_space, and finish with submit(rca, plan). One submission per "
    "case counts. Over stateless HTTP, pass the session handle select_case returns."
)
SESSION_HELP = (
    "Session handle returned by select_case; needed only when the connection keeps no MCP "
    "session (stateless HTTP)."
)
DEFAULT_CALL_TIMEOUT_S = 20.0
MAX_SESSIONS = 64
"""Sessions kept at once; the least recently used one is forgotten beyond this."""
_STDIO = "stdio"


@dataclass
class Session:
    """What one client has done: its case, its tool calls on that case, its submissions.

    ``select_case`` stores the case as read (``rows``); the tool environment over it is
    built by the first question (:meth:`environment`), because building it converts the
    tables to DataFrames and the first conversion of the process imports pandas (about
    0.2 CPU s), which would otherwise be half of the first selection's budget."""

    handle: str
    client: str = ""
    rows: CaseRows | None = None
    env: CaseEnvironment | None = None
    calls: int = 0
    submitted: int = 0
    built: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)
    """Held while the environment is built, so two calls at once build it once."""

    def environment(self) -> CaseEnvironment | None:
        """The tools over the selected case (built on first use), or None before a selection."""
        with self.built:
            if self.env is None and self.rows is not None:
                from r2act.agents.env import CaseEnvironment

                self.env = CaseEnvironment(self.rows.case())
            return self.env


class CaseServer:
    """State of one server: the dataset view, the sessions, the predictions file.

    The case reader is opened by the first ``list_cases`` or ``select_case``, not at start:
    opening it imports Arrow (about a third of a CPU second), and a client waits for the
    ``initialize`` answer before it asks anything. The dataset's digests were checked
    before the server started (``r2act.cli._verify``)."""

    def __init__(
        self,
        dataset: Path,
        view: str,
        out: Path,
        method: str = "mcp-agent",
        *,
        max_calls: int | None = None,
    ) -> None:
        self.dataset = dataset
        self.view = view
        self.out = out
        self.method = method
        self.max_calls = max_calls
        self.submitted = finished_ids(out)
        self._source: CaseSource | None = None
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._by_transport: dict[str, str] = {}
        self._lock = threading.Lock()  # sessions, submissions and the predictions file
        self._read_lock = threading.Lock()  # one case read at a time (shared Parquet reader)
        self._open_lock = threading.Lock()

    @property
    def source(self) -> CaseSource:
        """The view's case reader, opened on first use; a tool error naming the dataset's
        problem (an unreadable table, a view it cannot serve) when it cannot be opened."""
        with self._open_lock:
            if self._source is None:
                from r2act.agents.cases import CaseSource

                try:
                    self._source = CaseSource(self.dataset, self.view)
                except DataError as error:
                    raise McpToolError(str(error)) from None
            return self._source

    # -- sessions -------------------------------------------------------------------------

    def session(self, transport_key: str | None, handle: str | None, *, create: bool) -> Session:
        """The session a call belongs to; McpToolError when it cannot be told."""
        with self._lock:
            if handle:
                found = self._sessions.get(handle)
                if found is None:
                    raise McpToolError(f"unknown session {handle[:40]!r}; call select_case again")
                self._sessions.move_to_end(handle)
                return found
            if transport_key is not None and transport_key in self._by_transport:
                key = self._by_transport[transport_key]
                if key in self._sessions:
                    self._sessions.move_to_end(key)
                    return self._sessions[key]
            if not create:
                if transport_key is None:
                    raise McpToolError(
                        "this connection keeps no MCP session: pass session=<handle> "
                        "(select_case returns it)"
                    )
                raise McpToolError("no case selected; call list_cases, then select_case")
            made = Session(secrets.token_urlsafe(12))
            self._sessions[made.handle] = made
            if transport_key is not None:
                self._by_transport[transport_key] = made.handle
            while len(self._sessions) > MAX_SESSIONS:
                old, _ = self._sessions.popitem(last=False)
                self._by_transport = {k: v for k, v in self._by_transport.items() if v != old}
            return made

    # -- tools ------------------------------------------------------------------------------

    def select(self, session: Session, case_id: str) -> str:
        """Make ``case_id`` the case every tool answers about in ``session``."""
        if case_id not in set(self.source.ids()):
            raise McpToolError(f"unknown case {case_id[:200]!r}; call list_cases")
        with self._read_lock:
            rows = self.source.read(case_id)
        with session.built:
            session.rows, session.env = rows, None
        session.calls = 0
        return f"selected {case_id} (view {self.view}); session {session.handle}"

    def ask(self, session: Session, name: str, arguments: dict[str, Any]) -> str:
        """Answer tool ``name`` about the session's case (counted against its budget)."""
        env = session.environment()
        if env is None:
            raise McpToolError("no case selected; call list_cases, then select_case")
        if self.max_calls is not None and name != "submit":
            if session.calls >= self.max_calls:
                raise McpToolError(
                    f"the budget of {self.max_calls} tool calls for this case is used up; "
                    "call submit"
                )
            session.calls += 1
        answer, error = call(env, name, {k: v for k, v in arguments.items() if v is not None})
        if error:
            raise McpToolError(answer)
        return answer

    def submit(self, session: Session, arguments: dict[str, Any]) -> str:
        """Check the answer and append it as a predictions line (once per case)."""
        env = session.environment()
        if env is None:
            raise McpToolError("no case selected; call list_cases, then select_case")
        case_id = env.case.case_id
        with self._lock:
            if case_id in self.submitted:
                raise McpToolError(f"{case_id} already has a submission; the first one counts")
            answer, error = call(env, "submit", arguments)
            if error:
                raise McpToolError(answer)
            assert env.submission is not None
            made_by = {"mcp_session": session.handle, "client": session.client or None}
            line = env.submission.model_copy(update={"method": self.method, "evidence": made_by})
            self.out.parent.mkdir(parents=True, exist_ok=True)
            with self.out.open("a", encoding="utf-8", newline="\n") as handle:
                handle.write(line.model_dump_json() + "\n")
            self.submitted.add(case_id)
            session.submitted += 1
        return f"accepted; written to {self.out.name}"


class StaticTokenVerifier:
    """Accepts exactly one bearer token (compared in constant time)."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's access info when it is the configured one, else None (401)."""
        if hmac.compare_digest(token.encode(), self._token.encode()):
            return AccessToken(token=token, client_id="r2act-mcp-client", scopes=[])
        return None


def _transport_key(ctx: Context) -> str | None:
    """The connection's own session key: stdio, or the HTTP transport's session id."""
    headers = ctx.headers
    if headers is None:
        return _STDIO
    session_id = headers.get("mcp-session-id")
    return f"http:{session_id}" if session_id else None


def _client_name(ctx: Context) -> str:
    try:
        info = ctx.session.client_params.client_info
    except AttributeError:
        return ""
    return f"{info.name}/{info.version}"[:120] if info is not None else ""


def _signature(tool: Tool) -> tuple[inspect.Signature, dict[str, Any]]:
    """A keyword-only signature with the tool's pydantic fields (so the SDK's schema is theirs)."""
    params = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)]
    hints: dict[str, Any] = {"ctx": Context}
    for name, field in tool.args.model_fields.items():
        annotation: Any = Annotated[field.annotation, field]
        default = inspect.Parameter.empty if field.is_required() else field.default
        params.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default
            )
        )
        hints[name] = annotation
    session = Annotated[str | None, _session_field()]
    params.append(
        inspect.Parameter(
            "session", inspect.Parameter.KEYWORD_ONLY, annotation=session, default=None
        )
    )
    hints["session"] = session
    hints["return"] = str
    return inspect.Signature(params, return_annotation=str), hints


def _session_field() -> Any:
    from pydantic import Field

    return Field(default=None, max_length=40, description=SESSION_HELP)


async def _bounded(fn: Callable[[], str], limit_s: float, what: str) -> str:
    """Run ``fn`` on a worker thread; a tool error after ``limit_s`` (the thread is let go)."""
    try:
        with anyio.fail_after(limit_s):
            return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
    except TimeoutError:
        raise McpToolError(
            f"{what} took longer than {limit_s:g} s and was stopped; ask a narrower question"
        ) from None


def build_server(
    dataset: Path,
    view: str,
    out: Path,
    method: str = "mcp-agent",
    *,
    token: str | None = None,
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    max_calls: int | None = None,
    issuer_url: str = "http://127.0.0.1",
) -> MCPServer:
    """An MCP server over ``view`` of ``dataset`` that appends submissions to ``out``.

    ``token`` makes the HTTP transport require ``Authorization: Bearer <token>``.
    """
    state = CaseServer(dataset, view, out, method, max_calls=max_calls)
    auth: dict[str, Any] = {}
    if token:
        auth = {
            "auth": AuthSettings(issuer_url=issuer_url, resource_server_url=None),
            "token_verifier": StaticTokenVerifier(token),
        }
    offered = tools_for(view)
    instructions = INSTRUCTIONS
    if any(t.name == "traces" for t in offered):
        instructions += " In this view, traces searches spans and fetches one trace by id."
    server: MCPServer = MCPServer(
        "r2act", instructions=instructions, version=__version__, log_level="WARNING", **auth
    )

    def list_cases() -> str:
        rows = [
            f"{c}\t{'submitted' if c in state.submitted else 'open'}" for c in state.source.ids()
        ]
        return "\n".join(rows)

    async def select_case(
        ctx: Context,
        case_id: Annotated[str, _case_field()],
        session: Annotated[str | None, _session_field()] = None,
    ) -> str:
        picked = state.session(_transport_key(ctx), session, create=True)
        picked.client = picked.client or _client_name(ctx)
        work = functools.partial(state.select, picked, case_id)
        return await _bounded(work, call_timeout_s, "select_case")

    server.add_tool(
        list_cases, description="Case ids of the dataset, with whether each has a submission."
    )
    server.add_tool(
        select_case,
        description="Choose the case the other tools answer about; returns a session handle.",
    )
    for tool in offered:
        server.add_tool(_case_tool(state, tool, call_timeout_s), name=tool.name,
                        description=tool.description)  # fmt: skip
    return server


def _case_field() -> Any:
    from pydantic import Field

    return Field(min_length=1, max_length=200, description="A case id from list_cases.")


def _case_tool(state: CaseServer, tool: Tool, limit_s: float) -> Callable[..., Any]:
    """The MCP function of one catalogue tool, with the tool's own argument schema."""

    async def run(ctx: Context, session: str | None = None, **arguments: Any) -> str:
        picked = state.session(_transport_key(ctx), session, create=False)
        if tool.name == "submit":
            work = functools.partial(state.submit, picked, arguments)
        else:
            work = functools.partial(state.ask, picked, tool.name, arguments)
        return await _bounded(work, limit_s, tool.name)

    signature, hints = _signature(tool)
    run.__signature__ = signature  # type: ignore[attr-defined]
    run.__annotations__ = hints
    run.__name__ = tool.name
    return run
