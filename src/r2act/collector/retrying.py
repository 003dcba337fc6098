"""Bounded retries of transient cluster errors, with exponential backoff and jitter.

Only ``TransientClusterError`` is retried (the adapters translate API errors at their
edge); a permanent error, or a transient one that outlives the attempts, fails the incident.
Backoff sleeps on the cluster's clock by default: real time on a real cluster, instant on
the simulated one, so tests with a high transient-error rate stay fast.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

from r2act.errors import TransientClusterError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to retry one cluster call."""

    attempts: int = 6
    """Attempts in total, the first included."""
    base_s: float = 0.5
    """Backoff multiplier: waits are random in [0, base * 2**n], capped by ``max_s``."""
    max_s: float = 15.0
    """Longest single wait."""


def call_with_retry(
    fn: Callable[[], T],
    *,
    policy: RetryPolicy,
    sleep: Callable[[float], None],
    on_retry: Callable[[int, BaseException], None],
) -> T:
    """Call ``fn``; on ``TransientClusterError`` report via ``on_retry`` and try again."""

    def before_sleep(state: RetryCallState) -> None:
        outcome = state.outcome
        if outcome is not None and (error := outcome.exception()) is not None:
            on_retry(state.attempt_number, error)

    retrying = Retrying(
        stop=stop_after_attempt(policy.attempts),
        wait=wait_random_exponential(multiplier=policy.base_s, max=policy.max_s),
        retry=retry_if_exception_type(TransientClusterError),
        before_sleep=before_sleep,
        sleep=sleep,
        reraise=True,
    )
    return retrying(fn)
