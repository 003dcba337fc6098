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
  ``connection``, ``api_error``): no line is written, so a resumed run tries it again.
"""

from __future__ import annotations

import json
import threading
import time
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
from r2act.agents.answers import FinalAnswer, answer_schema, parse_answer, validate_answer
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

SYSTEM_PROMPT = (
    "You are an SRE diagnosing one incident in a Kubernetes microservice system from its "
    "observations (phases: pre = before, during = fault window, post = after). Name the "
    "root-cause service and fault type, and propose one recovery plan inside the action "
    f"space. Fault types: {', '.join(f.value for f in FaultType)}. Operations: "
    f"{', '.join(o.value for o in Operation)}. A plan is a JSON object with 'operation' "
    "and exactly the fields that operation needs (target; replicas for scale_out; "
    "memory_limit for increase_memory_limit; scope for rollback_config; dependency for "
    "repair_dependency)."
)
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

    @property
    def method(self) -> str:
        """The method name written into predictions."""
        return f"llm:{self.model}[{self.mode}]"


class _CallFailedError(Exception):
    """A model call that failed for good; ``kind`` is the failure kind of the case."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _failure_kind(error: BaseException) -> str:
    import openai

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

    if isinstance(error, openai.APIStatusError):
        return error.status_code == 429 or error.status_code >= 500
    return isinstance(error, openai.APIConnectionError)  # includes timeouts


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
                    completions: Any = self.client.chat.completions
                    response = completions.create(
                        model=self.settings.model,
                        messages=messages,
                        **(
                            {"max_tokens": self.settings.max_tokens}
                            if self.settings.max_tokens
                            else {}
                        ),
                        **extra,
                    )
        except Exception as error:
            import openai

            if not isinstance(error, openai.OpenAIError):
                raise
            errors.append(f"{_failure_kind(error)}: {str(error)[:200]}")
            state.attempts.extend(errors)
            raise _CallFailedError(_failure_kind(error), str(error)[:300]) from error
        finally:
            state.model_s += time.perf_counter() - started
            state.model_cpu_s += time.thread_time() - cpu
            state.calls += 1
        state.attempts.extend(errors)
        return _Reply(response, time.perf_counter() - started, errors)

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
        state.trajectory.add(
            "agent",
            reply.message.content or "",
            timestamp=_now(),
            model_name=getattr(reply.response, "model", None) or self.settings.model,
            tool_calls=tool_calls,
            observation=Observation(results=results) if results else None,
            metrics=self._metrics(reply),
            extra={
                "latency_s": round(reply.latency_s, 6),
                "retries": reply.retries,
                "finish_reason": reply.response.choices[0].finish_reason,
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
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user},
        ]
        state.trajectory.add("system", SYSTEM_PROMPT, timestamp=_now())
        state.trajectory.add("user", user, timestamp=_now())
        reply = self._structured_call(state, messages)
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
        reply = self._structured_call(state, messages)
        self._record(state, reply)
        answer, why = parse_answer(reply.message.content)
        return (answer, None) if answer is not None else (None, "malformed_answer")

    def _structured_call(self, state: _Case, messages: list[dict[str, Any]]) -> _Reply:
        if self._structured:
            schema = {"name": "r2act_answer", "schema": answer_schema(), "strict": False}
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
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user},
        ]
        state.trajectory.add("system", SYSTEM_PROMPT, timestamp=_now())
        state.trajectory.add("user", user, timestamp=_now())
        tools = openai_tools()
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
            calls = list(message.tool_calls or [])
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
                                "arguments": c.function.arguments,
                            },
                        }
                        for c in calls
                    ],
                }
            )
            records, results = [], []
            for c in calls:
                content, _error = call_tool(env, c.function.name, c.function.arguments)
                messages.append({"role": "tool", "tool_call_id": c.id, "content": content})
                records.append(
                    ToolCall(
                        tool_call_id=c.id,
                        function_name=c.function.name,
                        arguments=_args(c.function.arguments),
                    )
                )
                results.append(ObservationResult(source_call_id=c.id, content=content))
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
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {"_unparsed": (raw or "")[:2000]}
    return value if isinstance(value, dict) else {"_value": value}
