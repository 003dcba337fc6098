"""Judge once: the audit reuses the collector's verdicts and re-reads only what changed.

A run is collected on the simulated cluster with spares, so the collector judges every
incident (to stop full cells) and stores its judgement in ``judged.json``. The audit must
then reuse those verdicts (counted), give the same answer as an audit from the files,
re-judge an incident whose raw file changed, relabel under another policy without reading
a log line, and ignore a store that is stale or torn.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from r2act.actions import PAPER_POLICY, policy_named
from r2act.collector import collect, layout, plan_collection
from r2act.datasets import build_dataset
from r2act.quality_gate import Group, gather, judged, run_audit
from r2act.quality_gate.judged import evidence_document, evidence_from_document
from r2act.schema.rawstore import JUDGED


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run the collector judged: two cells, quota 1, one spare each."""
    tmp = tmp_path_factory.mktemp("judged")
    manifest: dict[str, Any] = {
        "name": "judge-once",
        "system": "onlineboutique",
        "target": {
            "kind": "sim",
            "seed": 11,
            "glitches": {"injection_failure": 0.0, "metric_gap": 0.0, "slow_recovery": 0.0},
        },
        "services": ["cartservice", "productcatalogservice"],
        "faults": [{"type": "pod_failure", "intensities": ["severe"]}],
        "repetitions": 1,
        "spares": 1,
        "phases": {"pre_s": 20, "during_s": 30, "post_s": 20, "recovery_timeout_s": 60},
        "seed": 5,
    }
    path = tmp / "campaign.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    plan = plan_collection(path)
    assert plan.judge, "a campaign with spares is judged while it is collected"
    run = tmp / "run"
    collect(plan, run)
    return run


@pytest.fixture
def run(collected: Path, tmp_path: Path) -> Path:
    """A private copy of the collected run."""
    copy = tmp_path / "run"
    shutil.copytree(collected, copy)
    return copy


def _incidents(run: Path) -> list[Path]:
    raw = layout.raw_dir(run)
    return sorted(p for p in raw.iterdir() if layout.is_complete(p))


def _lines(run: Path) -> list[str]:
    return (run / "audit" / "audit.jsonl").read_text().splitlines()


def _records(run: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((run / "audit" / "records").iterdir())}


def _forbid_reading_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: Path) -> None:
        raise AssertionError(f"read {path}")

    monkeypatch.setattr("r2act.quality_gate.rawstore.read_logs", refuse)


def test_the_audit_reuses_every_verdict_the_collector_stored(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    incidents = _incidents(run)
    assert incidents and all((p / JUDGED).is_file() for p in incidents)
    _forbid_reading_logs(monkeypatch)
    result = run_audit(run, workers=1)
    assert (result.reused, result.relabelled, result.judged) == (len(incidents), 0, 0)
    assert result.count(Group.MAIN) == 2


def test_reused_verdicts_and_records_equal_an_audit_from_the_files(run: Path) -> None:
    run_audit(run, workers=1)
    reused_lines, reused_records = _lines(run), _records(run)
    for incident in _incidents(run):
        (incident / JUDGED).unlink()
    fresh = run_audit(run, workers=1)
    assert fresh.judged == len(_incidents(run)) and fresh.reused == 0
    assert _lines(run) == reused_lines
    assert _records(run) == reused_records


def test_an_incident_whose_raw_file_changed_is_judged_again(run: Path) -> None:
    first = run_audit(run, workers=1)
    main = sorted(v.incident_id for v in first.verdicts if v.group == Group.MAIN)
    changed = layout.raw_dir(run) / main[0] / "during" / layout.EVENTS
    changed.write_bytes(changed.read_bytes() + b"\n")  # one more byte: a changed file
    again = run_audit(run, workers=1)
    assert again.hows[main[0]] == "judged"
    assert again.reused == len(_incidents(run)) - 1
    verdict = next(v for v in again.verdicts if v.incident_id == main[0])
    assert verdict.group == Group.FAILED
    assert "RAW_CHECKSUM_MISMATCH" in verdict.reasons
    third = run_audit(run, workers=1)  # the new judgement was stored in its place
    assert third.reused == len(_incidents(run))


def test_a_policy_change_relabels_from_the_summaries_without_reading_logs(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paper = policy_named(str(PAPER_POLICY))
    shutil.copytree(run, run.with_name("fresh"))
    with monkeypatch.context() as patched:
        _forbid_reading_logs(patched)
        relabelled = run_audit(run, workers=1, policy=paper)
    assert relabelled.relabelled == len(_incidents(run)) and relabelled.reused == 0
    assert all(v.policy == str(paper) for v in relabelled.verdicts if v.group == Group.MAIN)
    fresh_run = run.with_name("fresh")
    for incident in _incidents(fresh_run):
        (incident / JUDGED).unlink()
    fresh = run_audit(fresh_run, workers=1, policy=paper)
    assert fresh.judged == len(_incidents(fresh_run))
    assert _lines(run) == _lines(fresh_run)
    assert _records(run) == _records(fresh_run)


def test_another_gate_or_a_torn_store_means_judging_from_the_files(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    incidents = _incidents(run)
    (incidents[0] / JUDGED).write_text('{"format": 1, "files": "')
    torn = run_audit(run, workers=1)
    assert torn.hows[incidents[0].name] == "judged"
    assert torn.reused == len(incidents) - 1
    monkeypatch.setattr(judged, "code_digest", lambda: "an edited gate")
    edited = run_audit(run, workers=1)
    assert edited.judged == len(incidents)


def test_stored_evidence_reads_back_equal_to_what_was_gathered(run: Path) -> None:
    for incident in _incidents(run):
        evidence = gather(incident)
        bare = dataclasses.replace(
            evidence,
            phases={k: dataclasses.replace(p, log_table=None) for k, p in evidence.phases.items()},
        )
        assert evidence_from_document(evidence_document(bare)) == bare


def test_the_collectors_summaries_of_the_lines_it_wrote_equal_those_of_the_files(
    run: Path,
) -> None:
    # the collector judges from the lines in hand (evidence.WrittenLogs), not the parsed file
    for incident in _incidents(run):
        stored = judged.load(incident)
        assert stored is not None
        evidence = gather(incident)
        assert any(p.logs is not None and p.logs.records for p in evidence.phases.values())
        for name, phase in evidence.phases.items():
            assert stored.evidence.phases[name].logs == phase.logs, (incident.name, name)


def test_the_dataset_is_byte_identical_whether_the_audit_judged_or_reused(
    tmp_path: Path,
) -> None:
    # judged from the files, the audit stages its parsed logs for the build; reused, it
    # stages none and the build parses the raw logs itself: the published bytes must agree
    # (the smoke campaign: large enough that the two reads chunk the logs differently)
    run = tmp_path / "run"
    collect(plan_collection(Path(__file__).parents[3] / "campaigns" / "smoke.yaml"), run)
    assert run_audit(run, workers=1).judged == len(_incidents(run))
    build_dataset(run, tmp_path / "judged", workers=1)
    assert run_audit(run, workers=1).reused == len(_incidents(run))
    build_dataset(run, tmp_path / "reused", workers=1)
    sums = [(tmp_path / name / "SHA256SUMS").read_text() for name in ("judged", "reused")]
    assert sums[0] == sums[1]
