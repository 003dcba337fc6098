"""The Kubernetes edge: the only module that imports ``kubernetes``.

``KubeApi`` is one namespace's worth of API calls, each answering raw JSON
(``_preload_content=False``, no client models) and each naming the RBAC permission it
needs. Every failure leaves here as an r2act error: 404 NotFoundError, 409 ConflictError,
401/403 SafetyError naming the missing permission, 429/5xx/connection errors
TransientClusterError - retried with bounded backoff (``cluster.retry``) - and anything else
PermanentClusterError. What the answers *mean* is ``kube.parse``'s and ``kube.cluster``'s business.

``REQUIRED_PERMISSIONS`` is the complete list of grants the calls below use;
``deploy/rbac.yaml`` grants exactly it (a test keeps the two equal, and another checks
every request the adapter sends against it).
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple

import urllib3
from kubernetes import client as k8s
from kubernetes import config as _k8s_config
from kubernetes.client.exceptions import ApiException

from r2act.cluster.kube.parse import CHAOS_GROUP, CHAOS_PLURALS, CHAOS_VERSION
from r2act.cluster.retry import RetryPolicy
from r2act.errors import (
    ConflictError,
    NotFoundError,
    PermanentClusterError,
    R2actError,
    SafetyError,
    TransientClusterError,
)
from r2act.schema import CHAOS_KIND, FLAG_FAULT_KIND, FaultType

k8s_config: Any = _k8s_config  # untyped module; its Any stays in this file
STRATEGIC_MERGE: Final = "application/strategic-merge-patch+json"
JSON_PATCH: Final = "application/json-patch+json"


class Permission(NamedTuple):
    """One RBAC grant the adapter relies on."""

    group: str
    """API group ('' for core)."""
    resource: str
    """Resource, with '/subresource' when it is one."""
    verb: str
    """RBAC verb."""
    cluster_scoped: bool = False
    """Needs a ClusterRole (the namespace object itself), limited by resourceNames."""

    def __str__(self) -> str:
        group = f" (API group {self.group})" if self.group else ""
        return f"{self.verb} {self.resource}{group}"


def _perm(group: str, resource: str, verb: str) -> Permission:
    return Permission(group, resource, verb)


NAMESPACE_GET: Final = Permission("", "namespaces", "get", cluster_scoped=True)
PODS_LIST: Final = _perm("", "pods", "list")
POD_LOG_GET: Final = _perm("", "pods/log", "get")
EVENTS_LIST: Final = _perm("", "events", "list")
SERVICE_PROXY_GET: Final = _perm("", "services/proxy", "get")
SERVICE_PROXY_CREATE: Final = _perm("", "services/proxy", "create")
DEPLOYMENTS_GET: Final = _perm("apps", "deployments", "get")
DEPLOYMENTS_LIST: Final = _perm("apps", "deployments", "list")
DEPLOYMENTS_PATCH: Final = _perm("apps", "deployments", "patch")
SCALE_GET: Final = _perm("apps", "deployments/scale", "get")
SCALE_PATCH: Final = _perm("apps", "deployments/scale", "patch")
REPLICASETS_LIST: Final = _perm("apps", "replicasets", "list")
CHAOS_VERBS: Final = ("create", "get", "list", "delete")

REQUIRED_PERMISSIONS: Final[tuple[Permission, ...]] = (
    NAMESPACE_GET,
    PODS_LIST,
    POD_LOG_GET,
    EVENTS_LIST,
    SERVICE_PROXY_GET,
    SERVICE_PROXY_CREATE,
    DEPLOYMENTS_GET,
    DEPLOYMENTS_LIST,
    DEPLOYMENTS_PATCH,
    SCALE_GET,
    SCALE_PATCH,
    REPLICASETS_LIST,
    *(
        _perm(CHAOS_GROUP, plural, verb)
        for plural in CHAOS_PLURALS.values()
        for verb in CHAOS_VERBS
    ),
)
"""Every permission the adapter uses and nothing else; deploy/rbac.yaml must match it."""

CONFIGMAPS_GET: Final = _perm("", "configmaps", "get")
CONFIGMAPS_PATCH: Final = _perm("", "configmaps", "patch")
FLAG_FAULT_PERMISSIONS: Final[tuple[Permission, ...]] = (CONFIGMAPS_GET, CONFIGMAPS_PATCH)
"""What a FlagFault needs beyond REQUIRED_PERMISSIONS: read and patch the flag ConfigMap.

Kept apart from REQUIRED_PERMISSIONS: only a system with a flag service (the Astronomy Shop) needs
them, and only a FlagFault's inject and removal use them, so an Online Boutique run needs no
grant on ConfigMaps. ``deploy/astronomyshop/rbac-flags.yaml`` grants them on
``flagd-config`` alone (``tests/adapters/test_deploy_astronomyshop.py`` holds the two
together)."""


def required_permissions(fault_types: Iterable[FaultType]) -> tuple[Permission, ...]:
    """The grants a campaign of ``fault_types`` needs: REQUIRED_PERMISSIONS, plus
    FLAG_FAULT_PERMISSIONS only when one of them is injected by a FlagFault (an Online
    Boutique campaign asks for nothing on ConfigMaps)."""
    flags = any(CHAOS_KIND[FaultType(f)] == FLAG_FAULT_KIND for f in fault_types)
    return REQUIRED_PERMISSIONS + (FLAG_FAULT_PERMISSIONS if flags else ())


def _chaos_perm(plural: str, verb: str) -> Permission:
    return _perm(CHAOS_GROUP, plural, verb)


def _server_message(exc: ApiException) -> str:
    body = exc.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body:
        try:
            decoded = json.loads(body)
        except ValueError:
            return body.strip()[:300]
        if isinstance(decoded, dict) and decoded.get("message"):
            return str(decoded["message"])[:300]
    return str(exc.reason or "")


def client_for_context(context: str, kubeconfig: str | Path | None = None) -> Any:
    """An ``ApiClient`` for one named kubeconfig context (never the *current* one by default).

    SafetyError when the kubeconfig cannot be read or lacks the context. The client's own
    urllib3 retries are off: one retry policy, ours, governs every call.
    """
    # Read $KUBECONFIG now: the client library only looks at it when first imported.
    config_file = str(kubeconfig) if kubeconfig is not None else os.environ.get("KUBECONFIG")
    try:
        contexts, _active = k8s_config.list_kube_config_contexts(config_file=config_file)
    except (k8s_config.ConfigException, OSError) as exc:
        raise SafetyError(
            f"cannot read kubeconfig ({config_file or '$KUBECONFIG or ~/.kube/config'}): "
            f"{exc} (create the cluster with deploy/kind/up.sh)"
        ) from exc
    names = [str(c.get("name")) for c in contexts or []]
    if context not in names:
        raise SafetyError(
            f"kubeconfig has no context {context!r} (has: {', '.join(names) or 'none'}); "
            "r2act only acts on the context the campaign names (fix target.context)"
        )
    configuration = k8s.Configuration()
    k8s_config.load_kube_config(
        config_file=config_file, context=context, client_configuration=configuration
    )
    configuration.retries = False
    return k8s.ApiClient(configuration)


class KubeApi:
    """The API calls r2act makes in one namespace, as raw JSON with r2act errors."""

    def __init__(
        self,
        api_client: Any,
        *,
        namespace: str,
        context: str,
        retry: RetryPolicy,
        request_timeout_s: float = 30.0,
    ) -> None:
        self._client = api_client
        self._core = k8s.CoreV1Api(api_client)
        self._apps = k8s.AppsV1Api(api_client)
        self._custom = k8s.CustomObjectsApi(api_client)
        self.namespace = namespace
        self.context = context
        self._retry = retry
        self._timeout = request_timeout_s

    def close(self) -> None:
        """Release the connection pool."""
        self._client.close()

    # -- one request ---------------------------------------------------------------------

    def _translate(self, exc: ApiException, perm: Permission, what: str) -> R2actError:
        status = int(exc.status or 0)
        message = _server_message(exc)
        where = f"{what} in namespace {self.namespace!r}"
        if status == 404:
            return NotFoundError(f"{where}: not found (404): {message}")
        if status == 409:
            return ConflictError(f"{where}: conflict (409): {message}")
        if status == 401:
            return SafetyError(
                f"{where}: the API server rejected the credentials of context "
                f"{self.context!r} (401 Unauthorized); refresh the kubeconfig "
                "(e.g. kind export kubeconfig --name r2act)"
            )
        if status == 403:
            scope = "cluster-wide on that namespace" if perm.cluster_scoped else "in the namespace"
            return SafetyError(
                f"{where}: forbidden (403): r2act needs permission '{perm}' {scope}; "
                f"grant it with deploy/rbac.yaml (server said: {message})"
            )
        if status in (0, 429) or status >= 500:
            return TransientClusterError(f"{where}: HTTP {status}: {message}")
        return PermanentClusterError(f"{where}: HTTP {status}: {message}")

    def _once(
        self, perm: Permission, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> bytes:
        """One request for raw bytes; every failure becomes an r2act error."""
        assert perm in REQUIRED_PERMISSIONS or perm in FLAG_FAULT_PERMISSIONS, (
            f"{perm} missing from REQUIRED_PERMISSIONS"
        )
        try:
            response = fn(*args, _preload_content=False, _request_timeout=self._timeout, **kwargs)
            data = response.data
            response.release_conn()
        except ApiException as exc:
            raise self._translate(exc, perm, what) from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransientClusterError(
                f"{what}: connection to the API server failed: {exc}"
            ) from exc
        return bytes(data or b"")

    def _raw(
        self, perm: Permission, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> bytes:
        return self._retry.call(lambda: self._once(perm, what, fn, *args, **kwargs))

    @staticmethod
    def _decode(what: str, data: bytes) -> dict[str, Any]:
        decoded = json.loads(data) if data else {}
        if not isinstance(decoded, dict):
            raise PermanentClusterError(f"{what}: the API server answered {type(decoded)}")
        return decoded

    def _json(
        self, perm: Permission, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> dict[str, Any]:
        return self._decode(what, self._raw(perm, what, fn, *args, **kwargs))

    def _items(
        self, perm: Permission, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> list[dict[str, Any]]:
        items = self._json(perm, what, fn, *args, **kwargs).get("items") or []
        return [i for i in items if isinstance(i, dict)]

    # -- core/v1 -------------------------------------------------------------------------

    def read_namespace(self) -> dict[str, Any]:
        """The namespace object itself (for its opt-in label)."""
        return self._json(
            NAMESPACE_GET,
            f"read namespace {self.namespace}",
            self._core.read_namespace,
            self.namespace,
        )

    def pods(self) -> list[dict[str, Any]]:
        """Every pod of the namespace."""
        return self._items(PODS_LIST, "list pods", self._core.list_namespaced_pod, self.namespace)

    def events(self) -> list[dict[str, Any]]:
        """Every core/v1 event of the namespace."""
        return self._items(
            EVENTS_LIST, "list events", self._core.list_namespaced_event, self.namespace
        )

    def pod_log(self, pod: str, container: str, since_s: int, previous: bool) -> bytes:
        """A container's log with kubelet timestamps, the last ``since_s`` seconds."""
        return self._raw(
            POD_LOG_GET,
            f"read log of {pod}/{container}{' (previous)' if previous else ''}",
            self._core.read_namespaced_pod_log,
            pod,
            self.namespace,
            container=container,
            timestamps=True,
            since_seconds=since_s,
            previous=previous,
        )

    def proxy_get(self, service: str, path: str) -> None:
        """GET a path of a service through the API server's proxy; one attempt, no retry.

        A probe's failure is the answer, so it is not retried; it still raises the
        translated error (SafetyError for a missing permission).
        """
        self._once(
            SERVICE_PROXY_GET,
            f"probe {service}{path}",
            self._core.connect_get_namespaced_service_proxy_with_path,
            service,
            self.namespace,
            path.lstrip("/"),
        )

    def proxy_request(
        self,
        service: str,
        method: str,
        path: str,
        form: Sequence[tuple[str, str]] = (),
        json_body: Mapping[str, object] | None = None,
    ) -> int | None:
        """Send one request to a service through the API server's proxy; its HTTP status.

        For the health oracle: one attempt, no retry, the page's own status returned (None
        when no answer came back). 401/403 still raise SafetyError: a missing permission is
        not an unhealthy page. POST needs ``create`` on services/proxy. The body is ``form``
        urlencoded, or ``json_body`` as ``application/json`` when given (never both).
        """
        if form and json_body is not None:
            raise ValueError("a probe sends a form or a JSON body, not both")
        perm = SERVICE_PROXY_GET if method == "GET" else SERVICE_PROXY_CREATE
        assert perm in REQUIRED_PERMISSIONS, f"{perm} missing from REQUIRED_PERMISSIONS"
        api = self._core.api_client
        resource = self._proxy_path(service, path)
        headers = {"Content-Type": "application/x-www-form-urlencoded"} if form else {}
        if json_body is not None:
            headers = {"Content-Type": "application/json"}
        try:
            request = api.param_serialize(
                method=method,
                resource_path=resource,
                header_params=headers,
                post_params=list(form),
                body=None if json_body is None else dict(json_body),
                auth_settings=["BearerToken"],
            )
            response = api.call_api(*request, _request_timeout=self._timeout)
            response.read()
            status = int(response.status)
        except ApiException as exc:
            status = int(exc.status or 0)
        except (urllib3.exceptions.HTTPError, OSError):
            return None
        if status in (401, 403):
            raise self._translate(
                ApiException(status=status, reason="Forbidden"), perm, f"probe {service}{path}"
            )
        return status

    def _proxy_path(self, service: str, path: str) -> str:
        """The API server's proxy path to ``path`` of a service of the namespace."""
        return (
            f"/api/v1/namespaces/{_escaped(self.namespace)}/services/{_escaped(service)}/proxy/"
            + _escaped(path.lstrip("/"))
        )

    def service_get(self, service: str, path: str, query: Sequence[tuple[str, str]]) -> bytes:
        """GET ``path?query`` of a service through the API server's proxy: the body of a 2xx
        answer, else the translated error; one attempt (the caller retries, e.g. the trace
        store's reader, ``cluster.jaeger``)."""
        what = f"GET {service}{path} through the service proxy"
        api = self._core.api_client
        resource = self._proxy_path(service, path)
        try:
            request = api.param_serialize(
                method="GET",
                resource_path=resource,
                query_params=list(query),
                auth_settings=["BearerToken"],
            )
            response = api.call_api(*request, _request_timeout=self._timeout)
            data = response.read()
            status = int(response.status)
        except ApiException as exc:
            raise self._translate(exc, SERVICE_PROXY_GET, what) from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransientClusterError(
                f"{what}: connection to the API server failed: {exc}"
            ) from exc
        if not 200 <= status < 300:
            body = bytes(data or b"").decode("utf-8", "replace")
            failed = ApiException(status=status, reason=str(response.reason or ""), body=body)
            raise self._translate(failed, SERVICE_PROXY_GET, what)
        return bytes(data or b"")

    def configmap(self, name: str) -> dict[str, Any]:
        """One ConfigMap (a FlagFault's flag file)."""
        return self._json(
            CONFIGMAPS_GET,
            f"get configmap {name}",
            self._core.read_namespaced_config_map,
            name,
            self.namespace,
        )

    def patch_configmap(self, name: str, ops: list[dict[str, Any]], what: str) -> None:
        """JSON-Patch a ConfigMap (its first operation tests what r2act read)."""
        self._raw(
            CONFIGMAPS_PATCH,
            f"{what} configmap {name}",
            self._core.patch_namespaced_config_map,
            name,
            self.namespace,
            ops,
            _content_type=JSON_PATCH,
        )

    # -- apps/v1 -------------------------------------------------------------------------

    def deployments(self) -> list[dict[str, Any]]:
        """Every deployment of the namespace."""
        return self._items(
            DEPLOYMENTS_LIST,
            "list deployments",
            self._apps.list_namespaced_deployment,
            self.namespace,
        )

    def deployment(self, name: str) -> dict[str, Any]:
        """One deployment."""
        return self._json(
            DEPLOYMENTS_GET,
            f"get deployment {name}",
            self._apps.read_namespaced_deployment,
            name,
            self.namespace,
        )

    def scale(self, name: str) -> dict[str, Any]:
        """A deployment's scale subresource."""
        return self._json(
            SCALE_GET,
            f"get scale of deployment {name}",
            self._apps.read_namespaced_deployment_scale,
            name,
            self.namespace,
        )

    def replicasets(self, selector: str) -> list[dict[str, Any]]:
        """ReplicaSets matching a label selector (a deployment's rollout history)."""
        return self._items(
            REPLICASETS_LIST,
            f"list replicasets {selector}",
            self._apps.list_namespaced_replica_set,
            self.namespace,
            label_selector=selector,
        )

    def patch_deployment(self, name: str, body: Any, content_type: str, what: str) -> None:
        """PATCH a deployment; a dict body as strategic merge, a list as JSON Patch."""
        self._raw(
            DEPLOYMENTS_PATCH,
            f"{what} deployment {name}",
            self._apps.patch_namespaced_deployment,
            name,
            self.namespace,
            body,
            _content_type=content_type,
        )

    def patch_scale(self, name: str, replicas: int) -> None:
        """Set a deployment's replicas through the scale subresource."""
        self._raw(
            SCALE_PATCH,
            f"scale deployment {name}",
            self._apps.patch_namespaced_deployment_scale,
            name,
            self.namespace,
            {"spec": {"replicas": replicas}},
            _content_type=STRATEGIC_MERGE,
        )

    # -- chaos-mesh.org/v1alpha1 -----------------------------------------------------------

    def _chaos_args(self, plural: str) -> tuple[str, str, str, str]:
        return CHAOS_GROUP, CHAOS_VERSION, self.namespace, plural

    def get_chaos(self, plural: str, name: str) -> dict[str, Any]:
        """One chaos object, status included."""
        return self._json(
            _chaos_perm(plural, "get"),
            f"get {plural}/{name}",
            self._custom.get_namespaced_custom_object,
            *self._chaos_args(plural),
            name,
        )

    def list_chaos(self, plural: str, selector: str) -> list[dict[str, Any]]:
        """Chaos objects of one kind matching a label selector."""
        return self._items(
            _chaos_perm(plural, "list"),
            f"list {plural}",
            self._custom.list_namespaced_custom_object,
            *self._chaos_args(plural),
            label_selector=selector,
        )

    def delete_chaos(self, plural: str, name: str) -> None:
        """Ask for deletion; Chaos Mesh's finalizer decides when the object goes."""
        self._raw(
            _chaos_perm(plural, "delete"),
            f"delete {plural}/{name}",
            self._custom.delete_namespaced_custom_object,
            *self._chaos_args(plural),
            name,
        )

    def create_chaos(
        self,
        plural: str,
        name: str,
        body: dict[str, Any],
        is_ours: Callable[[dict[str, Any]], bool],
    ) -> dict[str, Any]:
        """Create a chaos object; ConflictError when it already exists.

        A create whose answer was lost (5xx, reset) may have succeeded anyway. When a retry
        then meets 409 and ``is_ours`` recognises the object on the server, that object is
        the one this call created.
        """
        attempts = 0

        def once() -> bytes:
            nonlocal attempts
            attempts += 1
            try:
                return self._once(
                    _chaos_perm(plural, "create"),
                    f"create {plural}/{name}",
                    self._custom.create_namespaced_custom_object,
                    *self._chaos_args(plural),
                    body,
                )
            except ConflictError:
                if attempts > 1:
                    existing = self.get_chaos(plural, name)
                    if is_ours(existing):
                        return json.dumps(existing).encode()
                raise

        return self._decode(f"create {plural}/{name}", self._retry.call(once))


def _escaped(part: str) -> str:
    """``part`` percent-encoded for a URL path (``/`` kept), as the service proxy reads it."""
    return urllib.parse.quote(part)
