"""A signal during the ledger write of ``arm`` still leaves the object armed for cleanup."""

from __future__ import annotations

import signal

import pytest

from r2act.collector.guard import CleanupGuard, Interrupted
from r2act.schema import ChaosRef

REF = ChaosRef(kind="NetworkChaos", name="r2act-delay-1", namespace="default", incident_id="x")


def test_an_interrupted_ledger_write_leaves_the_object_armed() -> None:
    removed: list[ChaosRef] = []
    ledger: list[str] = []

    def write_then_stop(ref: ChaosRef) -> None:
        ledger.append(f"fault {ref.name}")  # the line is on disk, then the signal lands
        raise Interrupted(signal.SIGINT)

    guard = CleanupGuard(
        removed.append,
        on_arm=write_then_stop,
        on_disarm=lambda ref: ledger.append(f"fault_removed {ref.name}"),
    )
    with pytest.raises(Interrupted):
        guard.arm(REF)
    assert guard.is_armed(REF)  # so the lifecycle's finally removes it and says so
    guard.remove_all()
    assert removed == [REF]
    assert ledger == ["fault r2act-delay-1", "fault_removed r2act-delay-1"]
