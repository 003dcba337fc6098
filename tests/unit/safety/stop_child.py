"""Run one r2act command in this process and stop it by a signal at a chosen cluster call.

``python stop_child.py WHEN SIGNAL [--records FILE] -- ARGS...`` runs ``r2act ARGS``; WHEN is
``method:N`` (the signal is sent right after the N-th call of ``SimulatedCluster.method``
returned), ``after:method`` (at the first health probe after that method returned), or
``never``. The signal is real (``os.kill`` on this process), so handlers, exit codes and
SIGKILL behave exactly as from a terminal; only the moment is chosen, so the matrix is
deterministic. ``--records`` replaces the dataset with records from a JSON-lines file
(replay tests need labels and action spaces, not telemetry).
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from r2act.cluster.sim import SimulatedCluster


def _stop(signum: int) -> None:
    os.kill(os.getpid(), signum)


def _arm(when: str, signum: int) -> None:
    if when == "never":
        return
    kind, _, value = when.partition(":")
    if kind == "after":
        method, armed = value, [False]
        original = getattr(SimulatedCluster, method)
        health = SimulatedCluster.health

        def marking(self: SimulatedCluster, *args: Any, **kwargs: Any) -> Any:
            result = original(self, *args, **kwargs)
            armed[0] = True
            return result

        def probing(self: SimulatedCluster) -> Any:
            result = health(self)
            if armed[0]:
                armed[0] = False
                _stop(signum)
            return result

        setattr(SimulatedCluster, method, marking)
        SimulatedCluster.health = probing  # type: ignore[method-assign]
        return
    method, nth, count = kind, int(value), [0]
    original = getattr(SimulatedCluster, method)

    def counting(self: SimulatedCluster, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        count[0] += 1
        if count[0] == nth:
            _stop(signum)
        return result

    setattr(SimulatedCluster, method, counting)


def _use_records(path: Path) -> None:
    from r2act import datasets
    from r2act.schema import BenchmarkRecord

    records = [BenchmarkRecord.model_validate_json(x) for x in path.read_text().splitlines()]
    datasets.load_records = lambda _d: list(records)  # type: ignore[assignment]
    datasets.validate = lambda _d: []  # type: ignore[assignment]


def main() -> None:
    when, name, *rest = sys.argv[1:]
    if rest[0] == "--records":
        _use_records(Path(rest[1]))
        rest = rest[2:]
    assert rest[0] == "--"
    _arm(when, signal.Signals[name])
    sys.argv = ["r2act", *rest[1:]]
    from r2act.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
