"""Bounded retry with exponential backoff and jitter for the real-cluster adapters.

Kubernetes and Prometheus both shed load with 429/5xx and drop connections while a
control plane restarts; one failed call must not fail an incident. Retries are bounded
(a dead API server should fail fast and loudly) and the sleep is injectable so that the
adapter tests exercise the retry path without waiting.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from r2act.errors import TransientClusterError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a transient failure is retried."""

    attempts: int = 5
    """Total attempts including the first; the last failure is re-raised."""
    initial_wait_s: float = 0.5
    """First backoff; it doubles each attempt up to ``max_wait_s``."""
    max_wait_s: float = 8.0
    """Upper bound of one backoff."""
    jitter_s: float = 0.5
    """Random extra wait so that concurrent clients do not retry in lockstep."""
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    """How to wait; tests pass a no-op or a recorder."""

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn``; retry it while it raises ``TransientClusterError``, at most ``attempts``."""
        retrying = Retrying(
            retry=retry_if_exception_type(TransientClusterError),
            stop=stop_after_attempt(max(1, self.attempts)),
            wait=wait_exponential_jitter(
                multiplier=self.initial_wait_s, max=self.max_wait_s, jitter=self.jitter_s
            ),
            sleep=self.sleep,
            reraise=True,
        )
        try:
            return retrying(fn)
        except RetryError as exc:  # pragma: no cover - reraise=True re-raises the cause
            raise TransientClusterError(str(exc)) from exc


NO_WAIT = RetryPolicy(initial_wait_s=0.0, max_wait_s=0.0, jitter_s=0.0, sleep=lambda _s: None)
"""Retries without waiting: for tests that exercise the retry path."""
