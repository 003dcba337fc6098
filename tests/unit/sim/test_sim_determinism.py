"""Same seed and same calls give byte-identical telemetry, whatever the reading order."""

from __future__ import annotations

import json
from pathlib import Path

from r2act.campaigns.defaults import DEFAULT_QUERIES
from r2act.cluster.sim import SimulatedCluster
from r2act.schema import TimeWindow

from .conftest import NO_GLITCHES, Run, incident

QUERIES = {k: v.replace("$namespace", "default") for k, v in DEFAULT_QUERIES.items()}


def _telemetry(cluster: SimulatedCluster, run: Run) -> bytes:
    parts: list[str] = []
    for window in (run.pre, run.during):
        parts += [json.dumps(line) for batch in cluster.logs(window) for line in batch]
        parts += [event.model_dump_json() for event in cluster.events(window)]
        parts += [json.dumps(s) for s in cluster.metrics(window, QUERIES, 15.0)]
    parts.append(cluster.state().model_dump_json())
    parts.append(cluster.chaos_status(run.ref).model_dump_json())
    return "\n".join(parts).encode()


def _run(path: Path, seed: int) -> tuple[SimulatedCluster, Run]:
    cluster = SimulatedCluster(path, seed=seed, glitches=NO_GLITCHES)
    return cluster, Run(cluster, incident("cartservice", "memory_pressure"))


def test_same_seed_and_calls_give_identical_bytes(tmp_path: Path) -> None:
    first = _telemetry(*_run(tmp_path / "a", 11))
    second = _telemetry(*_run(tmp_path / "b", 11))
    assert first == second
    assert len(first) > 1_000_000


def test_another_seed_gives_other_telemetry(tmp_path: Path) -> None:
    assert _telemetry(*_run(tmp_path / "a", 11)) != _telemetry(*_run(tmp_path / "b", 12))


def test_reading_order_does_not_change_a_window(tmp_path: Path) -> None:
    cluster, run = _run(tmp_path, 3)
    during_first = [line for batch in cluster.logs(run.during) for line in batch]
    pre = [line for batch in cluster.logs(run.pre) for line in batch]
    again = [line for batch in cluster.logs(run.during) for line in batch]
    fresh_cluster, fresh_run = _run(tmp_path / "fresh", 3)
    fresh_pre = [line for batch in fresh_cluster.logs(fresh_run.pre) for line in batch]
    assert during_first == again
    assert pre == fresh_pre


def test_logs_stop_at_now(tmp_path: Path) -> None:
    cluster, run = _run(tmp_path, 5)
    now = cluster.clock.now()
    future = TimeWindow(run.during.start, now + 600)
    assert max(line.ts for batch in cluster.logs(future) for line in batch) <= now
