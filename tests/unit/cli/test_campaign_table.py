"""``r2act campaign plan`` on a narrow terminal folds fault parameters, never cuts them short."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from r2act.campaigns import load_manifest, plan_incidents
from r2act.cli.campaign import _incident_table

REPO = Path(__file__).resolve().parents[3]


def test_parameters_are_folded_not_truncated_at_60_columns() -> None:
    incidents = plan_incidents(load_manifest(REPO / "campaigns" / "smoke.yaml"))
    console = Console(width=60, record=True, color_system=None)
    console.print(_incident_table(incidents))
    text = console.export_text()
    assert "…" not in text
    assert "correlation" in text and "=25" in text
