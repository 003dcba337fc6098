"""The parent's wait for its lanes: a lane that said it is done is never reported lost, a lane
that ended without saying so always is, and a lane killed hard never stops the others.

Each lane has a pipe of its own (``collector.lanes._await_lanes``). With one queue shared
by every lane, a lane SIGKILLed while it held the queue's write lock left it taken: every
other lane's next event waited for ever and the run hung with their faults injected.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import struct
import threading
import time
from pathlib import Path
from typing import Any

from r2act.collector.campaign import CampaignSummary
from r2act.collector.lane_worker import LaneChannel
from r2act.collector.lanes import LanesSummary, NullLanesObserver, _await_lanes

_CONTEXT = multiprocessing.get_context("spawn")


class _Seen(NullLanesObserver):
    def __init__(self) -> None:
        self.messages: list[str] = []

    def message(self, text: str) -> None:
        self.messages.append(text)


def _put_all(channel: LaneChannel, items: tuple[tuple[str, ...], ...], pause_s: float) -> None:
    for item in items:
        time.sleep(pause_s)
        channel.put(item)


def _cut_short(channel: Any) -> None:
    """Start a message and die inside it, as a lane SIGKILLed in mid-send does."""
    connection = channel._connection
    os.write(connection.fileno(), struct.pack("!i", 4096) + b"cut short")
    os.kill(os.getpid(), signal.SIGKILL)


def _lanes(*targets: tuple[str, Any, tuple[Any, ...]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Started lane processes and the parent's ends of their pipes, as ``_run_lanes`` makes them."""
    processes, readers = {}, {}
    for name, target, args in targets:
        reader, writer = _CONTEXT.Pipe(duplex=False)
        processes[name] = _CONTEXT.Process(target=target, args=(LaneChannel(writer), *args))
        processes[name].start()
        writer.close()
        readers[name] = reader
    return processes, readers


def _summary(tmp_path: Path) -> LanesSummary:
    return LanesSummary(CampaignSummary("c", tmp_path, 1), cleanup="r2act cleanup c.yaml")


def _await_within(seconds: float, *args: Any) -> None:
    waiting = threading.Thread(target=_await_lanes, args=args, daemon=True)
    waiting.start()
    waiting.join(seconds)
    assert not waiting.is_alive(), f"the parent still waits for its lanes after {seconds} s"


def test_a_lane_that_said_done_is_not_lost_and_its_last_events_are_dispatched(
    tmp_path: Path,
) -> None:
    events = (("message", "lane-1", "collected"), ("done", "lane-1"))
    processes, readers = _lanes(("lane-1", _put_all, (events, 0.0)))
    processes["lane-1"].join(timeout=60)  # ended before the parent reads a thing
    out, seen = _summary(tmp_path), _Seen()
    _await_within(60, processes, readers, seen, out)
    assert out.errors == []
    assert seen.messages == ["lane-1: collected"]


def test_a_lane_that_ended_without_done_is_reported_lost(tmp_path: Path) -> None:
    processes, readers = _lanes(("lane-2", _put_all, ((("message", "lane-2", "started"),), 0.0)))
    out = _summary(tmp_path)
    _await_within(60, processes, readers, NullLanesObserver(), out)
    assert [(lane, kind) for lane, kind, _ in out.errors] == [("lane-2", "SafetyError")]
    assert "r2act cleanup c.yaml" in out.errors[0][2]


def test_a_lane_killed_in_mid_send_is_lost_and_the_other_lanes_are_still_heard(
    tmp_path: Path,
) -> None:
    """Lane 1 dies inside a message; lane 2 goes on sending for a while afterwards. The
    parent reads all of lane 2, ends lane 1 as lost (its cut message is the end of its
    pipe, not a wait for the rest) and returns."""
    later = (*(("message", "lane-2", f"step {n}") for n in range(5)), ("done", "lane-2"))
    processes, readers = _lanes(
        ("lane-1", _cut_short, ()),
        ("lane-2", _put_all, (later, 0.1)),
    )
    out, seen = _summary(tmp_path), _Seen()
    _await_within(60, processes, readers, seen, out)
    assert processes["lane-1"].exitcode == -signal.SIGKILL
    assert [(lane, kind) for lane, kind, _ in out.errors] == [("lane-1", "SafetyError")]
    assert "exit code -9" in out.errors[0][2]
    assert [m for m in seen.messages if m.startswith("lane-2")] == [
        f"lane-2: step {n}" for n in range(5)
    ]
