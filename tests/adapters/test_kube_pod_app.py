"""Which workload a pod's lines and state are filed under on a real cluster.

The simulator files a pod under its deployment's name (``LogLine.service``,
``PodState.app``); the kube adapter must read the same name off each system's pods:
the label its system declares (``System.workload_label``): Online Boutique's ``app``, the
opentelemetry-demo chart's ``opentelemetry.io/name`` (its Deployments' selector; its pods
carry no ``app``), and the collector DaemonSet's name for its pods, whose template labels
name no workload (``opentelemetry-collector/daemonset.yaml`` L30-L33 of the chart's
rendering).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from r2act.cluster.kube.parse import pod_app, pod_state
from r2act.systems import get_system
from r2act.systems.astronomyshop.topology import ASTRONOMY_SHOP, COLLECTOR

_SHOP_LABEL = get_system(ASTRONOMY_SHOP.system).workload_label

_RENDERED = "opentelemetry-demo-chart-0.40.10/examples/bring-your-own-observability/rendered"


def _pod(template: dict[str, object], owner: tuple[str, str]) -> dict[str, object]:
    """A pod as the API returns it, made from a workload's template."""
    kind, name = owner
    meta = dict(template["metadata"])  # type: ignore[call-overload]
    meta["name"] = f"{name}-x2k9q"
    meta["ownerReferences"] = [{"kind": kind, "name": name}]
    return {"metadata": meta, "spec": template["spec"], "status": {"phase": "Running"}}


def test_every_demo_pod_is_filed_under_its_topology_name(reference_dir: Path) -> None:
    docs = list(yaml.safe_load_all((reference_dir / _RENDERED / "component.yaml").read_text()))
    agent = yaml.safe_load(
        (reference_dir / _RENDERED / "opentelemetry-collector" / "daemonset.yaml").read_text()
    )
    found = {}
    for doc in [d for d in docs if d and d["kind"] == "Deployment"] + [agent]:
        name = doc["metadata"]["name"]
        owner = ("DaemonSet", name) if doc["kind"] == "DaemonSet" else ("ReplicaSet", name + "-5d")
        pod = _pod(doc["spec"]["template"], owner)
        found[name] = pod_app(pod["metadata"], _SHOP_LABEL)  # type: ignore[arg-type]
        assert pod_state(pod, _SHOP_LABEL).app == found[name]
    assert found == {d.name: d.name for d in ASTRONOMY_SHOP.deployments}
    assert found[COLLECTOR] == COLLECTOR


def test_each_system_reads_its_own_label_and_nothing_is_a_blank() -> None:
    labels = {"app": "cartservice", "opentelemetry.io/name": "cart"}
    assert pod_app({"labels": labels}, get_system("onlineboutique").workload_label) == "cartservice"
    assert pod_app({"labels": labels}, _SHOP_LABEL) == "cart"
    chart_pod = {"labels": {"app.kubernetes.io/component": "cart"}}
    assert pod_app(chart_pod, "app") == ""
    replica = {"labels": {}, "ownerReferences": [{"kind": "ReplicaSet", "name": "x-5d"}]}
    assert pod_app(replica, "app") == ""
    assert pod_app({}, _SHOP_LABEL) == ""
