"""The cleanup guard removes armed objects on signals, and a second signal cannot skip it."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from r2act.collector.guard import CleanupGuard, Interrupted
from r2act.errors import PermanentClusterError
from r2act.schema import ChaosRef

REF = ChaosRef(kind="PodChaos", name="r2act-x", namespace="default", incident_id="i")


@pytest.fixture(autouse=True)
def _restore_signal_handlers() -> Iterator[None]:
    """An interrupted guard leaves SIGINT/SIGTERM ignored; give pytest its handlers back."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def test_after_an_interrupt_a_late_signal_cannot_kill_the_exiting_process() -> None:
    with pytest.raises(Interrupted), CleanupGuard(lambda _ref: None):
        os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    os.kill(os.getpid(), signal.SIGINT)  # ignored: no KeyboardInterrupt here


def test_first_sigint_raises_and_exit_removes_the_armed_object() -> None:
    removed: list[ChaosRef] = []
    with pytest.raises(Interrupted) as caught, CleanupGuard(removed.append) as guard:
        guard.arm(REF)
        os.kill(os.getpid(), signal.SIGINT)
    assert caught.value.exit_code == 130
    assert removed == [REF]


def test_sigterm_is_treated_like_sigint() -> None:
    removed: list[ChaosRef] = []
    with pytest.raises(Interrupted) as caught, CleanupGuard(removed.append) as guard:
        guard.arm(REF)
        os.kill(os.getpid(), signal.SIGTERM)
    assert caught.value.signum == signal.SIGTERM
    assert removed == [REF]


def test_a_second_sigint_during_cleanup_does_not_interrupt_it() -> None:
    removed: list[ChaosRef] = []
    notes: list[str] = []

    def slow_remove(ref: ChaosRef) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # the impatient second Ctrl-C
        removed.append(ref)

    with pytest.raises(Interrupted), CleanupGuard(slow_remove, notes.append) as guard:
        guard.arm(REF)
        os.kill(os.getpid(), signal.SIGINT)
    assert removed == [REF]
    assert notes and "still removing" in notes[0]


def test_a_signal_while_shielded_is_raised_afterwards() -> None:
    with CleanupGuard(lambda _ref: None) as guard:
        with guard.shielded():
            os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(Interrupted):
            guard.raise_if_interrupted()


def test_disarmed_objects_are_not_removed_and_handlers_are_restored() -> None:
    before = signal.getsignal(signal.SIGINT)
    removed: list[ChaosRef] = []
    with CleanupGuard(removed.append) as guard:
        guard.arm(REF)
        guard.disarm(REF)
    assert removed == []
    assert signal.getsignal(signal.SIGINT) is before


def test_a_failing_removal_at_exit_is_reported_not_raised() -> None:
    notes: list[str] = []

    def broken(_ref: ChaosRef) -> None:
        raise PermanentClusterError("api down")

    with CleanupGuard(broken, notes.append) as guard:
        guard.arm(REF)
    assert guard.is_armed(REF)
    assert "could not remove PodChaos/r2act-x" in notes[0]
