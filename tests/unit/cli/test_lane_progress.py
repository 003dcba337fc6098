"""The lanes progress display: elapsed and remaining cluster time per lane."""

from __future__ import annotations

from rich.console import Console

from r2act.cli._lane_progress import LanesProgress
from r2act.collector import IncidentResult


def test_each_lane_shows_its_elapsed_and_remaining_time() -> None:
    console = Console(record=True, width=120, color_system=None)
    with LanesProgress(console) as progress:
        progress.campaign_started(10, 0, ["lane-1", "lane-2"])
        assert progress.clock_text("lane-1") == "elapsed 0m 00s"  # nothing to go on yet
        progress.incident_started("lane-1", "a")
        progress.incident_finished("lane-1", IncidentResult("a", "completed"), 600.0)
        # 9 incidents left on 2 lanes, 600 s each: 4.5 more each
        assert progress.clock_text("lane-1") == "elapsed 10m 00s, about 45m 00s left"
        # lane 2 has finished nothing: it borrows the campaign's mean
        assert progress.clock_text("lane-2") == "elapsed 0m 00s, about 45m 00s left"
        progress.incident_finished(
            "lane-2", IncidentResult("b", "failed", error="ClusterError: boom"), 1200.0
        )
        assert progress.clock_text("lane-2") == "elapsed 20m 00s, about 1h 20m left"
        progress.message("lane-2: moved unfinished b aside")
    text = console.export_text()
    assert "failed lane-2 b: ClusterError: boom" in text
    assert "lane-2: moved unfinished b aside" in text


def test_a_top_up_round_adds_its_spares_to_the_total_and_the_remaining_time() -> None:
    console = Console(record=True, width=120, color_system=None)
    with LanesProgress(console) as progress:
        progress.campaign_started(2, 0, ["lane-1", "lane-2"])
        progress.incident_finished("lane-1", IncidentResult("a", "completed"), 600.0)
        progress.incident_finished("lane-2", IncidentResult("b", "completed"), 600.0)
        assert progress.clock_text("lane-1") == "elapsed 10m 00s, about 0m 00s left"
        progress.round_started(4)  # 4 spares on 2 lanes: 2 more incidents each
        assert progress.clock_text("lane-1") == "elapsed 10m 00s, about 20m 00s left"
    assert "top-up round: 4 spares" in console.export_text()
