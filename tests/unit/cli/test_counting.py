"""The counting progress bar shows how far a walk over incidents got, and stays out of CI logs."""

from __future__ import annotations

import io

from rich.console import Console

from r2act.cli._counting import counting


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=120), out


def test_the_bar_counts_every_step_and_names_the_current_item() -> None:
    console, out = _console()
    with counting(console, "audit", 3) as advance:
        for item in ("incident_a", "incident_b", "incident_c"):
            advance(item)
        console.file.flush()
    text = out.getvalue()
    assert "audit" in text
    assert "3/3" in text
    assert "incident_c" in text


def test_quiet_draws_nothing() -> None:
    console, out = _console()
    with counting(console, "audit", 2, quiet=True) as advance:
        advance("incident_a")
        advance("incident_b")
    assert out.getvalue() == ""


def test_a_console_that_is_not_a_terminal_gets_not_even_a_blank_line() -> None:
    out = io.StringIO()
    console = Console(file=out, width=120)  # a pipe: what CI and `| tee` see
    with counting(console, "audit", 2) as advance:
        advance("incident_a")
        advance("incident_b")
    assert out.getvalue() == ""


def test_the_collect_bar_stays_out_of_a_pipe_but_failures_are_printed() -> None:
    from r2act.cli._progress import RichObserver
    from r2act.collector import IncidentResult

    out = io.StringIO()
    console = Console(file=out, width=120)  # not a terminal
    with RichObserver(console) as observer:
        observer.campaign_started(pending=2, skipped=0)
        observer.incident_started("a_b_severe_r01")
        observer.incident_finished(IncidentResult("a_b_severe_r01", "failed", error="boom"))
        observer.incident_started("c_d_severe_r01")
        observer.step_started("c_d_severe_r01", "during")
    assert out.getvalue() == "failed a_b_severe_r01: boom\n"
