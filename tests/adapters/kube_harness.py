"""A Kubernetes API over real HTTP for the adapter contract tests: kmock's emulator.

``KubernetesEmulator`` keeps objects in memory and answers the official client over a
local aiohttp server. It merges patches as plain dicts, so ``BoutiqueEmulator`` adds the
two server-side semantics the adapter relies on (JSON Patch for rollbacks, strategic merge
of containers by name for resource patches). It runs in a background event loop so that
the synchronous ``kubernetes`` client can block on it from the test thread.

``Harness`` seeds a small Online Boutique namespace (deployments, pods, ReplicaSets,
events, logs, the namespace object and the frontend behind the service proxy) and exposes
the request log for assertions on exactly what the adapter sent.
"""

from __future__ import annotations

import asyncio
import copy
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import kmock
from kmock._internal.k8s import KubernetesObjectNotFoundError
from kubernetes import client as k8s

from r2act.campaigns import load_manifest, plan_incidents, render_chaos
from r2act.cluster.kube import KubeCluster
from r2act.cluster.retry import NO_WAIT
from r2act.schema import PLAN_ADAPTER, FaultType, PlannedIncident
from r2act.systems.onlineboutique import ONLINE_BOUTIQUE

NS = "boutique"
CONTEXT = "kind-r2act"
NOW = 1_780_000_000.0
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
CHAOS_PLURALS = ("podchaos", "stresschaos", "networkchaos", "httpchaos", "dnschaos")


def _merge(base: Any, patch: Any) -> Any:
    """Strategic merge as the API server does it for the fields r2act patches."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = _merge(base.get(key), value)
        return out
    if (
        isinstance(base, list)
        and isinstance(patch, list)
        and all(isinstance(i, dict) and "name" in i for i in [*base, *patch])
    ):
        merged = [dict(i) for i in base]
        for item in patch:
            for index, existing in enumerate(merged):
                if existing["name"] == item["name"]:
                    merged[index] = _merge(existing, item)
                    break
            else:
                merged.append(item)
        return merged
    return copy.deepcopy(patch)


def _json_patch(doc: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    for op in ops:
        keys = [k.replace("~1", "/").replace("~0", "~") for k in op["path"].split("/")[1:]]
        parent: Any = out
        for key in keys[:-1]:
            parent = parent[int(key)] if isinstance(parent, list) else parent[key]
        if isinstance(parent, list):
            parent[int(keys[-1])] = copy.deepcopy(op["value"])
        elif op["op"] in ("replace", "add"):
            parent[keys[-1]] = copy.deepcopy(op["value"])
        elif op["op"] == "remove":
            del parent[keys[-1]]
        elif op["op"] == "test":
            if parent.get(keys[-1]) != op["value"]:
                raise ValueError(f"JSON patch test failed at {op['path']}")
        else:
            raise ValueError(f"unsupported JSON patch op {op['op']}")
    return out


class BoutiqueEmulator(kmock.KubernetesEmulator):
    """The emulator plus JSON Patch and strategic-merge patch semantics.

    Every answered request moves from kmock's own log to ``served``: kmock matches each
    new request against its reactions by walking the whole log (a view's ``in`` is a scan),
    so with the log kept whole a collection's thousand requests cost quadratic time (over
    80% of a lane test's CPU). Its log then holds only the requests in flight; ``served``
    keeps every request, in arrival order, for the tests' assertions."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.served: list[kmock.Request] = []

    async def _handle(self, request: kmock.Request) -> Any:
        try:
            return await self._emulate(request)
        finally:
            self.served.append(request)
            for index, logged in enumerate(self._requests):
                if logged is request:
                    del self._requests[index]
                    break

    async def _emulate(self, request: kmock.Request) -> Any:
        content_type = request.headers.get("Content-Type", "")
        special = "json-patch" in content_type or "strategic-merge" in content_type
        if request.action == kmock.action.UPDATE and request.name and special:
            key = (request.resource, request.namespace, request.name)
            async with self._lock:
                if key not in self.objects or self.objects[key].deleted:
                    raise KubernetesObjectNotFoundError()
                current = copy.deepcopy(self.objects[key].raw)
                if isinstance(request.data, list):
                    new = _json_patch(current, request.data)
                else:
                    new = _merge(current, request.data)
                self.objects[key].create(new)
            # Skip the emulator's own dict-merge; serve the reaction or the stored object.
            return await kmock.RawHandler._handle(self, request)
        return await super()._handle(request)


class EmulatorThread:
    """The emulator on 127.0.0.1 in its own event loop thread."""

    def __init__(self) -> None:
        self.handler: BoutiqueEmulator | None = None
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self._loop.run_until_complete(self._main())

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        self.handler = BoutiqueEmulator()
        async with self.handler, kmock.Server(self.handler) as server:
            self.url = str(server.url).rstrip("/")
            self._ready.set()
            await self._stop.wait()

    def __enter__(self) -> EmulatorThread:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("kmock emulator did not start")
        return self

    def __exit__(self, *_exc: object) -> None:
        assert self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
        self._loop.close()


class FakeClock:
    """Time that moves only when slept; ``on_sleep`` lets a test act as the controller."""

    def __init__(self, now: float = NOW) -> None:
        self.t = now
        self.sleeps: list[float] = []
        self.on_sleep: Callable[[int], None] | None = None

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds
        if self.on_sleep is not None:
            self.on_sleep(len(self.sleeps))


def ts(offset: float) -> str:
    """RFC 3339 of NOW + offset with nanoseconds, as the kubelet writes it."""
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp(NOW + offset, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond:06d}123Z"


def container(name: str, image: str, memory: str = "128Mi") -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "resources": {
            "requests": {"cpu": "100m", "memory": "64Mi"},
            "limits": {"cpu": "200m", "memory": memory},
        },
    }


def deployment(
    name: str, *, replicas: int = 1, available: int | None = None, revision: int = 1
) -> dict[str, Any]:
    main = "main" if name == "loadgenerator" else "server"
    available = replicas if available is None else available
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "generation": 1,
            "annotations": {"deployment.kubernetes.io/revision": str(revision)},
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [container(main, f"registry/{name}:v0.10.6")]},
            },
        },
        "status": {
            "replicas": replicas,
            "readyReplicas": available,
            "availableReplicas": available,
            "updatedReplicas": replicas,
        },
    }


def pod(
    name: str, app: str, *, restarts: int = 0, ready: bool = True, containers: tuple[str, ...] = ()
) -> dict[str, Any]:
    names = containers or ("server",)
    statuses = []
    for cname in names:
        status: dict[str, Any] = {
            "name": cname,
            "ready": ready,
            "restartCount": restarts,
            "image": f"registry/{app}:v0.10.6",
            "state": {"running": {"startedAt": ts(-300)}},
        }
        if restarts:
            status["lastState"] = {"terminated": {"reason": "OOMKilled", "exitCode": 137}}
        statuses.append(status)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {"app": app},
            "creationTimestamp": "2026-05-28T20:00:00Z",
        },
        "spec": {"containers": [container(c, f"registry/{app}:v0.10.6") for c in names]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": statuses,
        },
    }


@dataclass
class Harness:
    """The seeded emulator, the adapter pointed at it, and what the server saw."""

    emulator: EmulatorThread
    clock: FakeClock
    namespace_labels: dict[str, str] = field(
        default_factory=lambda: {"r2act.io/chaos-allowed": "true"}
    )
    logs: dict[tuple[str, str, bool], list[tuple[float, str]]] = field(default_factory=dict)
    failing_pages: set[str] = field(default_factory=set)
    slow_pages: dict[str, float] = field(default_factory=dict)
    """Path -> seconds the page takes to answer."""
    posted: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    """(path, form) of every POST that reached the frontend through the proxy."""

    @property
    def kmock(self) -> BoutiqueEmulator:
        assert self.emulator.handler is not None
        return self.emulator.handler

    def cluster(self, **options: Any) -> KubeCluster:
        configuration = k8s.Configuration(host=self.emulator.url)
        configuration.retries = False
        options.setdefault("context", CONTEXT)
        return KubeCluster(
            k8s.ApiClient(configuration),
            namespace=NS,
            expected_context=CONTEXT,
            clock=self.clock,
            retry=NO_WAIT,
            request_timeout_s=5.0,
            **options,
        )

    # -- objects -----------------------------------------------------------------------------

    def put(self, resource: str, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        self.kmock.objects[resource, meta.get("namespace"), meta["name"]] = copy.deepcopy(obj)

    def get(self, resource: str, name: str) -> dict[str, Any] | None:
        key = (kmock.resource(resource), NS, name)
        if key not in self.kmock.objects or self.kmock.objects[key].deleted:
            return None
        return dict(self.kmock.objects[key].raw)

    def exists(self, resource: str, name: str) -> bool:
        return self.get(resource, name) is not None

    def update(self, resource: str, name: str, **fields: Any) -> None:
        self.kmock.objects[kmock.resource(resource), NS, name].update(fields)

    def vanish(self, resource: str, name: str) -> None:
        """The controller releases the object (finalizer cleared): it disappears."""
        self.kmock.objects[kmock.resource(resource), NS, name].delete()

    # -- request log ---------------------------------------------------------------------------

    def requests(self) -> list[kmock.Request]:
        return list(self.kmock.served)

    def writes(self) -> list[kmock.Request]:
        return [r for r in self.requests() if str(r.method.value).upper() in WRITE_METHODS]

    def count(self, method: str, path: str) -> int:
        return sum(
            1
            for r in self.requests()
            if str(r.method.value).upper() == method and r.url.path == path
        )

    def reset_log(self) -> None:
        self.kmock.served.clear()

    # -- failures --------------------------------------------------------------------------------

    def fail(self, criteria: str, statuses: list[int], message: str = "injected") -> None:
        """The next len(statuses) requests matching ``criteria`` answer with those statuses."""
        pending = list(statuses)

        def react(_request: kmock.Request) -> Any:
            if not pending:
                return NotImplemented  # exhausted: fall through to the emulator
            status = pending.pop(0)
            raise kmock.KubernetesError(status=status, reason="Injected", message=message)

        self.kmock[criteria] << react

    def reset_connection(self, criteria: str, times: int = 1) -> None:
        """The next ``times`` matching requests lose their connection before any answer."""
        pending = [times]

        def react(request: kmock.Request) -> Any:
            if pending[0] <= 0:
                return NotImplemented
            pending[0] -= 1
            raw = request._raw_request
            assert raw is not None and raw.transport is not None
            raw.transport.abort()
            raise ConnectionResetError("connection reset by the test")

        self.kmock[criteria] << react


def _serve_log(harness: Harness) -> Callable[[kmock.Request], bytes]:
    pattern = re.compile(rf"/api/v1/namespaces/{NS}/pods/([^/]+)/log")

    def serve(request: kmock.Request) -> bytes:
        found = pattern.fullmatch(request.url.path)
        assert found is not None
        key = (
            found.group(1),
            request.params.get("container", ""),
            request.params.get("previous") == "true",
        )
        if key not in harness.logs:
            raise kmock.KubernetesError(status=400, reason="BadRequest", message="no such log")
        lines = [f"{ts(t - NOW)} {line}" for t, line in harness.logs[key]]
        return ("\n".join(lines) + "\n").encode()

    return serve


def _serve_page(harness: Harness) -> Callable[[kmock.Request], bytes]:
    prefix = f"/api/v1/namespaces/{NS}/services/frontend:80/proxy"

    def serve(request: kmock.Request) -> bytes:
        page = request.url.path[len(prefix) :] or "/"
        if str(request.method.value).upper() == "POST":
            form = request.data if isinstance(request.data, dict) else {}
            if not form and request.body:
                form = dict(parse_qsl(request.body.decode()))
            harness.posted.append((page, {str(k): str(v) for k, v in form.items()}))
        if page in harness.slow_pages:
            time.sleep(harness.slow_pages[page])
        if page in harness.failing_pages:
            raise kmock.KubernetesError(status=503, reason="ServiceUnavailable", message="down")
        return b"ok"

    return serve


def seed_namespace(harness: Harness) -> None:
    """The empty opted-in namespace every seeded system starts from: chaos, workload and
    event resources, the namespace itself with the harness's labels, and pod logs."""
    handler = harness.kmock
    for plural in CHAOS_PLURALS:
        handler.resources[f"chaos-mesh.org/v1alpha1/{plural}"] = {}
    for resource in ("apps/v1/deployments", "apps/v1/replicasets", "v1/pods", "v1/events"):
        handler.resources[resource] = {}
    handler[f"get /api/v1/namespaces/{NS}"] << (
        lambda: {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": NS, "labels": dict(harness.namespace_labels)},
        }
    )
    handler[re.compile(rf"/api/v1/namespaces/{NS}/pods/[^/]+/log")] << _serve_log(harness)


def seed_boutique(harness: Harness) -> None:
    """Three services, their pods, a rollout history for cartservice and a few events."""
    handler = harness.kmock
    seed_namespace(harness)
    handler[f"get /api/v1/namespaces/{NS}/services/frontend:80/proxy/*"] << _serve_page(harness)
    handler[f"post /api/v1/namespaces/{NS}/services/frontend:80/proxy/*"] << _serve_page(harness)

    harness.put("apps/v1/deployments", deployment("frontend"))
    harness.put("apps/v1/deployments", deployment("cartservice", revision=2))
    harness.put("apps/v1/deployments", deployment("loadgenerator"))
    # a caller that holds cartservice's address: a dependency-address fault may be drawn there
    harness.put("apps/v1/deployments", deployment("checkoutservice"))
    harness.put("v1/pods", pod("frontend-7d9c-abcde", "frontend"))
    harness.put("v1/pods", pod("cartservice-5f6b-fghij", "cartservice", restarts=1))
    harness.put("v1/pods", pod("loadgenerator-6c4-klmno", "loadgenerator", containers=("main",)))
    harness.put("v1/pods", pod("checkoutservice-8b5d-pqrst", "checkoutservice"))


REPO = Path(__file__).resolve().parents[2]
DEPLOY = f"/apis/apps/v1/namespaces/{NS}/deployments"
PODS = f"/api/v1/namespaces/{NS}/pods"
CHAOS = f"/apis/chaos-mesh.org/v1alpha1/namespaces/{NS}"


def incident(fault: FaultType, service: str = "cartservice") -> PlannedIncident:
    if fault in (FaultType.HTTP_ERROR, FaultType.HTTP_ABORT):
        service = "frontend"  # a route rule is a frontend fault (campaigns plan it there)
    manifest = load_manifest(REPO / "campaigns" / "smoke.yaml")
    for planned in plan_incidents(manifest):
        if planned.fault.type == fault and planned.service == service:
            return planned
    raise AssertionError(f"smoke campaign has no {fault} on {service}")


def chaos_for(fault: FaultType, service: str = "cartservice") -> dict[str, Any]:
    return render_chaos(incident(fault, service), NS, ONLINE_BOUTIQUE)


def plan(**fields: Any) -> Any:
    return PLAN_ADAPTER.validate_python(fields)


def injected_status(pods: list[str]) -> dict[str, Any]:
    return {
        "conditions": [
            {"type": "Selected", "status": "True"},
            {"type": "AllInjected", "status": "True"},
            {"type": "AllRecovered", "status": "False"},
        ],
        "experiment": {
            "desiredPhase": "Run",
            "containerRecords": [
                {
                    "id": f"{NS}/{p}",
                    "selectorKey": ".",
                    "phase": "Injected",
                    "injectedCount": 1,
                    "recoveredCount": 0,
                    "events": [{"type": "Succeeded", "operation": "Apply", "timestamp": ts(-10)}],
                }
                for p in pods
            ],
        },
    }


def replicaset(revision: int, image: str) -> dict[str, Any]:
    template = deployment("cartservice")["spec"]["template"]
    template["metadata"]["labels"]["pod-template-hash"] = f"hash{revision}"
    template["spec"]["containers"][0]["image"] = image
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"cartservice-hash{revision}",
            "namespace": NS,
            "labels": {"app": "cartservice", "pod-template-hash": f"hash{revision}"},
            "annotations": {
                "deployment.kubernetes.io/revision": str(revision),
                "note": f"rev{revision}",
            },
            "ownerReferences": [
                {"kind": "Deployment", "name": "cartservice", "uid": "uid-cartservice"}
            ],
        },
        "spec": {"template": template},
    }


class ChaosController:
    """Chaos Mesh's part, run on every fake-clock sleep: inject what was created, let go of
    what was deleted. Created objects get the ``chaos-mesh/records`` finalizer and an
    injected status with one record per selected pod; deleted ones disappear on the next
    tick, as after a successful recovery."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.injected: list[str] = []
        self.released: list[str] = []

    def _selected(self, spec: dict[str, Any]) -> list[str]:
        selector = spec.get("selector") or {}
        apps = set((selector.get("labelSelectors") or {}).values())
        for expression in selector.get("expressionSelectors") or []:
            apps.update(expression.get("values") or [])
        pods = self.harness.kmock.objects
        return sorted(
            key[2]
            for key in list(pods)
            if key[0] == kmock.resource("v1/pods")
            and not pods[key].deleted
            and pods[key].raw["metadata"]["labels"].get("app") in apps
        )

    def __call__(self, _tick: int) -> None:
        objects = self.harness.kmock.objects
        for key in list(objects):
            resource, _ns, name = key
            if resource.group != "chaos-mesh.org" or objects[key].deleted:
                continue
            obj = objects[key].raw
            if obj["metadata"].get("deletionTimestamp"):
                objects[key].delete()
                self.released.append(name)
            elif "status" not in obj:
                meta = {**obj["metadata"], "finalizers": ["chaos-mesh/records"]}
                objects[key].update(
                    metadata=meta, status=injected_status(self._selected(obj["spec"]))
                )
                self.injected.append(name)
