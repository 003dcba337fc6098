"""deploy/shards: the Indexed Job is valid Kubernetes, and pod index I runs shard I+1 of N."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client import ApiClient

from r2act.campaigns import load_manifest, plan_incidents
from r2act.campaigns.shard import parse_shard, plan_sha256

JOB_FILE = Path(__file__).resolve().parents[2] / "deploy" / "shards" / "indexed-job.yaml"
KINDS = {
    "Namespace": "V1Namespace",
    "ConfigMap": "V1ConfigMap",
    "PersistentVolumeClaim": "V1PersistentVolumeClaim",
    "Job": "V1Job",
}


def _documents() -> dict[str, dict[str, Any]]:
    documents = [d for d in yaml.safe_load_all(JOB_FILE.read_text()) if d]
    return {d["kind"]: d for d in documents}


def test_every_object_round_trips_through_the_kubernetes_models() -> None:
    """A misspelt or misplaced field would be dropped by the client's models."""
    client = ApiClient()
    documents = _documents()
    assert set(documents) == set(KINDS)
    for kind, model in KINDS.items():
        parsed = client._ApiClient__deserialize(documents[kind], model)
        assert client.sanitize_for_serialization(parsed) == documents[kind], kind


def test_the_job_is_indexed_and_its_shard_count_matches_its_completions() -> None:
    job = _documents()["Job"]["spec"]
    assert job["completionMode"] == "Indexed"
    container = job["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert int(env["SHARDS"]) == job["completions"] == job["parallelism"]
    assert job["template"]["spec"]["restartPolicy"] == "Never"
    assert job["template"]["spec"]["terminationGracePeriodSeconds"] >= 60  # room to clean up


def _run_pod_script(index: int, tmp_path: Path) -> tuple[list[str], Path]:
    """Run the container's script with JOB_COMPLETION_INDEX=index and a recording r2act."""
    documents = _documents()
    container = documents["Job"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    tmp_path.mkdir(parents=True, exist_ok=True)
    campaign = tmp_path / "campaign.yaml"
    campaign.write_text(documents["ConfigMap"]["data"]["campaign.yaml"])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    recorder = bin_dir / "r2act"
    recorder.write_text(f"#!{sys.executable}\nimport sys\nprint('\\0'.join(sys.argv[1:]))\n")
    recorder.chmod(recorder.stat().st_mode | stat.S_IXUSR)
    scratch = tmp_path / f"tmp-{index}"
    scratch.mkdir()
    run_env = {
        **os.environ,
        **env,
        "CAMPAIGN": str(campaign),
        "RESULTS": str(tmp_path / "results"),
        "TMPDIR": str(scratch),
        "JOB_COMPLETION_INDEX": str(index),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(
        [*container["command"], *container["args"]],
        env=run_env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.rstrip("\n").split("\0"), scratch


@pytest.mark.parametrize("index", [0, 1, 2])
def test_pod_index_maps_to_its_shard_its_lane_and_its_own_output(
    index: int, tmp_path: Path
) -> None:
    args, scratch = _run_pod_script(index, tmp_path)
    assert args[0] == "collect"
    shard = parse_shard(args[args.index("--shard") + 1])
    assert (shard.index, shard.count) == (index + 1, 3)
    assert args[args.index("--out") + 1] == str(tmp_path / "results" / f"shard-{index + 1}")
    manifest = load_manifest(Path(args[1]))
    assert Path(args[1]).parent == scratch
    assert manifest.target.kind == "kubernetes"
    assert manifest.namespace == f"boutique-lane-{index + 1}"
    assert manifest.target.context == f"r2act-lane-{index + 1}"


def test_every_lane_runs_the_same_plan_so_the_shards_merge(tmp_path: Path) -> None:
    digests = set()
    for index in range(3):
        args, _ = _run_pod_script(index, tmp_path / str(index))
        manifest = load_manifest(Path(args[1]))
        digests.add(plan_sha256(manifest, plan_incidents(manifest)))
    assert len(digests) == 1
