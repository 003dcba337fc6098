"""``r2act cleanup``: sweep every r2act-managed chaos object off a target.

The lifecycle removes what it injects, even on signals; this sweep is for what only a
SIGKILL or a lost connection can leave behind. It removes exactly the objects labelled
``app.kubernetes.io/managed-by=r2act`` in the campaign's namespace (the adapter's
``leftovers``), and reports each one.
"""

from __future__ import annotations

from collections.abc import Callable

from r2act.cluster.base import Cluster
from r2act.collector.retrying import RetryPolicy, call_with_retry
from r2act.schema import ChaosRef


def remover(
    cluster: Cluster, policy: RetryPolicy, timeout_s: float, sleep: Callable[[float], None] | None
) -> Callable[[ChaosRef], None]:
    """A function removing one object with bounded retries (used by the guard and sweep)."""

    def remove(ref: ChaosRef) -> None:
        call_with_retry(
            lambda: cluster.remove(ref, timeout_s),
            policy=policy,
            sleep=sleep or cluster.clock.sleep,
            on_retry=lambda _attempt, _error: None,
        )

    return remove


def sweep(
    cluster: Cluster,
    policy: RetryPolicy | None = None,
    timeout_s: float = 60.0,
    sleep: Callable[[float], None] | None = None,
) -> list[ChaosRef]:
    """Remove every leftover r2act chaos object; returns what was removed."""
    policy = policy or RetryPolicy()
    found = call_with_retry(
        cluster.leftovers,
        policy=policy,
        sleep=sleep or cluster.clock.sleep,
        on_retry=lambda _attempt, _error: None,
    )
    remove = remover(cluster, policy, timeout_s, sleep)
    for ref in found:
        remove(ref)
    return found
