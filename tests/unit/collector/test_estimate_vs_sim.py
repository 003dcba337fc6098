"""The estimate agrees with the simulated cluster's virtual clock, which stands for real time."""

from __future__ import annotations

import json
from pathlib import Path

from collector_helpers import ALL_FAULTS, write_campaign
from typer.testing import CliRunner

from r2act.campaigns import load_manifest, plan_incidents
from r2act.campaigns.estimate import estimate, format_duration, incident_time
from r2act.cli import _register_commands, app
from r2act.collector import collect, layout, plan_collection

_register_commands()
runner = CliRunner()


def test_every_incident_of_a_sim_run_falls_inside_the_estimated_range(tmp_path: Path) -> None:
    path = write_campaign(tmp_path, services=("cartservice",), faults=ALL_FAULTS)
    manifest = load_manifest(path)
    run = tmp_path / "run"
    summary = collect(plan_collection(path), run)
    assert summary.completed == len(ALL_FAULTS)
    spans = []
    for incident in plan_incidents(manifest):
        journal = (layout.raw_dir(run) / incident.id / layout.JOURNAL).read_text().splitlines()
        steps = [json.loads(line) for line in journal]
        span = steps[-1]["end"] - steps[0]["start"]
        # the sim reads telemetry in no virtual time, so compare without the read allowance
        bounds = incident_time(incident, manifest, read_s_per_phase=0.0)
        assert bounds.total_low_s <= span <= bounds.total_high_s, (incident.id, span)
        spans.append(span)
    guess = estimate(manifest, plan_incidents(manifest), 1, read_s_per_phase=0.0)
    assert guess.low_s <= sum(spans) <= guess.high_s


def test_campaign_plan_prints_the_estimate_per_lane_count() -> None:
    paper = Path(__file__).resolve().parents[3] / "campaigns" / "r2act-302.yaml"
    result = runner.invoke(app, ["campaign", "plan", str(paper), "--lanes", "1", "--lanes", "4"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "540 s of phase windows" in text
    manifest = load_manifest(paper)
    for lanes in (1, 4):
        guess = estimate(manifest, plan_incidents(manifest), lanes)
        low, high = format_duration(guess.low_s), format_duration(guess.high_s)
        assert f"on {lanes} lane{'s' if lanes > 1 else ''}: {low} to {high}" in text
        assert (
            f"({guess.incidents} incidents: quota + {guess.spares_expected} of "
            f"{guess.spares_planned} spares, expected at 5% gate rejections; "
            f"{guess.per_lane} on the busiest lane)"
        ) in text
    bad = runner.invoke(app, ["campaign", "plan", str(paper), "--lanes", "0"])
    assert bad.exit_code == 2


def test_campaign_plan_estimates_the_manifests_own_lanes_by_default() -> None:
    four = Path(__file__).resolve().parents[3] / "deploy" / "kind" / "lanes" / "campaign.yaml"
    result = runner.invoke(app, ["campaign", "plan", str(four)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "expected wall-clock on 4 lanes:" in text and "on 1 lane:" not in text
