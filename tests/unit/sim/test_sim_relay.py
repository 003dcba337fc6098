"""A system's log relay: lines its services export are read from the relay pod.

The Astronomy Shop's services send OTLP log records to the node's collector
(``systems/astronomyshop/logsinks.py``), whose debug exporter prints them on the
collector pod (``otel-collector-agent``); the engine places them there
(``cluster/sim/relaylogs.py``) at the rates of the source pod's own lines.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from r2act.campaigns import Manifest, plan_incidents, render_chaos
from r2act.cluster.sim import SimulatedCluster
from r2act.cluster.sim.relaylogs import relay_of
from r2act.schema import LogLine, TimeWindow
from r2act.systems import get_system
from r2act.systems.astronomyshop import SYSTEM
from r2act.systems.astronomyshop.topology import COLLECTOR

from .conftest import NO_GLITCHES

_POD = re.compile(r"^ {5}-> k8s\.pod\.name: Str\((.+)\)$")


def _cluster(tmp_path: Path) -> SimulatedCluster:
    return SimulatedCluster(tmp_path, topology=SYSTEM.topology, glitches=NO_GLITCHES)


def _lines(cluster: SimulatedCluster, start: float, end: float) -> list[LogLine]:
    return [x for batch in cluster.logs(TimeWindow(start, end)) for x in batch]


def _exporters(lines: list[LogLine]) -> dict[str, int]:
    """Per exporting pod, how many records the collector pod printed for it."""
    counts: dict[str, int] = {}
    for x in lines:
        match = _POD.match(x.line)
        if x.service == COLLECTOR and match:
            counts[match[1]] = counts.get(match[1], 0) + 1
    return counts


def _pod_of(cluster: SimulatedCluster, app: str) -> str:
    (pod,) = [p.name for p in cluster.state().pods if p.app == app]
    return pod


def test_a_catalogue_call_is_printed_on_the_collector_and_not_on_its_own_pod(
    tmp_path: Path,
) -> None:
    cluster = _cluster(tmp_path)
    cluster.clock.sleep(120)
    now = cluster.clock.now()
    lines = _lines(cluster, now - 60, now)
    catalog = _pod_of(cluster, "product-catalog")
    assert not [x for x in lines if x.pod == catalog]  # its only logger is the OTLP bridge
    assert _exporters(lines).get(catalog, 0) > 10
    collector = _pod_of(cluster, COLLECTOR)
    mine = [x for x in lines if x.service == COLLECTOR]
    assert mine and all(x.pod == collector for x in mine)
    assert all(x.container == "opentelemetry-collector" for x in mine)
    bodies = {x.line for x in mine if x.line.startswith("Body: ")}
    assert "Body: Str(Product Found)" in bodies  # product-catalog/main.go L462


def test_a_cart_call_is_printed_on_both_pods(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path)
    cluster.clock.sleep(120)
    now = cluster.clock.now()
    lines = _lines(cluster, now - 60, now)
    cart = _pod_of(cluster, "cart")
    assert len([x for x in lines if x.pod == cart]) > 10  # its console logger
    assert _exporters(lines).get(cart, 0) > 10  # and its OTLP provider's copies


def test_the_collectors_lines_stop_while_its_pod_is_down_and_no_one_elses(
    tmp_path: Path,
) -> None:
    manifest = Manifest.model_validate(
        {
            "name": "t",
            "system": "astronomyshop",
            "target": {"kind": "sim"},
            "services": ["cart"],
            "faults": [{"type": "pod_failure", "intensities": ["severe"]}],
        },
        strict=False,
    )
    (incident,) = plan_incidents(manifest)
    chaos = json.loads(
        json.dumps(render_chaos(incident, "default", SYSTEM.topology)).replace(
            '"cart"', f'"{COLLECTOR}"'
        )
    )
    cluster = _cluster(tmp_path)
    cluster.clock.sleep(120)
    cluster.inject(chaos)
    injected = cluster.clock.now()
    cluster.clock.sleep(40)
    during = _lines(cluster, injected + 5, injected + 35)
    assert not [x for x in during if x.service == COLLECTOR]
    cart = _pod_of(cluster, "cart")
    assert len([x for x in during if x.pod == cart]) > 5  # the source's own lines go on
    before = _lines(cluster, injected - 35, injected - 5)
    assert _exporters(before).get(cart, 0) > 5


def test_only_a_system_with_a_relay_has_one() -> None:
    boutique = get_system("onlineboutique")
    assert boutique.log_relay is None
    assert relay_of(boutique.topology, seed=1, users=10, scale=1.0) is None
    shop = get_system("astronomyshop")
    assert shop.log_relay is not None and shop.log_relay.deployment == COLLECTOR
    assert "product-catalog" in shop.log_relay.sources
    assert "product-catalog" not in shop.log_relay.stdout
    assert {"cart"} <= shop.log_relay.sources & shop.log_relay.stdout
