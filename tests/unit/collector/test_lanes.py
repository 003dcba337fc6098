"""Lanes on the simulated cluster: same data as one lane, a quarter of the time, safe stops."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from collector_helpers import ALL_FAULTS, write_campaign

from r2act.campaigns import load_manifest
from r2act.campaigns.lanes import lane_targets
from r2act.cluster.connect import connect
from r2act.collector import layout, plan_collection, resume
from r2act.collector.lanes import LANES_DIR, LanesSummary, collect_lanes, lane_dir
from r2act.errors import SafetyError

PROVENANCE = {layout.INCIDENT_JSON, layout.JOURNAL, layout.COMPLETE}
"""Files that name the lane (fingerprint), hold real seconds (journal wall_s), or the
checksums of those two (COMPLETE; its other checksums are compared)."""


def with_lanes(path: Path, lanes: int, name: str | None = None) -> Path:
    """A copy of the campaign at ``path`` whose sim target has ``lanes`` lanes."""
    data = yaml.safe_load(path.read_text())
    data["target"]["lanes"] = lanes
    out = path.with_name(name or f"{path.stem}-{lanes}-lanes.yaml")
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def _files(incident: Path) -> dict[str, bytes]:
    return {
        p.relative_to(incident).as_posix(): p.read_bytes()
        for p in sorted(incident.rglob("*"))
        if p.is_file()
    }


def _collect(campaign: Path, run: Path) -> LanesSummary:
    return collect_lanes(plan_collection(campaign), run)


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    return write_campaign(
        tmp_path, services=("cartservice", "checkoutservice"), faults=ALL_FAULTS[:4]
    )


def test_four_lanes_collect_the_same_bytes_in_a_quarter_of_the_cluster_time(
    tmp_path: Path, campaign: Path
) -> None:
    one = _collect(with_lanes(campaign, 1), tmp_path / "one")
    four = _collect(with_lanes(campaign, 4), tmp_path / "four")
    assert one.summary.completed == four.summary.completed == 8
    assert [s.incidents for s in one.lanes.values()] == [8]
    assert sum(s.incidents for s in four.lanes.values()) == 8
    assert all(s.incidents for s in four.lanes.values())  # every lane worked
    # each lane takes the next incident when it frees up: 8 similar incidents on 4 lanes
    assert four.cluster_s == pytest.approx(one.cluster_s / 4, rel=0.2)
    raw_one, raw_four = layout.raw_dir(tmp_path / "one"), layout.raw_dir(tmp_path / "four")
    ids = sorted(p.name for p in raw_one.iterdir())
    assert ids == sorted(p.name for p in raw_four.iterdir())
    fingerprints = set()
    for incident in ids:
        a, b = _files(raw_one / incident), _files(raw_four / incident)
        assert a.keys() == b.keys()
        for name in a.keys() - PROVENANCE:
            assert a[name] == b[name], (incident, name)
        sums_a = json.loads(a[layout.COMPLETE])["sha256"]
        sums_b = json.loads(b[layout.COMPLETE])["sha256"]
        assert sums_a.keys() == sums_b.keys()
        assert {k: v for k, v in sums_a.items() if k not in PROVENANCE} == {
            k: v for k, v in sums_b.items() if k not in PROVENANCE
        }
        doc_a = json.loads(a[layout.INCIDENT_JSON])
        doc_b = json.loads(b[layout.INCIDENT_JSON])
        fingerprints.add(doc_b["target"].pop("fingerprint"))
        doc_a["target"].pop("fingerprint")
        assert doc_a.pop("lane")["name"] == "lane-1"
        lane = doc_b.pop("lane")
        assert lane["cluster"] == f"sim:default-{lane['name']}" and lane["nodes"] == []
        for doc in (doc_a, doc_b):
            doc.pop("manifest_sha256")  # the two manifest files differ in 'lanes'
        assert doc_a == doc_b  # same plan, chaos object, timestamps and windows
    assert fingerprints == {f"sim:default-lane-{i}:seed=11" for i in range(1, 5)}


def test_a_lanes_run_resumes_exactly_what_is_missing(tmp_path: Path, campaign: Path) -> None:
    lanes = with_lanes(campaign, 3)
    plan = plan_collection(lanes)
    run = tmp_path / "run"
    first = collect_lanes(plan_collection(lanes, [i.incident.id for i in plan.items[:3]]), run)
    assert first.summary.completed == 3
    second = _collect(lanes, run)
    assert second.summary.skipped == 3
    assert sorted(r.incident_id for r in second.summary.results) == sorted(
        i.incident.id for i in plan.items[3:]
    )
    third = _collect(lanes, run)
    assert third.summary.results == [] and third.summary.skipped == 8


def _start(campaign: Path, run_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "r2act", "collect", str(campaign), "--out", str(run_dir), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _injected_somewhere(run_dir: Path) -> bool:
    for journal in run_dir.glob(f"{LANES_DIR}/*/raw/*/{layout.JOURNAL}"):
        steps = [json.loads(x) for x in journal.read_text().splitlines() if x.endswith("}")]
        done = {r["step"] for r in steps if r["status"] == "ok"}
        if "inject" in done and "remove" not in done:
            return True
    return False


def _leftovers(campaign: Path, run_dir: Path) -> dict[str, list[str]]:
    manifest = load_manifest(campaign)
    found = {}
    for lane in lane_targets(manifest.target):
        cluster = connect(lane.target, namespace="default", workspace=lane_dir(run_dir, lane.name))
        found[lane.name] = [ref.name for ref in cluster.leftovers()]
    return found


@pytest.mark.parametrize(
    ("signum", "to_group"),
    [(signal.SIGINT, True), (signal.SIGTERM, False)],
    ids=["ctrl-c", "sigterm"],
)
def test_a_signal_during_a_four_lane_run_leaves_no_fault_in_any_lane(
    signum: signal.Signals, to_group: bool, tmp_path: Path
) -> None:
    slow = write_campaign(
        tmp_path,
        "slow",
        faults=ALL_FAULTS,
        # a long fault window keeps a lane injected for a while of real time
        phases={"pre_s": 20, "during_s": 400, "post_s": 20, "recovery_timeout_s": 60},
    )
    campaign = with_lanes(slow, 4)
    run = tmp_path / "run"
    process = _start(campaign, run)
    deadline = time.monotonic() + 60
    while not _injected_somewhere(run):
        assert time.monotonic() < deadline, "no lane injected in time"
        time.sleep(0.01)
    if to_group:
        os.killpg(process.pid, signum)
    else:
        process.send_signal(signum)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signum, stderr
    leftovers = _leftovers(campaign, run)
    assert set(leftovers) == {"lane-1", "lane-2", "lane-3", "lane-4"}
    assert all(names == [] for names in leftovers.values()), leftovers
    plan = plan_collection(campaign)
    complete_before = resume.scan(layout.raw_dir(run)).complete
    assert len(complete_before) < len(plan.items)
    rerun = _collect(campaign, run)
    assert sorted(r.incident_id for r in rerun.summary.results) == sorted(
        {i.incident.id for i in plan.items} - complete_before
    )
    assert rerun.summary.failed == 0
    assert resume.scan(layout.raw_dir(run)).complete == {i.incident.id for i in plan.items}


def _injected_lane(run_dir: Path) -> str | None:
    """The first lane with an injected, not yet removed fault."""
    for journal in sorted(run_dir.glob(f"{LANES_DIR}/*/raw/*/{layout.JOURNAL}")):
        steps = [json.loads(x) for x in journal.read_text().splitlines() if x.endswith("}")]
        done = {r["step"] for r in steps if r["status"] == "ok"}
        if "inject" in done and "remove" not in done:
            return journal.parents[2].name
    return None


def test_a_lane_killed_hard_blocks_every_lane_until_cleanup_then_resumes(
    tmp_path: Path,
) -> None:
    slow = write_campaign(
        tmp_path,
        "slow",
        faults=ALL_FAULTS,
        phases={"pre_s": 20, "during_s": 400, "post_s": 20, "recovery_timeout_s": 60},
    )
    campaign = with_lanes(slow, 4)
    run = tmp_path / "run"
    process = _start(campaign, run)
    deadline = time.monotonic() + 60
    while (victim := _injected_lane(run)) is None:
        assert time.monotonic() < deadline, "no lane injected in time"
        time.sleep(0.01)
    lock = (lane_dir(run, victim) / ".r2act" / "lock").read_text()
    os.kill(int(lock.split("pid ")[1].rstrip(")")), signal.SIGKILL)
    process.send_signal(signal.SIGTERM)  # and stop the other lanes
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 2, stderr
    assert f"{victim}: the lane process ended unexpectedly" in " ".join(stderr.split())
    left = _leftovers(campaign, run)
    assert len(left[victim]) == 1
    assert all(not names for lane, names in left.items() if lane != victim)

    with pytest.raises(SafetyError, match=f"run `r2act cleanup {campaign} --out {run}` first"):
        _collect(campaign, run)
    swept = subprocess.run(  # noqa: PLW1510 - the return code is asserted
        [sys.executable, "-m", "r2act", "cleanup", str(campaign), "--out", str(run)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert swept.returncode == 0, swept.stdout + swept.stderr
    assert left[victim][0] in swept.stdout
    assert all(not names for names in _leftovers(campaign, run).values())
    complete_before = resume.scan(layout.raw_dir(run)).complete
    rerun = _collect(campaign, run)
    plan = plan_collection(campaign)
    assert sorted(r.incident_id for r in rerun.summary.results) == sorted(
        {i.incident.id for i in plan.items} - complete_before
    )
    assert rerun.summary.failed == 0


def _report_mask(out: object) -> None:
    out.put(sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])))  # type: ignore[attr-defined]


def test_a_lane_process_starts_with_the_forwarded_signals_blocked() -> None:
    """A Ctrl-C while a lane still imports must wait for its handlers, not kill it: the lane
    is spawned with SIGINT, SIGTERM and SIGHUP blocked (pending), the parent's mask comes
    back after the start."""
    import multiprocessing

    from r2act.collector.lane_worker import FORWARDED
    from r2act.collector.lanes import _blocked

    context = multiprocessing.get_context("spawn")
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    out = context.Queue()
    process = context.Process(target=_report_mask, args=(out,))
    with _blocked():
        process.start()
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before
    mask = out.get(timeout=60)
    process.join(timeout=60)
    assert {int(s) for s in FORWARDED} <= set(mask)
