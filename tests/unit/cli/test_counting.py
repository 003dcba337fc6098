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
