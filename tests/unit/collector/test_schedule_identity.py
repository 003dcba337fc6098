"""The smoke campaign collected in one run, on two lanes and as three merged shards holds
byte-identical observations: an incident's simulated telemetry is a function of the
campaign seed and the incident alone, not of the schedule that collected it.

Compared byte for byte: every file of ``RUN/raw/<id>/`` (logs, events, metrics, state and
chaos status of each phase, ``chaos.yaml``) except the three records of how it was
collected, which are compared without the fields that legitimately differ:

- ``incident.json`` without ``lane`` (only lanes runs record it), ``target.fingerprint``
  (a simulated lane is the cluster ``<name>-lane-<i>``) and ``manifest_sha256`` (the lanes
  run reads a copy of the manifest that adds ``lanes: 2``); its timestamps and phase windows
  must agree;
- ``journal.jsonl`` without each step's ``wall_s`` (real seconds the step took on this
  machine); its steps, statuses and virtual times must agree;
- ``COMPLETE`` without the digest of ``incident.json`` (which differs as above).

Run metadata outside ``raw/<id>/`` (``RUN/.r2act``: ledger, lock, ``shard.json``; the
simulated cluster's own state; ``RUN/lanes``) is not an observation and is not compared.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from r2act.cli import _register_commands, app
from r2act.collector import layout

REPO = Path(__file__).resolve().parents[3]
SMOKE = REPO / "campaigns" / "smoke.yaml"
RECORDS = {layout.INCIDENT_JSON, layout.JOURNAL, layout.COMPLETE}

_register_commands()
runner = CliRunner()


def _run(*args: str) -> None:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output


def _incident_record(text: str) -> Any:
    document = json.loads(text)
    document.pop("lane", None)
    document.pop("manifest_sha256")
    document["target"].pop("fingerprint")
    return document


def _journal_record(text: str) -> Any:
    steps = [json.loads(line) for line in text.splitlines()]
    for step in steps:
        step.pop("wall_s")
    return steps


def _complete_record(text: str) -> Any:
    document = json.loads(text)
    document["sha256"].pop(layout.INCIDENT_JSON)
    return document


NORMALISED = {
    layout.INCIDENT_JSON: _incident_record,
    layout.JOURNAL: _journal_record,
    layout.COMPLETE: _complete_record,
}


def _observations(run: Path) -> dict[str, dict[str, Any]]:
    """Incident id -> {relative path -> bytes, or the normalised record}."""
    out: dict[str, dict[str, Any]] = {}
    for directory in sorted(layout.raw_dir(run).iterdir()):
        if not layout.is_complete(directory):
            continue
        files: dict[str, Any] = {}
        for path in sorted(p for p in directory.rglob("*") if p.is_file()):
            name = str(path.relative_to(directory))
            if name in NORMALISED:
                files[name] = NORMALISED[name](path.read_text(encoding="utf-8"))
            else:
                files[name] = path.read_bytes()
        out[directory.name] = files
    return out


def test_one_run_lanes_and_merged_shards_hold_identical_observations(tmp_path: Path) -> None:
    one = tmp_path / "one"
    _run("collect", str(SMOKE), "--out", str(one), "-q")

    manifest = yaml.safe_load(SMOKE.read_text(encoding="utf-8"))
    manifest["target"]["lanes"] = 2
    lanes_manifest = tmp_path / "smoke-lanes.yaml"
    lanes_manifest.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    lanes = tmp_path / "lanes"
    _run("collect", str(lanes_manifest), "--out", str(lanes), "-q")

    shards = [tmp_path / f"shard-{i}" for i in (1, 2, 3)]
    for index, shard in enumerate(shards, start=1):
        _run("collect", str(SMOKE), "--shard", f"{index}/3", "--out", str(shard), "-q")
    merged = tmp_path / "merged"
    _run("merge", *map(str, shards), "--out", str(merged))

    reference = _observations(one)
    assert len(reference) == 12  # every incident of the smoke campaign, complete
    observation_files = {
        name for files in reference.values() for name in files if name not in RECORDS
    }
    assert {"pre/logs.jsonl.zst", "during/metrics.parquet", "post/events.jsonl"} <= (
        observation_files
    )
    for schedule, run in (("lanes", lanes), ("merged shards", merged)):
        other = _observations(run)
        assert sorted(other) == sorted(reference), schedule
        for incident, files in reference.items():
            assert sorted(other[incident]) == sorted(files), (schedule, incident)
            for name, content in files.items():
                assert other[incident][name] == content, (schedule, incident, name)
