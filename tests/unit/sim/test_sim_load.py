"""Volume follows from load: the locustfile's tasks, the redirects Locust follows, no scaling."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from r2act.campaigns import Manifest
from r2act.cluster.sim import SimulatedCluster
from r2act.cluster.sim.identity import pod_facts
from r2act.cluster.sim.scene import build_scene
from r2act.cluster.sim.state import fresh_state
from r2act.cluster.sim.timeline import build_timelines
from r2act.cluster.sim.traffic import route_rates, user_rate
from r2act.schema import TimeWindow
from r2act.systems import INSTALLED, ONLINE_BOUTIQUE, get_system
from r2act.systems.onlineboutique.traffic import TASKS

from .conftest import NO_GLITCHES, Run, incident

ROOT = Path(__file__).resolve().parents[3]


def _healthy_scene(users: int):  # type: ignore[no-untyped-def]
    state = fresh_state(ONLINE_BOUTIQUE, name="load", seed=0, namespace="default")
    timelines = build_timelines(state, pod_facts(ONLINE_BOUTIQUE), {}, 0, workload_label="app")
    return build_scene(ONLINE_BOUTIQUE, timelines, state.now + 1000, users)


def test_route_weights_are_the_requests_of_the_locustfile_tasks() -> None:
    sent: Counter[str] = Counter()
    for weight, requests in TASKS.values():
        for scope in requests:
            sent[scope] += weight
    assert {r.scope: r.weight for r in ONLINE_BOUTIQUE.routes} == dict(sent)


def test_users_wait_once_per_task_not_per_request() -> None:
    # 19 tasks send 23 requests; a user waits 5.5 s on average after each task.
    assert user_rate(ONLINE_BOUTIQUE, 19) == pytest.approx(19 / 5.5 * 23 / 19)
    assert sum(route_rates(ONLINE_BOUTIQUE, 27).values()) == pytest.approx(27 / 5.5 * 23 / 19)


def test_the_frontend_serves_the_redirects_locust_follows() -> None:
    scene = _healthy_scene(27)
    routes = scene.routes
    assert routes["GET /"].redirected == pytest.approx(routes["POST /setCurrency"].rate)
    assert routes["GET /cart"].redirected == pytest.approx(routes["POST /cart"].rate)
    assert routes["GET /product/*"].redirected == 0.0
    # A redirected GET / fetches the home page's backends like any other.
    home = routes["GET /"].rate + routes["GET /"].redirected
    ads = scene.served["adservice"]["GetAds"]
    pages = home + routes["GET /product/*"].rate
    assert ads == pytest.approx(pages)
    assert list(routes) == [r.scope for r in ONLINE_BOUTIQUE.routes]


def test_a_failing_post_redirects_nobody(tmp_path: Path) -> None:
    cluster = SimulatedCluster(tmp_path, users=27, glitches=NO_GLITCHES)
    Run(cluster, incident("cartservice", "pod_failure", "severe"))
    scene = cluster.scene_at(cluster.clock.now() - 1)
    post = scene.routes["POST /cart"]
    assert post.fail > 0.9
    assert scene.routes["GET /cart"].redirected == pytest.approx(post.rate * (1 - post.fail))


def test_no_user_abandons_a_request(tmp_path: Path) -> None:
    cluster = SimulatedCluster(tmp_path, users=27, glitches=NO_GLITCHES)
    start = cluster.clock.now()
    cluster.clock.sleep(400)
    lines = [x for b in cluster.logs(TimeWindow(start + 60, start + 360)) for x in b]
    frontend = [json.loads(x.line) for x in lines if x.service == "frontend" and x.line[0] == "{"]
    assert frontend
    assert not [r for r in frontend if "context canceled" in str(r.get("error", ""))]


def test_the_shipped_user_count_is_one_number_everywhere() -> None:
    patch = yaml.safe_load((ROOT / "deploy" / "loadgenerator" / "patch.yaml").read_text())
    (container,) = patch["spec"]["template"]["spec"]["containers"]
    users = int({e["name"]: e["value"] for e in container["env"]}["USERS"])
    for name in ("r2act-302", "kind-demo", "smoke"):
        manifest = yaml.safe_load((ROOT / "campaigns" / f"{name}.yaml").read_text())
        assert manifest["load"]["users"] == users, name
    doc = (ROOT / "docs" / "simulator.md").read_text()
    assert f"`USERS={users}`" in doc
    assert get_system(ONLINE_BOUTIQUE.system).users == users


def test_a_manifest_without_a_user_count_records_the_deployed_one() -> None:
    for system in INSTALLED.values():
        manifest = Manifest.model_validate(
            {
                "name": "t",
                "system": system.name,
                "target": {"kind": "sim"},
                "services": [system.cells[0].service],
                "faults": [{"type": system.cells[0].fault_type.value}],
            },
            strict=False,
        )
        assert manifest.load.users == system.users
    named = Manifest.model_validate(
        {
            "name": "t",
            "target": {"kind": "sim"},
            "services": ["cartservice"],
            "faults": [{"type": "pod_failure"}],
            "load": {"spawn_rate": 2.0, "users": 3},
        },
        strict=False,
    )
    assert named.load.users == 3 and named.load.spawn_rate == 2.0
