"""The adapters' retry policy: bounded, exponential, only for transient errors."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from r2act.cluster.retry import RetryPolicy
from r2act.errors import NotFoundError, TransientClusterError


def _failing(times: int, error: Exception) -> tuple[list[int], Callable[[], str]]:
    calls: list[int] = []

    def fn() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise error
        return "ok"

    return calls, fn


def test_backoff_doubles_up_to_the_cap_and_then_succeeds() -> None:
    slept: list[float] = []
    policy = RetryPolicy(
        attempts=6, initial_wait_s=0.5, max_wait_s=3, jitter_s=0, sleep=slept.append
    )
    calls, fn = _failing(5, TransientClusterError("503"))
    assert policy.call(fn) == "ok"
    assert slept == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert len(calls) == 6


def test_jitter_adds_at_most_its_bound() -> None:
    slept: list[float] = []
    policy = RetryPolicy(
        attempts=3, initial_wait_s=1, max_wait_s=10, jitter_s=0.5, sleep=slept.append
    )
    _calls, fn = _failing(2, TransientClusterError("429"))
    policy.call(fn)
    assert 1.0 <= slept[0] <= 1.5 and 2.0 <= slept[1] <= 2.5


def test_the_last_transient_error_is_raised_after_the_bounded_attempts() -> None:
    policy = RetryPolicy(attempts=3, initial_wait_s=0, jitter_s=0, sleep=lambda _s: None)
    calls, fn = _failing(10, TransientClusterError("reset"))
    with pytest.raises(TransientClusterError, match="reset"):
        policy.call(fn)
    assert len(calls) == 3


def test_permanent_errors_are_not_retried() -> None:
    policy = RetryPolicy(sleep=lambda _s: None)
    calls, fn = _failing(10, NotFoundError("gone"))
    with pytest.raises(NotFoundError):
        policy.call(fn)
    assert len(calls) == 1
