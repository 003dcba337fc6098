"""Helpers of the collector tests: small campaigns in tmp dirs, and a transient-error spy.

The spy is not a fake: every call goes to the real simulated cluster; it only counts the
transient errors raised, so a test can check the journal recorded exactly those retries.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from r2act.errors import TransientClusterError
from r2act.systems import get_system

ALL_FAULTS = tuple(f.value for f in get_system("onlineboutique").fault_types)
"""Every fault type Online Boutique realises (the paper's eight), in the schema's order."""


def write_campaign(  # noqa: PLR0917
    directory: Path,
    name: str = "tiny",
    services: Sequence[str] = ("cartservice",),
    faults: Sequence[str] = ("pod_failure", "http_error"),
    repetitions: int = 1,
    glitches: dict[str, object] | None = None,
    phases: dict[str, int] | None = None,
) -> Path:
    """A sim campaign with short phases and no random glitches unless asked for.

    HTTP faults are frontend route rules (docs/faults.md), so when any is asked for, the
    frontend joins the services and gets only those; the other services get the rest."""
    quiet = {"injection_failure": 0.0, "metric_gap": 0.0, "slow_recovery": 0.0}
    http = [f for f in faults if f.startswith("http_")]
    chosen = list(services)
    cells = []
    if http:
        chosen += [] if "frontend" in chosen else ["frontend"]
        for service in chosen:
            for fault in faults:
                if (fault in http) != (service == "frontend"):
                    cells.append({"service": service, "fault": fault, "repetitions": 0})
    manifest = {
        "name": name,
        "system": "onlineboutique",
        "target": {"kind": "sim", "seed": 11, "glitches": {**quiet, **(glitches or {})}},
        "services": chosen,
        "faults": [{"type": f, "intensities": ["severe"]} for f in faults],
        "repetitions": repetitions,
        "cells": cells,
        "phases": phases or {"pre_s": 20, "during_s": 30, "post_s": 20, "recovery_timeout_s": 60},
        "seed": 5,
    }
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return path


class TransientCounter:
    """Wraps a cluster; ``counts[method]`` is how many transient errors that method raised."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.counts: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if not callable(value):
            return value
        return self._wrap(name, value)

    def _wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                result = fn(*args, **kwargs)
            except TransientClusterError:
                self.counts[name] += 1
                raise
            if isinstance(result, Iterator):
                return self._iterate(name, result)
            return result

        return call

    def _iterate(self, name: str, items: Iterator[Any]) -> Iterator[Any]:
        try:
            yield from items
        except TransientClusterError:
            self.counts[name] += 1
            raise
