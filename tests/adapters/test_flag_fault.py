"""A FlagFault flips exactly one flagd flag, goes live by restarting flagd, and is undone
exactly: on the Kubernetes API emulator (kmock over HTTP), with the Astronomy Shop's own
flag file (chart 0.40.10 ``flagd/demo.flagd.json``, read from ../shared/reference).

Invariants: inject changes one flag's ``defaultVariant`` and rolls flagd; undo restores
that flag only, and only while it still holds r2act's variant; a namespace without the
opt-in is never written; another run's flag is never changed; a SIGKILLed process leaves
the flag changed and ``r2act cleanup`` restores it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kube_harness import NS, Harness
from test_kube_adapter import write_kubeconfig
from test_rbac import _permission

from r2act.cluster.base import MANAGED_BY, MANAGED_BY_LABEL, RUN_LABEL
from r2act.cluster.flag_fault_object import FlagChange, render
from r2act.cluster.kube.api import FLAG_FAULT_PERMISSIONS, REQUIRED_PERMISSIONS
from r2act.collector import ledger
from r2act.errors import ConflictError, ForeignObjectError, PermanentClusterError, SafetyError
from r2act.schema import ChaosRef
from r2act.schema.faults import FLAG_FAULT_ANNOTATION
from r2act.systems.astronomyshop.runtime import FLAG_CONFIG_MAP, FLAG_DEPLOYMENT, FLAG_FILE_KEY

REPO = Path(__file__).resolve().parents[2]
FLAG_FILE = REPO.parent / "shared/reference/opentelemetry-demo-chart-0.40.10/flagd/demo.flagd.json"
CONFIGMAPS = "v1/configmaps"
DEPLOYMENTS = "apps/v1/deployments"
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
SELECTOR = {"opentelemetry.io/name": "flagd"}


def _flagd() -> dict[str, Any]:
    """Deployment flagd as chart 0.40.10 renders it, reduced to what r2act reads: the
    emptyDir seeded from ConfigMap flagd-config (values.yaml L775-L814)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "flagd", "namespace": NS, "uid": "uid-flagd"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": dict(SELECTOR)},
            "template": {
                "metadata": {
                    "labels": dict(SELECTOR),
                    "annotations": {"resource.opentelemetry.io/service.namespace": "otel-demo"},
                },
                "spec": {
                    "containers": [{"name": "flagd"}, {"name": "flagd-ui"}],
                    "initContainers": [{"name": "init-config"}],
                    "volumes": [
                        {"name": "config-rw", "emptyDir": {}},
                        {"name": "config-ro", "configMap": {"name": "flagd-config"}},
                    ],
                },
            },
        },
        "status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1},
    }


def _pod(name: str, restarted_at: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS, "labels": dict(SELECTOR)}
    if restarted_at is not None:  # a pod carries its template's annotations
        meta["annotations"] = {RESTARTED_AT: restarted_at}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "flagd"}, {"name": "flagd-ui"}]},
        "status": {"phase": "Running"},
    }


@pytest.fixture
def shop(harness: Harness) -> Harness:
    """The boutique namespace plus flagd, its pod and ConfigMap flagd-config."""
    if not FLAG_FILE.is_file():
        pytest.skip(f"reference flag file missing: {FLAG_FILE}")
    harness.kmock.resources[CONFIGMAPS] = {}  # type: ignore[assignment]  # as kube_harness
    harness.put(DEPLOYMENTS, _flagd())
    harness.put("v1/pods", _pod("flagd-6f7d-aaaaa"))
    harness.put(
        CONFIGMAPS,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "flagd-config", "namespace": NS},
            "data": {"demo.flagd.json": FLAG_FILE.read_text()},
        },
    )
    harness.reset_log()
    return harness


def _fault(flag: str = "paymentFailure", variant: str = "100%", run: str = "run-a") -> Any:
    labels = {MANAGED_BY_LABEL: MANAGED_BY, RUN_LABEL: run, "r2act.io/incident": "inc-1"}
    change = FlagChange(flag, variant, FLAG_CONFIG_MAP, FLAG_FILE_KEY, FLAG_DEPLOYMENT)
    return render(f"r2act-flag-{flag.lower()}", NS, change, labels)


def _file(h: Harness) -> dict[str, Any]:
    configmap = h.get(CONFIGMAPS, "flagd-config")
    assert configmap is not None
    return dict(json.loads(configmap["data"]["demo.flagd.json"]))


def _variants(h: Harness) -> dict[str, str]:
    return {k: v["defaultVariant"] for k, v in _file(h)["flags"].items()}


def _edit(h: Harness, flag: str, variant: str) -> None:
    """Someone else (a user, flagd-ui's owner, helm upgrade) changes a flag in the ConfigMap."""
    configmap = h.get(CONFIGMAPS, "flagd-config")
    assert configmap is not None
    document = json.loads(configmap["data"]["demo.flagd.json"])
    document["flags"][flag]["defaultVariant"] = variant
    data = {"demo.flagd.json": json.dumps(document, indent=2) + "\n"}
    h.update(CONFIGMAPS, "flagd-config", data=data)


def _restarted(h: Harness) -> str | None:
    flagd = h.get(DEPLOYMENTS, "flagd")
    assert flagd is not None
    value = flagd["spec"]["template"]["metadata"].get("annotations", {}).get(RESTARTED_AT)
    return None if value is None else str(value)


def _annotation(h: Harness, resource: str, name: str) -> str | None:
    obj = h.get(resource, name)
    assert obj is not None
    found = (obj["metadata"].get("annotations") or {}).get(FLAG_FAULT_ANNOTATION)
    return None if found is None else str(found)


def test_inject_sets_exactly_that_flags_default_variant_and_restarts_flagd(shop: Harness) -> None:
    before = _file(shop)
    cluster = shop.cluster()
    ref = cluster.inject(_fault())
    after = _file(shop)
    assert after["flags"]["paymentFailure"]["defaultVariant"] == "100%"
    after["flags"]["paymentFailure"]["defaultVariant"] = "off"
    assert after == before  # nothing else in the file changed
    book = json.loads(_annotation(shop, CONFIGMAPS, "flagd-config") or "{}")
    assert book["flags"] == {"paymentFailure": {"original": "off", "applied": "100%"}}
    assert (book["name"], book["runId"], book["path"]) == (ref.name, "run-a", "configmap+restart")
    assert _restarted(shop) == book["restartedAt"]  # flagd rolled, after the file changed
    assert _annotation(shop, DEPLOYMENTS, "flagd") is not None
    paths = [r.url.path.rsplit("/", 2)[-2:] for r in shop.writes()]
    mark, flip, roll = (
        ["deployments", "flagd"],
        ["configmaps", "flagd-config"],
        ["deployments", "flagd"],
    )
    assert paths == [mark, flip, roll]  # pointer first, then the file, then the rollout
    # confirmed only once every live flagd pod comes from the restarted template
    assert not cluster.injection_confirmed(ref)
    shop.put("v1/pods", _pod("flagd-6f7d-aaaaa", restarted_at=book["restartedAt"]))
    assert cluster.injection_confirmed(ref)
    assert ref in cluster.leftovers()


def test_undo_restores_only_the_flag_r2act_changed(shop: Harness) -> None:
    cluster = shop.cluster()
    ref = cluster.inject(_fault())
    first_restart = _restarted(shop)
    _edit(shop, "adFailure", "on")  # someone else flips another flag meanwhile
    cluster.remove(ref)
    variants = _variants(shop)
    assert variants["paymentFailure"] == "off" and variants["adFailure"] == "on"
    assert _annotation(shop, CONFIGMAPS, "flagd-config") is None
    assert _annotation(shop, DEPLOYMENTS, "flagd") is None
    assert _restarted(shop) not in (None, first_restart)  # rolled again (same clock second)
    assert cluster.leftovers() == [] and not cluster.chaos_status(ref).exists
    assert cluster.notices == []


def test_a_flag_changed_since_is_not_overwritten_and_it_is_said(shop: Harness) -> None:
    cluster = shop.cluster()
    ref = cluster.inject(_fault())
    _edit(shop, "paymentFailure", "50%")
    cluster.remove(ref)
    assert _variants(shop)["paymentFailure"] == "50%"
    (notice,) = cluster.notices
    assert "'paymentFailure'" in notice and "'50%'" in notice and "left it" in notice
    assert _annotation(shop, CONFIGMAPS, "flagd-config") is None


def test_a_namespace_without_the_opt_in_is_refused_and_nothing_is_written(shop: Harness) -> None:
    shop.namespace_labels.clear()
    with pytest.raises(SafetyError, match="chaos-allowed"):
        shop.cluster().inject(_fault())
    assert shop.writes() == []
    assert _variants(shop)["paymentFailure"] == "off"


@pytest.mark.parametrize(
    ("flag", "variant", "named"),
    [("noSuchFlag", "on", "'noSuchFlag'"), ("paymentFailure", "200%", "'200%'")],
)
def test_an_unknown_flag_or_variant_is_refused_naming_it(
    shop: Harness, flag: str, variant: str, named: str
) -> None:
    with pytest.raises(PermanentClusterError, match=named):
        shop.cluster().inject(_fault(flag, variant))
    assert shop.writes() == []


def test_another_runs_flag_is_left_alone(shop: Harness) -> None:
    mine = shop.cluster()
    ref = mine.inject(_fault(run="run-a"))
    shop.reset_log()
    other = shop.cluster()
    with pytest.raises(ConflictError, match="run-a"):  # run b may not touch the flag file
        other.inject(_fault("adFailure", "on", run="run-b"))
    with pytest.raises(ForeignObjectError, match="another r2act run"):
        other.remove(ChaosRef(kind=ref.kind, name=ref.name, namespace=NS, run_id="run-b"))
    assert shop.writes() == []
    assert _variants(shop)["paymentFailure"] == "100%" and _variants(shop)["adFailure"] == "off"


_CHILD = """
import json, os, signal, sys
from pathlib import Path
from r2act.campaigns import KubernetesTarget
from r2act.cluster.kube import KubeCluster
from r2act.cluster.kube import api as kube_api
from r2act.collector import ledger
from r2act.collector.cleanup import describe_target
from r2act.collector.lifecycle import chaos_ref

out, when, obj = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
namespace = obj["metadata"]["namespace"]
target = KubernetesTarget(kind="kubernetes", context="kind-r2act", namespace=namespace)
cluster = KubeCluster.from_target(target)
run = ledger.run_id(out, "collect")
obj["metadata"]["labels"]["r2act.io/run"] = run
book = ledger.Ledger(out, "collect", describe_target(target, cluster, out), run)
patch = kube_api.KubeApi.patch_configmap
def killed_after(self, *args, **kwargs):
    patch(self, *args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
mark = kube_api.KubeApi.patch_deployment
def killed_after_mark(self, *args, **kwargs):
    mark(self, *args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
if when == "file-written":
    kube_api.KubeApi.patch_configmap = killed_after
if when == "marked":
    kube_api.KubeApi.patch_deployment = killed_after_mark
book.fault(chaos_ref(obj))  # the collector's write-ahead entry, then the inject
cluster.inject(obj)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("when", ["marked", "file-written", "injected"])
def test_a_sigkilled_run_leaves_the_flag_and_cleanup_restores_it(
    shop: Harness, tmp_path: Path, when: str
) -> None:
    out = tmp_path / "run"
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "KUBECONFIG": str(write_kubeconfig(tmp_path / "kc", shop.emulator.url)),
        "R2ACT_PROMETHEUS_URL": "http://127.0.0.1:9",
    }
    fault = json.dumps(_fault())
    child = subprocess.run(  # noqa: PLW1510 - the return code is asserted
        [sys.executable, "-c", _CHILD, str(out), when, fault],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    # the kill left the fault behind (or, right after marking flagd, only the mark)
    assert _variants(shop)["paymentFailure"] == ("off" if when == "marked" else "100%")
    assert _annotation(shop, DEPLOYMENTS, "flagd") is not None
    assert (_restarted(shop) is None) == (when != "injected")  # flagd not yet rolled
    assert not ledger.pending(out).empty
    stamp_before = _restarted(shop)

    swept = subprocess.run(  # noqa: PLW1510
        [sys.executable, "-m", "r2act", "cleanup", "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert swept.returncode == 0, swept.stdout + swept.stderr
    assert "FlagFault/r2act-flag-paymentfailure" in swept.stdout
    configmap = shop.get(CONFIGMAPS, "flagd-config")
    assert configmap is not None
    assert configmap["data"]["demo.flagd.json"] == FLAG_FILE.read_text()  # byte for byte
    assert _annotation(shop, CONFIGMAPS, "flagd-config") is None
    assert _annotation(shop, DEPLOYMENTS, "flagd") is None
    assert _restarted(shop) not in (None, stamp_before)  # flagd reads the restored file
    assert ledger.pending(out).empty


def test_a_flag_faults_requests_need_only_the_named_permissions(shop: Harness) -> None:
    cluster = shop.cluster()
    ref = cluster.inject(_fault())
    cluster.injection_confirmed(ref)
    cluster.leftovers()
    cluster.remove(ref)
    used = {_permission(r.method.value.upper(), r.url.path) for r in shop.requests()}
    granted = set(REQUIRED_PERMISSIONS) | set(FLAG_FAULT_PERMISSIONS)
    assert used <= granted, used - granted
    assert set(FLAG_FAULT_PERMISSIONS) <= used


def test_cleanup_of_another_run_lists_this_runs_flag_and_leaves_it(
    shop: Harness, tmp_path: Path
) -> None:
    from r2act.collector.cleanup import revert

    ref = shop.cluster().inject(_fault(run="run-a"))
    out = tmp_path / "run-b"
    book = ledger.Ledger(out, "collect", {"kind": "kubernetes", "namespace": NS}, "run-b")
    book.close()
    shop.reset_log()
    report = revert(out, shop.cluster(), ledger.pending(out))
    assert report.others == [ref] and report.removed == [] and not report.failed
    assert shop.writes() == []
    assert _variants(shop)["paymentFailure"] == "100%"


def test_a_retried_inject_that_landed_sends_nothing_again(shop: Harness) -> None:
    cluster = shop.cluster()
    ref = cluster.inject(_fault())
    writes = len(shop.writes())
    assert cluster.inject(_fault()) == ref
    assert len(shop.writes()) == writes


def test_own_flag_is_restored_after_the_opt_in_was_withdrawn_and_it_is_said(
    shop: Harness,
) -> None:
    cluster = shop.cluster()
    ref = cluster.inject(_fault())
    shop.namespace_labels.clear()
    cluster.remove(ref)
    assert _variants(shop)["paymentFailure"] == "off"
    (notice,) = cluster.notices
    assert "no longer carries r2act.io/chaos-allowed=true" in notice and ref.name in notice
    with pytest.raises(SafetyError):
        cluster.inject(_fault())


def _planned(flag: str, variant: str) -> Any:
    """A planned Astronomy Shop flag incident, as the planner writes one."""
    from r2act.schema import FaultSpec, FaultType, Intensity, PhaseDurations, PlannedIncident

    return PlannedIncident(
        id="astronomyshop_payment_feature_flag_severe_r01",
        campaign="flags",
        system="astronomyshop",
        service="payment",
        fault=FaultSpec(
            type=FaultType.FEATURE_FLAG,
            intensity=Intensity.SEVERE,
            service="payment",
            duration_s=60,
            parameters={"flag": flag, "variant": variant},
        ),
        repetition=1,
        phases=PhaseDurations(pre_s=10, during_s=60, post_s=10, recovery_timeout_s=60),
        seed=1,
    )


def test_a_planned_flag_incident_is_injected_and_undone_through_the_api(shop: Harness) -> None:
    """The campaign's rendering of a feature_flag incident, stamped with the run as the
    collector sends it, flips exactly that flag and its removal restores the file."""
    from r2act.campaigns import render_chaos
    from r2act.systems.astronomyshop import ASTRONOMY_SHOP

    original = FLAG_FILE.read_text()
    incident = _planned("paymentFailure", "100%")
    body = ledger.stamp(render_chaos(incident, NS, ASTRONOMY_SHOP), "run-a")
    cluster = shop.cluster()
    cluster.run_id = "run-a"
    ref = cluster.inject(body)
    assert (ref.kind, ref.run_id) == ("FlagFault", "run-a")
    assert _variants(shop)["paymentFailure"] == "100%"
    book = json.loads(_annotation(shop, CONFIGMAPS, "flagd-config") or "{}")
    assert (book["path"], book["runId"]) == ("configmap+restart", "run-a")
    assert book["incidentId"] == incident.id
    cluster.remove(ref)
    configmap = shop.get(CONFIGMAPS, "flagd-config")
    assert configmap is not None and configmap["data"]["demo.flagd.json"] == original
    assert cluster.leftovers() == []
