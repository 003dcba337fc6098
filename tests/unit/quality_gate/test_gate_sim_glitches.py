"""On a simulated run, each glitch the simulator injects shows up as its own audit reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gate_simruns import QUIET, collect_and_audit

from r2act.quality_gate import Group, read_verdicts
from r2act.quality_gate.rawstore import TargetInfo
from r2act.schema import BenchmarkRecord, NoiseLevel

GLITCHES = {
    "injection_failure": (Group.FAILED, "INJECTION_FAILED"),
    "metric_gap": (Group.WARNING, "METRIC_GAPS"),
    "slow_recovery": (Group.WARNING, "RECOVERY_NOT_VERIFIED"),
}


@pytest.mark.parametrize("glitch", sorted(GLITCHES))
def test_a_simulated_glitch_lands_in_the_audit_trail_with_its_reason(
    glitch: str, tmp_path: Path
) -> None:
    manifest = {
        "name": "glitchy",
        "system": "onlineboutique",
        "target": {"kind": "sim", "seed": 3, "glitches": {**QUIET, glitch: 1.0}},
        "services": ["cartservice"],
        "faults": [{"type": "pod_failure", "intensities": ["severe"]}],
        "repetitions": 1,
        "phases": {"pre_s": 30, "during_s": 150, "post_s": 30, "recovery_timeout_s": 60},
        "seed": 5,
    }
    run = collect_and_audit(tmp_path, manifest)
    [verdict] = read_verdicts(run)
    group, reason = GLITCHES[glitch]
    assert verdict.group == group, verdict.problems
    assert reason in verdict.reasons


def test_a_main_record_carries_the_seed_of_the_simulated_cluster_it_ran_on(
    tmp_path: Path,
) -> None:
    manifest = {
        "name": "seeded",
        "system": "onlineboutique",
        "target": {"kind": "sim", "seed": 77, "glitches": QUIET},
        "services": ["cartservice"],
        "faults": [{"type": "pod_failure", "intensities": ["severe"]}],
        "phases": {"pre_s": 30, "during_s": 150, "post_s": 30, "recovery_timeout_s": 60},
    }
    run = collect_and_audit(tmp_path, manifest)
    [record_file] = (run / "audit" / "records").glob("*.json")
    record = BenchmarkRecord.model_validate_json(record_file.read_bytes())
    assert (record.metadata.target_kind, record.metadata.target_seed) == ("sim", 77)


@pytest.mark.parametrize("noise", ["none", "heavy"])
def test_a_record_carries_the_noise_level_it_was_collected_at(noise: str, tmp_path: Path) -> None:
    manifest = {
        "name": "noisy",
        "system": "onlineboutique",
        "target": {"kind": "sim", "seed": 7, "glitches": QUIET},
        "noise": noise,
        "services": ["cartservice"],
        "faults": [{"type": "pod_failure", "intensities": ["severe"]}],
        "phases": {"pre_s": 30, "during_s": 150, "post_s": 30, "recovery_timeout_s": 60},
    }
    run = collect_and_audit(tmp_path, manifest)
    [incident] = (run / "raw").rglob("incident.json")
    assert json.loads(incident.read_text())["target"]["noise"] == noise
    [record_file] = (run / "audit" / "records").glob("*.json")
    record = BenchmarkRecord.model_validate_json(record_file.read_bytes())
    assert record.metadata.noise == NoiseLevel(noise)


def test_an_incident_collected_before_noise_levels_reads_as_not_recorded() -> None:
    old = TargetInfo.model_validate({"kind": "sim", "fingerprint": "sim/x", "namespace": "d"})
    assert old.noise is None
