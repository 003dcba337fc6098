"""The collect progress display names the incident and step in progress and shows an ETA."""

from __future__ import annotations

import io

from rich.console import Console

from r2act.cli._progress import RichObserver
from r2act.collector import IncidentResult


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=160, color_system=None), out


def test_the_bar_shows_current_incident_step_count_failures_and_eta() -> None:
    console, out = _console()
    with RichObserver(console) as observer:
        observer.campaign_started(pending=3, skipped=1)
        observer.incident_finished(IncidentResult("a_b_severe_r01", "failed", error="boom"))
        observer.incident_started("cartservice_pod_failure_severe_r01")
        observer.step_started("cartservice_pod_failure_severe_r01", "verify_recovery")
    text = out.getvalue()
    last = text.rsplit("\r", 1)[-1]
    assert "cartservice_pod_failure_severe_r01 verify_recovery" in last
    assert "1/3" in last and "1 failed" in last and "ETA" in last
    assert "failed a_b_severe_r01: boom" in text


def test_no_bar_is_drawn_when_nothing_is_pending() -> None:
    console, out = _console()
    with RichObserver(console) as observer:
        observer.campaign_started(pending=0, skipped=4)
    assert out.getvalue() == ""


def test_a_top_up_round_grows_the_bar_by_its_spares_and_says_so() -> None:
    console, out = _console()
    with RichObserver(console) as observer:
        observer.campaign_started(pending=2, skipped=0)
        observer.incident_finished(IncidentResult("a_r01", "completed"))
        observer.incident_finished(IncidentResult("a_r02", "completed", clean=False))
        observer.round_started(1)
    text = out.getvalue()
    assert "top-up round: 1 spare for cells still short of clean incidents" in text
    assert "2/3" in text.rsplit("\r", 1)[-1]
