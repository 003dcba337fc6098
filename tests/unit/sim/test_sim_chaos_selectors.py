"""The simulated Chaos Mesh selects pods by the label the system's manifests put on them.

Online Boutique's pods carry ``app``; the Astronomy Shop chart's ``opentelemetry.io/name``
(``System.workload_label``). The engine reads the system's label, so a rendered Astronomy
Shop object injects that service's pods and one selecting by ``app`` is refused, as Chaos
Mesh would find no pod for it on the chart's deployment.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from r2act.campaigns import Manifest, plan_incidents, render_chaos
from r2act.cluster.sim import SimulatedCluster
from r2act.errors import PermanentClusterError
from r2act.schema import PlannedIncident
from r2act.systems import get_system

MakeCluster = Callable[..., SimulatedCluster]
SHOP = get_system("astronomyshop")


def _shop_incident(service: str, fault: str) -> PlannedIncident:
    manifest = Manifest.model_validate(
        {
            "name": "t",
            "system": SHOP.name,
            "target": {"kind": "sim"},
            "services": [service],
            "faults": [{"type": fault, "intensities": ["severe"]}],
            "repetitions": 1,
        },
        strict=False,
    )
    return plan_incidents(manifest)[0]


@pytest.mark.parametrize("fault", ["pod_failure", "cpu_saturation"])
def test_a_rendered_shop_object_injects_its_services_pods(
    make_cluster: MakeCluster, fault: str
) -> None:
    cluster = make_cluster(topology=SHOP.topology)
    obj = render_chaos(_shop_incident("cart", fault), "default", SHOP.topology)
    assert obj["spec"]["selector"]["labelSelectors"] == {"opentelemetry.io/name": "cart"}
    ref = cluster.inject(obj)
    cluster.clock.sleep(5)
    status = cluster.chaos_status(ref)
    pods = {p.name for p in cluster.state().pods if p.app == "cart"}
    assert pods and {r.id.split("/")[1] for r in status.records} == pods
    assert status.injected(cluster.pod_names())


def test_a_shop_object_selecting_by_app_is_refused(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(topology=SHOP.topology)
    obj = render_chaos(_shop_incident("cart", "pod_failure"), "default", SHOP.topology)
    obj["spec"]["selector"]["labelSelectors"] = {"app": "cart"}
    with pytest.raises(PermanentClusterError, match=r"opentelemetry\.io/name"):
        cluster.inject(obj)
