"""Fixtures for the adapter contract tests; the emulator and its seed live in kube_harness."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kube_harness import EmulatorThread, FakeClock, Harness, seed_boutique


@pytest.fixture
def harness() -> Iterator[Harness]:
    """A seeded Online Boutique namespace on a fresh emulator, with a fake clock."""
    with EmulatorThread() as emulator:
        h = Harness(emulator=emulator, clock=FakeClock())
        seed_boutique(h)
        yield h
