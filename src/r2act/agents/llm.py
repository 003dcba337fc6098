"""An LLM method over any OpenAI-compatible chat-completions endpoint (official ``openai`` SDK).

``prompt`` mode is the paper's single-shot setting: the evidence digest in one prompt, the
answer constrained by the answer JSON Schema through ``response_format`` where the endpoint
accepts it (a 400 on that request switches the run to plain replies), then parsed, with
one repair turn when the reply is not a valid answer. ``tools`` mode is a function-calling
loop over :mod:`r2act.agents.tools` with a step budget; when the budget runs out the model
is asked once more with ``tool_choice`` forcing ``submit``.

Every model call goes through tenacity: rate limits (429), server errors (5xx), timeouts
and dropped connections are retried with exponential backoff; the SDK's own retries are
off so each attempt is visible in the trajectory. What a case ends as:

- ``answered``: a valid answer (written as a prediction line);
- a *method* failure (``malformed_answer``, ``no_answer``): the model answered but not
  usefully; an abstaining line is written, since rerunning would not change the method;
- an *infrastructure* failure (``rate_limited``, ``server_error``, ``timeout``,
  ``connection``, ``bad_reply``, ``reply_too_large``, ``api_error``): no line is written,
  so a resumed run tries it again.

A reply is untrusted input. Its body is read as a stream under a total deadline (the
``timeout`` bounds the whole call, not each read, so a slow drip ends) and a size cap, then
parsed and checked here: invalid JSON, an HTML page, ``choices`` empty or null are a
``bad_reply`` attempt, retried like a 5xx, never a crash. What trajectories keep of a reply
or of tool arguments is cut at :data:`MAX_STORED_CHARS` with a note, and tool arguments
beyond :data:`MAX_TOOL_ARGS_CHARS` are refused to the model as a tool error.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from r2act import __version__
from r2act.agents.answers import (
    FinalAnswer,
    answer_schema,
    case_fault_types,
    parse_answer,
    validate_answer,
)
from r2act.agents.cases import CaseInputs
from r2act.agents.digest import DEFAULT_BUDGET, digest
from r2act.agents.env import CaseEnvironment
from r2act.agents.outcome import CaseResult
from r2act.agents.tools import call as call_tool
from r2act.agents.tools import openai_tools
from r2act.agents.trajectory import (
    Agent,
    Metrics,
    Observation,
    ObservationResult,
    ToolCall,
    Trajectory,
)
from r2act.schema import FaultType, Operation

if TYPE_CHECKING:
    from openai import OpenAI

_METHOD_PREFIX = __name__.rpartition(".")[2]
"""What an agent method's name starts with when ``--method`` gives none: this module's name
(the method names in existing predictions)."""
MAX_REPLY_BYTES = 8 << 20
"""A reply body larger than this is refused (``reply_too_large``); chat replies are KBs."""
MAX_STORED_CHARS = 20_000
"""Reply text and tool arguments kept in a trajectory step; the rest is cut with a note."""
MAX_TOOL_ARGS_CHARS = 64 << 10
"""Tool arguments longer than this are refused (every tool's arguments are short)."""


def system_prompt(fault_types: Sequence[FaultType]) -> str:
    """The system message for a case whose system realises ``fault_types`` (its label
    space, :func:`~r2act.agents.answers.case_fault_types`): a model is offered only the
    fault types its case can have."""
    return (
        "You are an SRE diagnosing one incident in a Kubernetes microservice system from its "
        "observations (phases: pre = before, during = fault window, post = after). Name the "
        "root-cause service and fault type, and propose one recovery plan inside the action "
        f"space. Fault types: {', '.join(f.value for f in fault_types)}. Operations: "
        f"{', '.join(o.value for o in Operation)}. A plan is a JSON object with 'operation' "
        "and exactly the fields that operation needs (target; replicas for scale_out; "
        "memory_limit for increase_memory_limit; scope for rollback_config; dependency for "
        "repair_dependency)."
    )


SYSTEM_PROMPT = system_prompt(tuple(FaultType))
"""The system message over every fault type the schema knows (no case's system in view)."""
ANSWER_FORMAT = (
    'Answer with one JSON object only: {"rca": {"service": "...", "fault_type": "..."}, '
    '"plan": {"operation": "...", "target": "...", ...}}.'
)


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, prompt: int, completion: int, cached: int) -> float:
        """Cost of one call (cached prompt tokens at their own rate when given)."""
        cached_rate = self.input if self.cached_input is None else self.cached_input
        return (
            (prompt - cached) * self.input + cached * cached_rate + completion * self.output
        ) / 1e6


@dataclass(frozen=True)
class LlmSettings:
    """How to reach the model and how hard to try."""

    model: str
    base_url: str
    api_key: str
    mode: str = "prompt"
    max_steps: int = 12
    timeout_s: float = 60.0
    attempts: int = 4
    backoff_s: float = 1.0
    backoff_max_s: float = 30.0
    digest_tokens: int = DEFAULT_BUDGET
    max_tokens: int | None = 2048
    price: Price | None = None
    method_name: str | None = None
    max_reply_bytes: int = MAX_REPLY_BYTES

    @property
    def method(self) -> str:
        """The method name written into predictions (``--method``, else from the model)."""
        return self.method_name or f"{_METHOD_PREFIX}:{self.model}[{self.mode}]"


class _CallFailedError(Exception):
    """A model call that failed for good; ``kind`` is the failure kind of the case."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _ReplyError(Exception):
    """One attempt's reply was unusable (``kind``: bad_reply, reply_too_large, timeout)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _failure_kind(error: BaseException) -> str:
    import openai

    if isinstance(error, _ReplyError):
        return error.kind
    if isinstance(error, openai.RateLimitError):
        return "rate_limited"
    if isinstance(error, openai.InternalServerError):
        return "server_error"
    if isinstance(error, openai.APITimeoutError):
        return "timeout"
    if isinstance(error, openai.APIConnectionError):
        return "connection"
    return "api_error"


def _transient(error: BaseException) -> bool:
    import openai

    if isinstance(error, _ReplyError):
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code == 429 or error.status_code >= 500
    return isinstance(error, openai.APIConnectionError)  # includes timeouts


def describe(error: BaseException) -> str:
    """The error and its root cause on one line (``Connection error.`` alone says nothing)."""
    text = " ".join(str(error).split()) or type(error).__name__
    cause = error.__cause__ or error.__context__
    seen = 0
    while cause is not None and seen < 5:
        more = " ".join(str(cause).split()) or type(cause).__name__
        if more not in text:
            text = f"{text} ({type(cause).__name__}: {more})"
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return text[:300]


def _stored(text: str | None) -> tuple[str, dict[str, Any]]:
    """``text`` as a trajectory keeps it: cut at MAX_STORED_CHARS, with a note when cut."""
    text = text or ""
    if len(text) <= MAX_STORED_CHARS:
        return text, {}
    return text[:MAX_STORED_CHARS], {
        "truncated": f"{len(text)} characters, first {MAX_STORED_CHARS} kept"
    }


def _completion(body: bytes, content_type: str) -> Any:
    """A chat completion from a reply body; _ReplyError naming what is wrong with it."""
    from openai.types.chat import ChatCompletion
    from pydantic import ValidationError

    try:
        value = json.loads(body)
    except ValueError:
        start = body[:80].decode("utf-8", errors="replace")
        raise _ReplyError(
            "bad_reply",
            f"the reply is not JSON (content-type {content_type or 'none'}): {start!r}",
        ) from None
    if not isinstance(value, dict):
        raise _ReplyError("bad_reply", f"the reply is a JSON {type(value).__name__}, not an object")
    choices = value.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _ReplyError(
            "bad_reply", f"the reply has no choices (choices: {json.dumps(choices)[:40]})"
        )
    if not isinstance(choices[0], dict) or not isinstance(choices[0].get("message"), dict):
        raise _ReplyError("bad_reply", "the reply's first choice has no message object")
    # OpenAI-compatible servers omit bookkeeping fields now and then; they are not the answer
    value = {"id": "", "created": 0, "model": "", "object": "chat.completion", **value}
    value["choices"] = [{"index": 0, "finish_reason": "stop", **choices[0]}]
    try:
        return ChatCompletion.model_validate(value)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        raise _ReplyError(
            "bad_reply", f"the reply is malformed at {where}: {first['msg']}"
        ) from None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class _Reply:
    """One successful model call: the SDK response, its latency and the retried errors."""

    response: Any
    latency_s: float
    retries: list[str]

    @property
    def message(self) -> Any:
        """The first choice's message."""
        return self.response.choices[0].message


@dataclass
class _Case:
    """Book-keeping of one case while it runs."""

    trajectory: Trajectory
    model_s: float = 0.0
    model_cpu_s: float = 0.0
    calls: int = 0
    attempts: list[str] = field(default_factory=list)


class LlmAgent:
    """Solves cases by talking to an OpenAI-compatible endpoint."""

    def __init__(self, settings: LlmSettings, client: OpenAI | None = None) -> None:
        from openai import OpenAI

        self.settings = settings
        self.client = client or OpenAI(
            api_key=settings.api_key,
            base_url=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=0,
        )
        self._structured = True
        self._lock = threading.Lock()
        self.last_error = ""
        """The last call failure, as ``kind: cause`` (what a stopped run reports)."""

    @property
    def endpoint(self) -> str:
        """The base URL every call goes to."""
        return self.settings.base_url

    @property
    def method(self) -> str:
        """The method name written into predictions."""
        return self.settings.method

    # -- one model call -----------------------------------------------------------------

    def _create(self, state: _Case, messages: list[dict[str, Any]], **extra: Any) -> _Reply:
        errors: list[str] = []

        def note(retry: RetryCallState) -> None:
            outcome = retry.outcome
            error = None if outcome is None else outcome.exception()
            if error is not None:
                errors.append(f"{_failure_kind(error)}: {str(error)[:200]}")

        retrying = Retrying(
            retry=retry_if_exception(_transient),
            stop=stop_after_attempt(self.settings.attempts),
            wait=wait_exponential(
                multiplier=self.settings.backoff_s, max=self.settings.backoff_max_s
            ),
            before_sleep=note,
            reraise=True,
        )
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            for attempt in retrying:
                with attempt:
                    response = self._once(messages, extra)
        except Exception as error:
            import openai

            if not isinstance(error, openai.OpenAIError | _ReplyError):
                raise
            errors.append(f"{_failure_kind(error)}: {describe(error)[:200]}")
            state.attempts.extend(errors)
            self.last_error = f"{_failure_kind(error)}: {describe(error)}"
            raise _CallFailedError(_failure_kind(error), describe(error)) from error
        finally:
            state.model_s += time.perf_counter() - started
            state.model_cpu_s += time.thread_time() - cpu
            state.calls += 1
        state.attempts.extend(errors)
        return _Reply(response, time.perf_counter() - started, errors)

    def _once(self, messages: list[dict[str, Any]], extra: dict[str, Any]) -> Any:
        """One attempt: the body streamed under the call's deadline and size cap, then checked."""
        deadline = time.monotonic() + self.settings.timeout_s
        limit = self.settings.max_reply_bytes
        completions: Any = self.client.chat.completions
        tokens = {"max_tokens": self.settings.max_tokens} if self.settings.max_tokens else {}
        with completions.with_streaming_response.create(
            model=self.settings.model, messages=messages, **tokens, **extra
        ) as raw:
            content_type = str(raw.headers.get("content-type", ""))
            declared = raw.headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > limit:
                raise _ReplyError(
                    "reply_too_large", f"the reply declares {declared} bytes (cap {limit})"
                )
            body = bytearray()
            for chunk in raw.iter_bytes():
                body += chunk
                if len(body) > limit:
                    raise _ReplyError("reply_too_large", f"the reply exceeds {limit} bytes")
                if time.monotonic() > deadline:
                    raise _ReplyError(
                        "timeout",
                        f"the reply took longer than {self.settings.timeout_s:g} s in total",
                    )
        return _completion(bytes(body), content_type)

    def _metrics(self, reply: _Reply) -> Metrics:
        usage = getattr(reply.response, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        details = getattr(usage, "prompt_tokens_details", None)
        cached = int(getattr(details, "cached_tokens", 0) or 0)
        price = self.settings.price
        return Metrics(
            prompt_tokens=prompt,
            completion_tokens=completion,
            cached_tokens=cached,
            cost_usd=None if price is None else round(price.cost(prompt, completion, cached), 8),
        )

    def _record(
        self,
        state: _Case,
        reply: _Reply,
        tool_calls: list[ToolCall] | None = None,
        results: list[ObservationResult] | None = None,
    ) -> None:
        text, cut = _stored(reply.message.content)
        state.trajectory.add(
            "agent",
            text,
            timestamp=_now(),
            model_name=getattr(reply.response, "model", None) or self.settings.model,
            tool_calls=tool_calls,
            observation=Observation(results=results) if results else None,
            metrics=self._metrics(reply),
            extra={
                "latency_s": round(reply.latency_s, 6),
                "retries": reply.retries,
                "finish_reason": reply.response.choices[0].finish_reason,
                **cut,
            },
        )

    # -- a case ---------------------------------------------------------------------------

    def solve(self, case: CaseInputs) -> CaseResult:
        """Run one case to an answer or a failure; never raises on endpoint trouble."""
        started, cpu = time.perf_counter(), time.thread_time()
        trajectory = Trajectory(
            session_id=f"{case.case_id}:{self.settings.mode}",
            agent=Agent(
                name="r2act-llm-runner",
                version=__version__,
                model_name=self.settings.model,
                extra={"mode": self.settings.mode, "view": case.view},
            ),
        )
        state = _Case(trajectory)
        answer: FinalAnswer | None = None
        failure: str | None = None
        try:
            if self.settings.mode == "tools":
                answer, failure = self._tools(case, state)
            else:
                answer, failure = self._prompt(case, state)
        except _CallFailedError as error:
            failure = error.kind
            trajectory.add("system", f"model call failed: {error}", timestamp=_now())
        elapsed = time.perf_counter() - started
        cpu = time.thread_time() - cpu
        steps = max(state.calls, 1)
        trajectory.finish(
            {
                "outcome": "answered" if answer is not None else "failed",
                "failure": failure,
                "model_calls": state.calls,
                "retries": state.attempts,
                "latency_s": round(elapsed, 6),
                "model_s": round(state.model_s, 6),
                "harness_s_per_step": round(max(elapsed - state.model_s, 0.0) / steps, 6),
                "harness_cpu_s_per_step": round(max(cpu - state.model_cpu_s, 0.0) / steps, 6),
            }
        )
        return CaseResult.of(case.case_id, self.method, answer, failure, trajectory)

    def _prompt(self, case: CaseInputs, state: _Case) -> tuple[FinalAnswer | None, str | None]:
        evidence = digest(case, self.settings.digest_tokens)
        user = f"{evidence}\n\n{ANSWER_FORMAT}"
        prompt = system_prompt(case_fault_types(case.topology))
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": prompt},
            {"role": "user", "content": user},
        ]
        state.trajectory.add("system", prompt, timestamp=_now())
        state.trajectory.add("user", user, timestamp=_now())
        reply = self._structured_call(state, messages, case)
        self._record(state, reply)
        content = reply.message.content
        answer, why = parse_answer(content)
        if answer is not None:
            return answer, None
        repair = f"That reply is not a valid answer ({why}). {ANSWER_FORMAT}"
        messages += [
            {"role": "assistant", "content": content or ""},
            {"role": "user", "content": repair},
        ]
        state.trajectory.add("user", repair, timestamp=_now())
        reply = self._structured_call(state, messages, case)
        self._record(state, reply)
        answer, why = parse_answer(reply.message.content)
        return (answer, None) if answer is not None else (None, "malformed_answer")

    def _structured_call(
        self, state: _Case, messages: list[dict[str, Any]], case: CaseInputs
    ) -> _Reply:
        if self._structured:
            answer = answer_schema(case_fault_types(case.topology))
            schema = {"name": "r2act_answer", "schema": answer, "strict": False}
            try:
                return self._create(
                    state, messages, response_format={"type": "json_schema", "json_schema": schema}
                )
            except _CallFailedError as error:
                import openai

                if not isinstance(error.__cause__, openai.BadRequestError):
                    raise
                with self._lock:
                    self._structured = False
                state.trajectory.add(
                    "system", "endpoint refused response_format; plain replies from now on"
                )
        return self._create(state, messages)

    def _tools(self, case: CaseInputs, state: _Case) -> tuple[FinalAnswer | None, str | None]:
        env = CaseEnvironment(case)
        user = (
            f"Investigate this case (view: {case.view}) with the tools, then call submit "
            f"with rca and plan. You have {self.settings.max_steps} model turns."
        )
        prompt = system_prompt(case_fault_types(case.topology))
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": prompt},
            {"role": "user", "content": user},
        ]
        state.trajectory.add("system", prompt, timestamp=_now())
        state.trajectory.add("user", user, timestamp=_now())
        tools = openai_tools(case.view)
        for turn in range(self.settings.max_steps + 1):
            forced = turn == self.settings.max_steps
            extra: dict[str, Any] = {"tools": tools}
            if forced:
                note = "Step budget used up: call submit now with your best answer."
                messages.append({"role": "user", "content": note})
                state.trajectory.add("user", note, timestamp=_now())
                extra["tool_choice"] = {"type": "function", "function": {"name": "submit"}}
            reply = self._create(state, messages, **extra)
            message = reply.message
            calls = [c for c in message.tool_calls or [] if getattr(c, "function", None)]
            if not calls:
                self._record(state, reply)
                answer, _ = parse_answer(message.content)
                if answer is not None:
                    return answer, None
                if forced:
                    return None, "no_answer"
                nudge = "Use the tools, and finish by calling submit."
                messages += [
                    {"role": "assistant", "content": message.content or ""},
                    {"role": "user", "content": nudge},
                ]
                state.trajectory.add("user", nudge, timestamp=_now())
                continue
            oversized = {
                c.id for c in calls if len(c.function.arguments or "") > MAX_TOOL_ARGS_CHARS
            }
            messages.append(
                {
                    "role": "assistant",
                    "content": message.content or "",
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": c.function.name,
                                # an oversized argument string is not sent back to the model
                                "arguments": "{}" if c.id in oversized else c.function.arguments,
                            },
                        }
                        for c in calls
                    ],
                }
            )
            records, results = [], []
            for c in calls:
                if c.id in oversized:
                    size = len(c.function.arguments or "")
                    content = json.dumps(
                        {"error": f"arguments of {size} characters refused (at most "
                                  f"{MAX_TOOL_ARGS_CHARS}); ask with shorter arguments"}
                    )  # fmt: skip
                else:
                    content, _error = call_tool(env, c.function.name, c.function.arguments)
                messages.append({"role": "tool", "tool_call_id": c.id, "content": content})
                records.append(
                    ToolCall(
                        tool_call_id=c.id,
                        function_name=c.function.name[:200],
                        arguments=_args(c.function.arguments),
                    )
                )
                results.append(ObservationResult(source_call_id=c.id, content=_stored(content)[0]))
            self._record(state, reply, records, results)
            if env.submission is not None:
                answer, _ = validate_answer(
                    env.submission.model_dump(mode="json", include={"rca", "plan"})
                )
                return answer, None
            if forced:
                return None, "no_answer"
        return None, "no_answer"


def _args(raw: str | None) -> dict[str, Any]:
    """Tool arguments as a trajectory keeps them (oversized ones cut, with a note)."""
    raw = raw or "{}"
    if len(raw) > MAX_STORED_CHARS:
        return {"_unparsed": raw[:2000], "_note": f"{len(raw)} characters, first 2000 kept"}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {"_unparsed": raw[:2000]}
    return value if isinstance(value, dict) else {"_value": value}
