"""Transient cluster errors get a bounded number of retries with jittered exponential waits."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from r2act.collector.retrying import RetryPolicy, call_with_retry
from r2act.errors import PermanentClusterError, TransientClusterError


def _always(error: Exception) -> tuple[list[int], Callable[[], int]]:
    calls: list[int] = []

    def fn() -> int:
        calls.append(1)
        raise error

    return calls, fn


def test_transient_errors_are_retried_at_most_the_policy_attempts_then_reraised() -> None:
    calls, fn = _always(TransientClusterError("503"))
    waits: list[float] = []
    reported: list[int] = []
    with pytest.raises(TransientClusterError, match="503"):
        call_with_retry(
            fn,
            policy=RetryPolicy(attempts=4),
            sleep=waits.append,
            on_retry=lambda attempt, _error: reported.append(attempt),
        )
    assert len(calls) == 4
    assert len(waits) == 3 and reported == [1, 2, 3]


def test_a_permanent_error_is_not_retried() -> None:
    calls, fn = _always(PermanentClusterError("forbidden"))
    waits: list[float] = []
    with pytest.raises(PermanentClusterError):
        call_with_retry(
            fn,
            policy=RetryPolicy(),
            sleep=waits.append,
            on_retry=lambda _attempt, _error: None,
        )
    assert (len(calls), waits) == (1, [])


def test_waits_are_jittered_below_an_exponentially_growing_capped_ceiling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy = RetryPolicy(attempts=7, base_s=0.5, max_s=4.0)
    ceilings = [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]

    def waits_with(uniform: object) -> list[float]:
        monkeypatch.setattr(random, "uniform", uniform)
        _calls, fn = _always(TransientClusterError("reset"))
        waits: list[float] = []
        with pytest.raises(TransientClusterError):
            call_with_retry(
                fn,
                policy=policy,
                sleep=waits.append,
                on_retry=lambda _attempt, _error: None,
            )
        return waits

    assert waits_with(lambda _low, high: high) == ceilings
    assert waits_with(lambda low, _high: low) == [0.0] * len(ceilings)
    monkeypatch.undo()
    random.seed(3)
    jittered = waits_with(random.uniform)
    assert all(0.0 <= w <= c for w, c in zip(jittered, ceilings, strict=True))
    assert len(set(jittered)) == len(jittered)  # random, not a fixed schedule
