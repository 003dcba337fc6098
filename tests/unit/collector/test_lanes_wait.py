"""The parent's wait for its lanes: a lane that said it is done is never reported lost.

A lane's last events can reach the queue just after a poll of the parent timed out, and
the lane is then seen to have ended with its ``done`` still unread: that lane was not lost
(it left no fault), and reading it as lost stopped a whole run with a false safety error.
"""

from __future__ import annotations

import multiprocessing
import queue
from pathlib import Path
from typing import Any

from r2act.collector.campaign import CampaignSummary
from r2act.collector.lanes import LanesSummary, NullLanesObserver, _await_lanes


class _LateQueue:
    """A lanes' event queue whose first poll times out whatever it holds, as a poll does
    when the lane's last events arrive a moment after it gave up."""

    def __init__(self, events: Any) -> None:
        self._events = events
        self._polls = 0

    def get(self, timeout: float) -> Any:
        self._polls += 1
        if self._polls == 1:
            raise queue.Empty
        return self._events.get(timeout=timeout)

    def get_nowait(self) -> Any:
        return self._events.get_nowait()


def _ended_lane(events: Any, *last: tuple[str, ...]) -> Any:
    """A real lane process that puts ``last`` on the queue and ends."""
    context = multiprocessing.get_context("spawn")
    process = context.Process(target=_put_all, args=(events, last))
    process.start()
    process.join(timeout=60)
    assert process.exitcode == 0
    return process


def _put_all(events: Any, items: tuple[tuple[str, ...], ...]) -> None:
    for item in items:
        events.put(item)


def _summary(tmp_path: Path) -> LanesSummary:
    return LanesSummary(CampaignSummary("c", tmp_path, 1), cleanup="r2act cleanup c.yaml")


def test_a_lane_whose_done_arrives_after_a_timed_out_poll_is_not_lost(tmp_path: Path) -> None:
    events = multiprocessing.get_context("spawn").Queue()
    process = _ended_lane(events, ("message", "lane-1", "collected"), ("done", "lane-1"))
    out = _summary(tmp_path)
    seen: list[str] = []

    class Observer(NullLanesObserver):
        def message(self, text: str) -> None:
            seen.append(text)

    _await_lanes({"lane-1": process}, _LateQueue(events), Observer(), out)
    assert out.errors == []
    assert seen == ["lane-1: collected"]  # its last events were still dispatched


def test_a_lane_that_ended_without_done_is_reported_lost(tmp_path: Path) -> None:
    events = multiprocessing.get_context("spawn").Queue()
    process = _ended_lane(events, ("message", "lane-2", "started"))
    out = _summary(tmp_path)
    _await_lanes({"lane-2": process}, _LateQueue(events), NullLanesObserver(), out)
    assert [(lane, kind) for lane, kind, _ in out.errors] == [("lane-2", "SafetyError")]
    assert "r2act cleanup c.yaml" in out.errors[0][2]
