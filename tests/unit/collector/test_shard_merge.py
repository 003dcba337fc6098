"""``collect --shard`` then ``merge``: the same incidents as one run, and every refusal."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from collector_helpers import write_campaign
from typer.testing import CliRunner

from r2act.cli import _register_commands, app
from r2act.collector import layout
from r2act.collector.merge import merge_runs, read_shard_record
from r2act.errors import DataError

_register_commands()
runner = CliRunner()


def _collect(campaign: Path, out: Path, *extra: str) -> None:
    result = runner.invoke(app, ["collect", str(campaign), "--out", str(out), "-q", *extra])
    assert result.exit_code == 0, result.output


def _incident_records(run: Path) -> dict[str, dict[str, object]]:
    """What the plan decided for each complete incident (its fault, seed, chaos object)."""
    out = {}
    for child in sorted(layout.raw_dir(run).iterdir()):
        if layout.is_complete(child):
            document = json.loads((child / layout.INCIDENT_JSON).read_text())
            out[child.name] = {k: document[k] for k in ("incident", "chaos", "campaign", "load")}
    return out


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    return write_campaign(
        tmp_path,
        services=("cartservice", "paymentservice"),
        faults=("pod_failure", "cpu_saturation"),
        repetitions=3,
        # a closed window of one metric step (15 s) always holds a sample, wherever the
        # incident starts within the minute (cluster.sim.lanes.incident_start)
        phases={"pre_s": 15, "during_s": 15, "post_s": 15, "recovery_timeout_s": 30},
    )


def test_three_shards_merged_hold_what_one_run_holds(tmp_path: Path, campaign: Path) -> None:
    shards = [tmp_path / f"shard-{i}" for i in (1, 2, 3)]
    for index, out in enumerate(shards, start=1):
        _collect(campaign, out, "--shard", f"{index}/3")
    whole = tmp_path / "whole"
    _collect(campaign, whole)
    sizes = [len(_incident_records(s)) for s in shards]
    assert sum(sizes) == 12 and all(sizes)  # each of the 4 cells of 3 splits 1/1/1
    records = [read_shard_record(s) for s in shards]
    assert [r.shard for r in records if r] == ["1/3", "2/3", "3/3"]

    merged = tmp_path / "merged"
    result = runner.invoke(app, ["merge", *map(str, shards), "--out", str(merged)])
    assert result.exit_code == 0, result.output
    assert "merged 12 complete incidents from 3 runs" in result.output
    assert _incident_records(merged) == _incident_records(whole)
    for incident in _incident_records(merged):
        files = sorted(
            p.relative_to(merged / "raw" / incident).as_posix()
            for p in (merged / "raw" / incident).rglob("*")
        )
        assert files == sorted(
            p.relative_to(whole / "raw" / incident).as_posix()
            for p in (whole / "raw" / incident).rglob("*")
        )
    record = json.loads((merged / "merge.json").read_text())
    assert record["missing_shards"] == [] and record["missing_incidents"] == []
    # the merged run is an ordinary run: no shard record, so an unsharded resume is allowed
    assert read_shard_record(merged) is None
    again = runner.invoke(app, ["collect", str(campaign), "--out", str(merged), "-q"])
    assert again.exit_code == 0 and "nothing to do" in again.output


def test_merge_refuses_overlaps_duplicates_and_other_campaigns(
    tmp_path: Path, campaign: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    _collect(campaign, one, "--shard", "1/2")
    _collect(campaign, two, "--shard", "2/2")
    with pytest.raises(DataError, match="both shard 1/2"):
        merge_runs([one, _copy_run(one, tmp_path / "one-again")], tmp_path / "m1")
    with pytest.raises(DataError, match="given twice"):
        merge_runs([one, one], tmp_path / "m2")
    whole = tmp_path / "whole"
    _collect(campaign, whole)
    with pytest.raises(DataError, match="complete in both"):
        merge_runs([whole, _copy_run(whole, tmp_path / "whole-again")], tmp_path / "m3")
    (tmp_path / "other").mkdir()
    other = write_campaign(
        tmp_path / "other", services=("cartservice",), faults=("pod_failure",), repetitions=2
    )
    elsewhere = tmp_path / "elsewhere"
    _collect(other, elsewhere, "--shard", "2/2")
    with pytest.raises(DataError, match="another plan"):
        merge_runs([one, elsewhere], tmp_path / "m4")
    unsharded = tmp_path / "unsharded"
    _collect(other, unsharded)
    with pytest.raises(DataError, match="different manifests"):
        merge_runs([whole, unsharded], tmp_path / "m5")
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    with pytest.raises(DataError, match="not empty"):
        merge_runs([one, two], taken)
    assert (taken / "notes.txt").read_text() == "mine"
    for name in ("m1", "m2", "m3", "m4", "m5"):  # refused before anything was written
        assert not (tmp_path / name).exists()


def test_a_shard_directory_holds_one_shard_for_good(tmp_path: Path, campaign: Path) -> None:
    out = tmp_path / "run"
    _collect(campaign, out, "--shard", "1/3")
    wrong = runner.invoke(app, ["collect", str(campaign), "--out", str(out), "--shard", "2/3"])
    assert _refusal(wrong.exception, "collects shard 1/3, not 2/3")
    plain = runner.invoke(app, ["collect", str(campaign), "--out", str(out)])
    assert _refusal(plain.exception, "add --shard 1/3")
    again = runner.invoke(app, ["collect", str(campaign), "--out", str(out), "--shard", "1/3"])
    assert again.exit_code == 0 and "nothing to do" in again.output
    bad = runner.invoke(app, ["collect", str(campaign), "--out", str(out), "--shard", "4/3"])
    assert _refusal(bad.exception, "does not exist")
    record = read_shard_record(out)
    assert record is not None and record.shard == "1/3"
    assert set(_incident_records(out)) == set(record.incidents)  # nothing of shard 2 ran


def _refusal(error: BaseException | None, text: str) -> bool:
    """A one-line DataError (exit 2) saying ``text``."""
    assert isinstance(error, DataError), error
    assert "\n" not in str(error)
    return error.exit_code == 2 and text in str(error)


def test_incomplete_shards_are_reported_and_exit_1(tmp_path: Path, campaign: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    _collect(campaign, one, "--shard", "1/3")
    _collect(campaign, two, "--shard", "2/3")
    victim = sorted(p for p in layout.raw_dir(two).iterdir() if p.is_dir())[0]
    os.remove(victim / layout.COMPLETE)  # as if the process died mid-incident
    merged = tmp_path / "merged"
    result = runner.invoke(app, ["merge", str(one), str(two), "--out", str(merged)])
    assert result.exit_code == 1
    assert "missing shards: 3/3" in result.output
    assert f"left out 1 incomplete incidents of {two}" in result.output
    assert not (layout.raw_dir(merged) / victim.name).exists()
    assert not (layout.raw_dir(merged) / ".merging").exists()


def _copy_run(source: Path, target: Path) -> Path:
    import shutil

    shutil.copytree(source, target)
    return target


def test_sharded_lanes_runs_merge_into_the_same_bytes_and_dataset_as_one_run(
    tmp_path: Path, campaign: Path
) -> None:
    """With lanes the simulator starts every incident on a fresh system, so three shards
    merged hold byte-identical observations and build the same dataset as one run."""
    data = yaml.safe_load(campaign.read_text())
    data["target"]["lanes"] = 1
    lanes = tmp_path / "lanes.yaml"
    lanes.write_text(yaml.safe_dump(data))
    shards = [tmp_path / f"shard-{i}" for i in (1, 2, 3)]
    for index, out in enumerate(shards, start=1):
        _collect(lanes, out, "--shard", f"{index}/3")
    whole, merged = tmp_path / "whole", tmp_path / "merged"
    _collect(lanes, whole)
    merge_runs(shards, merged)
    provenance = {layout.INCIDENT_JSON, layout.JOURNAL, layout.COMPLETE}
    for incident in sorted(p.name for p in layout.raw_dir(whole).iterdir()):
        for path in sorted((layout.raw_dir(whole) / incident).rglob("*")):
            if path.is_file() and path.name not in provenance:
                twin = (
                    layout.raw_dir(merged)
                    / incident
                    / path.relative_to(layout.raw_dir(whole) / incident)
                )
                assert twin.read_bytes() == path.read_bytes(), (incident, path.name)
    for run in (whole, merged):
        # one audit worker: a forked pool in this long-lived test process is not the point
        for verb in (["audit", str(run), "--workers", "1"], ["dataset", "build", str(run)]):
            result = runner.invoke(app, verb)
            assert result.exit_code == 0, result.output
    tables = sorted(
        p.relative_to(whole / "dataset") for p in (whole / "dataset").rglob("*.parquet")
    )
    assert tables
    for table in tables:
        a = pq.read_table(whole / "dataset" / table)
        b = pq.read_table(merged / "dataset" / table)
        assert a.equals(b), table
