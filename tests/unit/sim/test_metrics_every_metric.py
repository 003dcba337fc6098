"""Every metric the simulator knows, raw and as a rate, through faults, restarts and
back-offs, with and without a background: the values the metric path gave before its
per-sample work was made cheaper (the digests were recorded from the code at commit
f4d6cfc), so a faster path that changes one value, label or step fails here.

The default queries (``tests/identity``) cover half of the metrics; these cover the rest
(OOM events, CFS periods, packets and errors, phase, readiness conditions, waiting
reasons, resource requests) and the query forms (``sum``, ``sum by``, every matcher)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from r2act.cluster.sim import SimulatedCluster
from r2act.schema import NoiseLevel, TimeWindow

from .conftest import NO_GLITCHES, Run, incident

_NAMES = (
    "container_cpu_usage_seconds_total",
    "container_memory_working_set_bytes",
    "container_memory_usage_bytes",
    "container_memory_rss",
    "container_network_receive_bytes_total",
    "container_network_transmit_bytes_total",
    "container_network_receive_packets_total",
    "container_network_transmit_packets_total",
    "container_network_receive_errors_total",
    "container_network_transmit_packets_dropped_total",
    "container_cpu_cfs_throttled_periods_total",
    "container_cpu_cfs_periods_total",
    "container_oom_events_total",
    "container_made_up_total",
    "kube_pod_container_status_restarts_total",
    "kube_pod_container_status_ready",
    "kube_pod_status_ready",
    "kube_pod_container_status_last_terminated_reason",
    "kube_pod_container_status_waiting_reason",
    "kube_pod_container_resource_limits",
    "kube_pod_container_resource_requests",
    "kube_pod_status_phase",
    "kube_pod_made_up",
    "kube_deployment_status_replicas_available",
    "kube_deployment_status_replicas_unavailable",
    "kube_deployment_spec_replicas",
)
QUERIES = {
    **{f"raw {name}": f'{name}{{namespace="default"}}' for name in _NAMES},
    **{f"rate {name}": f'rate({name}{{container!=""}}[1m])' for name in _NAMES},
    "sum": "sum(rate(container_cpu_usage_seconds_total[1m]))",
    "sum by": "sum by (pod) (rate(container_network_receive_bytes_total[1m]))",
    "regex": 'container_memory_rss{pod=~"cart.*",image!~".*pause.*"}',
    "not": 'kube_pod_container_resource_requests{resource!="cpu",pod!="x"}',
}
EXPECTED = {
    (NoiseLevel.NONE, "memory_pressure"): "c9d6a1a8484a72026236c3ece2652666",
    (NoiseLevel.NONE, "pod_failure"): "fca10671278bc900608271aba07fe3e1",
    (NoiseLevel.NONE, "cpu_saturation"): "4afb3d45d7ebda3a76987ca697e7c606",
    (NoiseLevel.REALISTIC, "memory_pressure"): "e271bede6dd36dba5d5c6c1b35856493",
    (NoiseLevel.REALISTIC, "pod_failure"): "8ec78da93383d34f56bfc3f652aad5fd",
    (NoiseLevel.REALISTIC, "cpu_saturation"): "cb19e0bfc17c247cf62432a50e50705d",
}


def digest(tmp_path: Path, noise: NoiseLevel, fault: str) -> str:
    """A digest of every series (name, labels, exact points) of the pre and during windows."""
    cluster = SimulatedCluster(tmp_path, seed=11, glitches=NO_GLITCHES, noise=noise)
    run = Run(cluster, incident("cartservice", fault))
    out = hashlib.sha256()
    for window in (run.pre, TimeWindow(run.pre.start, run.during.end)):
        for one in cluster.metrics(window, QUERIES, 15.0):
            labels = sorted(one.labels.items())
            out.update(repr((one.query, labels, [(t, v.hex()) for t, v in one.points])).encode())
    return out.hexdigest()[:32]


@pytest.mark.parametrize(("noise", "fault"), list(EXPECTED))
def test_every_metric_gives_the_values_it_gave(
    tmp_path: Path, noise: NoiseLevel, fault: str
) -> None:
    assert digest(tmp_path, noise, fault) == EXPECTED[(noise, fault)]
