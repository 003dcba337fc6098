"""Test support: records built from planned incidents, and a cluster wrapper that records calls."""

from __future__ import annotations

from typing import Any

from r2act.cluster.sim import SimulatedCluster
from r2act.quality_gate import planned_record
from r2act.schema import (
    BenchmarkRecord,
    PlannedIncident,
)
from r2act.systems import ONLINE_BOUTIQUE


class SpyCluster:
    """Delegates to a simulated cluster and records the name of every call made."""

    def __init__(self, inner: SimulatedCluster) -> None:
        self.inner = inner
        self.calls: list[str] = []
        self.fail_on: str | None = None

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if not callable(attribute):
            return attribute

        def spy(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            if self.fail_on == name:
                raise KeyboardInterrupt(f"interrupted during {name}")
            return attribute(*args, **kwargs)

        return spy

    @property
    def clock(self) -> Any:
        return self.inner.clock

    @property
    def namespace(self) -> str:
        return self.inner.namespace

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint


def record_of(incident: PlannedIncident) -> BenchmarkRecord:
    """A benchmark record for a planned incident, labelled by the default policy."""
    return planned_record(incident, ONLINE_BOUTIQUE, tool_version="test")
