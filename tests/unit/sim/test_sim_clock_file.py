"""A clock tick writes a tiny clock file, never the whole state; reopening sees the clock."""

from __future__ import annotations

from pathlib import Path

from r2act.cluster.sim import SimulatedCluster
from r2act.cluster.sim.state import clock_path, load_state, save_state, state_path


def test_ticks_leave_the_state_file_alone_and_a_new_process_sees_the_clock(
    tmp_path: Path,
) -> None:
    cluster = SimulatedCluster(tmp_path, seed=4)
    path = state_path(tmp_path, "default")
    before = path.read_bytes()
    start = cluster.clock.now()
    for _ in range(50):
        cluster.clock.sleep(5)
    assert path.read_bytes() == before  # 50 ticks, no rewrite of the history
    assert clock_path(path).is_file()
    assert SimulatedCluster(tmp_path, seed=4).clock.now() == start + 250


def test_a_full_save_makes_an_older_clock_file_stale(tmp_path: Path) -> None:
    cluster = SimulatedCluster(tmp_path, seed=4)
    path = state_path(tmp_path, "default")
    rewound = load_state(path)
    assert rewound is not None
    cluster.clock.sleep(600)
    stale = clock_path(path).read_bytes()
    save_state(path, rewound)  # a rewind: the state goes back to an earlier clock
    assert not clock_path(path).exists()
    clock_path(path).write_bytes(stale)  # as if a crash had left the old tick file behind
    reopened = load_state(path)
    assert reopened is not None and reopened.now == rewound.now
