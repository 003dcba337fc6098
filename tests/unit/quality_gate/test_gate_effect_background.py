"""The gate's effect check on a noisy simulated cluster (issue 22 item 4): faults with an
effect are admitted over the background, an injection with no effect is not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_simruns import QUIET, collect_and_audit

from r2act.quality_gate import Group, read_verdicts
from r2act.quality_gate.checks import check_effect, effect_signals
from r2act.quality_gate.evidence import gather

PHASES = {"pre_s": 60, "during_s": 120, "post_s": 30, "recovery_timeout_s": 60}


def _manifest(noise: str, faults: list[str], glitches: dict[str, float]) -> dict[str, Any]:
    return {
        "name": f"bg-{noise}",
        "system": "onlineboutique",
        "target": {"kind": "sim", "seed": 11, "glitches": glitches},
        "noise": noise,
        "services": ["cartservice"],
        "faults": [{"type": f, "intensities": ["severe"]} for f in faults],
        "phases": PHASES,
    }


@pytest.mark.parametrize("noise", ["realistic", "heavy"])
def test_faults_with_an_effect_are_admitted_over_the_background(noise: str, tmp_path: Path) -> None:
    faults = ["cpu_saturation", "pod_failure", "memory_pressure"]
    run = collect_and_audit(tmp_path, _manifest(noise, faults, QUIET))
    verdicts = read_verdicts(run)
    assert len(verdicts) == len(faults)
    for verdict in verdicts:
        assert "NO_OBSERVABLE_EFFECT" not in verdict.reasons, verdict.problems
        assert verdict.group == Group.MAIN, verdict.problems
    for incident in (run / "raw").iterdir():
        ev = gather(incident)
        assert effect_signals(ev.phases["pre"], ev.phases["during"]), incident.name


@pytest.mark.parametrize("noise", ["realistic", "heavy"])
def test_an_injection_with_no_effect_shows_no_effect_over_the_background(
    noise: str, tmp_path: Path
) -> None:
    # a failed injection leaves the system untouched: pre and during differ only by the
    # background, which must not pass for an effect
    glitches = {**QUIET, "injection_failure": 1.0}
    run = collect_and_audit(tmp_path, _manifest(noise, ["cpu_saturation"], glitches))
    [incident] = (run / "raw").iterdir()
    ev = gather(incident)
    assert effect_signals(ev.phases["pre"], ev.phases["during"]) == []
    assert [p.code for p in check_effect(ev)] == ["NO_OBSERVABLE_EFFECT"]
