"""Logs come in each service's real format, at realistic and load-proportional volume."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import GeneratorType

from r2act.cluster.sim import SimulatedCluster
from r2act.schema import PLAN_ADAPTER, LogLine, TimeWindow

from .conftest import NO_GLITCHES, Run, chaos, incident

MakeCluster = Callable[..., SimulatedCluster]
GO = {"frontend", "checkoutservice", "shippingservice", "productcatalogservice"}
NODE = {"currencyservice", "paymentservice"}
PYTHON = {"emailservice", "recommendationservice"}
REDIS = re.compile(r"^\d+:[CM] \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2}\.\d{3} [*#] ")


SHIPPED_USERS = 27
"""deploy/loadgenerator/patch.yaml's USERS, which the shipped campaigns record."""


def _default_incident(path: Path, users: int = SHIPPED_USERS) -> list[int]:
    cluster = SimulatedCluster(path, users=users, glitches=NO_GLITCHES)
    run = Run(cluster, incident("cartservice", "network_delay", "moderate"))
    ref = run.ref
    cluster.remove(ref)
    cluster.clock.sleep(120)
    post = TimeWindow(run.during.end, cluster.clock.now())
    return [sum(len(b) for b in cluster.logs(w)) for w in (run.pre, run.during, post)]


def test_a_default_incident_has_about_forty_thousand_records(tmp_path: Path) -> None:
    counts = _default_incident(tmp_path)
    assert 36_000 <= sum(counts) <= 46_000, counts


def test_volume_follows_the_request_rate(tmp_path: Path) -> None:
    ten = sum(_default_incident(tmp_path / "ten", users=10))
    twenty = sum(_default_incident(tmp_path / "twenty", users=20))
    assert 1.6 < twenty / ten < 2.1


def _check_format(line: LogLine) -> None:
    text = line.line
    if line.service == "frontend" and not text.startswith("{"):
        # handlers.go L96: fmt.Println on every home page, outside logrus
        assert text == "env platform is either empty or invalid", text
    elif line.service == "recommendationservice" and not text.startswith("{"):
        # grpcio's server logs a handler exception through the last-resort handler
        assert text.startswith(("Exception calling", "\t", ">", "Traceback", "  ", "grpc.")), text
    elif line.service in GO:
        record = json.loads(text)
        assert {"timestamp", "severity", "message"} <= set(record)
        stamp = datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00"))
        assert abs(stamp.timestamp() - line.ts) < 0.001
    elif line.service in NODE:
        record = json.loads(text)
        assert list(record)[:2] == ["severity", "time"]
        assert {"pid", "hostname", "name", "message"} <= set(record)
        assert record["hostname"] == line.pod and abs(record["time"] / 1000 - line.ts) < 0.002
    elif line.service in PYTHON:
        record = json.loads(text)
        assert list(record) == ["timestamp", "severity", "name", "message"]
        assert abs(record["timestamp"] - line.ts) < 0.001
    elif line.service == "adservice":
        record = json.loads(text)
        assert {"instant", "level", "loggerName", "message", "thread", "time"} <= set(record)
        assert abs(record["instant"]["epochSecond"] - int(line.ts)) <= 1
    elif line.service == "redis-cart":
        assert REDIS.match(text), text
    elif line.service == "cartservice":
        assert not text.startswith("{")


def test_every_line_is_in_its_service_format(make_cluster: MakeCluster) -> None:
    run = Run(make_cluster(), incident("redis-cart", "pod_failure"))
    cluster = run.cluster
    cluster.remove(run.ref)
    cluster.clock.sleep(60)
    lines = run.lines(TimeWindow(run.pre.start, cluster.clock.now()))
    assert {line.service for line in lines} == {
        *GO,
        *NODE,
        *PYTHON,
        "adservice",
        "redis-cart",
        "cartservice",
        "loadgenerator",
    } - {"productcatalogservice"} | {"productcatalogservice"} & {x.service for x in lines}
    for line in lines:
        _check_format(line)
    assert all(
        line.container
        == (
            "redis"
            if line.service == "redis-cart"
            else "main"
            if line.service == "loadgenerator"
            else "server"
        )
        for line in lines
    )


def test_cartservice_logs_its_redis_failures_as_grpc_dotnet_does(
    make_cluster: MakeCluster,
) -> None:
    """RedisCartStore throws RpcException(FailedPrecondition, "Can't access cart storage.
    {ex}"); grpc-dotnet logs an RpcException at Information (RpcConnectionError, event 7),
    never the Error-level 'Error when executing service method' of other exceptions."""
    run = Run(make_cluster(), incident("redis-cart", "pod_failure"))
    cart = [line.line for line in run.lines(run.during) if line.service == "cartservice"]
    start = cart.index("info: Grpc.AspNetCore.Server.ServerCallHandler[7]")
    assert cart[start - 1].startswith("GetCartAsync called with userId=")
    assert cart[start + 1].startswith(
        "      Error status code 'FailedPrecondition' with detail 'Can't access cart storage. "
        "StackExchange.Redis.RedisConnectionException: "
    )
    assert cart[start + 1].endswith("' raised.")
    assert not any(line.startswith("fail:") for line in cart)
    redis_start = [line for line in run.lines(run.during) if "Redis is starting" in line.line]
    assert not redis_start


def test_logs_stream_in_bounded_batches(make_cluster: MakeCluster) -> None:
    cluster = make_cluster()
    cluster.clock.sleep(540)
    stream = cluster.logs(TimeWindow(cluster.clock.now() - 540, cluster.clock.now()))
    assert isinstance(stream, GeneratorType)
    sizes = [len(batch) for batch in stream]
    assert len(sizes) > 3 and max(sizes) < 8000


def test_restarted_containers_print_their_startup_banner(make_cluster: MakeCluster) -> None:
    run = Run(make_cluster(), incident("adservice", "memory_pressure"))
    ads = [line.line for line in run.lines(run.during) if line.service == "adservice"]
    assert any("Ad Service started, listening on 9555" in text for text in ads)


def test_a_window_reaching_far_back_starts_at_the_retention_horizon(
    make_cluster: MakeCluster,
) -> None:
    cluster = make_cluster()
    cluster.clock.sleep(60)
    first = next(iter(cluster.logs(TimeWindow(0.0, cluster.clock.now()))))
    earliest = min(line.ts for line in first)
    horizon = cluster.clock.now() - 6 * 3600
    assert horizon <= earliest < horizon + 20


def test_logs_reach_only_existing_pods_and_the_last_two_container_instances(
    tmp_path: Path,
) -> None:
    """Collection parity with the real adapter (kubectl logs, current and --previous)."""
    cluster = SimulatedCluster(tmp_path, glitches=NO_GLITCHES)
    start = cluster.clock.now()
    cluster.clock.sleep(120)
    old_cart = {p.name for p in cluster.state().pods if p.app == "cartservice"}
    cluster.inject(chaos(incident("currencyservice", "pod_failure")))
    cluster.clock.sleep(300)
    (currency,) = [p for p in cluster.state().pods if p.app == "currencyservice"]
    assert currency.containers[0].restart_count >= 3
    cluster.apply_plan(
        PLAN_ADAPTER.validate_python({"operation": "restart_service", "target": "cartservice"})
    )
    cluster.clock.sleep(60)
    window = TimeWindow(start, cluster.clock.now())
    lines = [x for batch in cluster.logs(window) for x in batch]
    pods = {x.pod for x in lines}
    assert not pods & old_cart  # deleted by the rollout: kubectl cannot read it any more
    line = cluster.timelines()[currency.name]
    starts = sorted([line.pod.created_at] + [t for t, _ in line.restarts if t <= window.end])
    own = [x.ts for x in lines if x.pod == currency.name]
    assert own and min(own) >= starts[-2]
