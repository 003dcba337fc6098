"""The real-cluster adapter: Online Boutique, Chaos Mesh and Prometheus on Kubernetes.

``KubeCluster`` implements the Cluster port on top of ``kube.api.KubeApi`` (the edge: raw
JSON, translated errors, retries, named permissions - the only module that imports
``kubernetes``), ``kube.parse`` (what the JSON means), ``kube.config_fault`` (r2act's own
configuration-fault injector), ``kube.flag_fault`` (feature flags in a flag service) and
``prometheus`` (PromQL). ``TracedKubeCluster`` adds spans (``cluster.jaeger``) when the
campaign has a ``traces`` section.

Safety, in this order, before any request that writes: the context in use must be the
one the campaign names, the namespace must carry ``r2act.io/chaos-allowed=true``, and
every object and selector must stay inside that namespace. Deletion of a chaos object is
never forced: a finalizer that does not clear is reported with the object's state,
because forcing it skips Chaos Mesh's recovery and can leave faults behind.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from r2act.campaigns.manifest import TracesConfig
from r2act.cluster import oracle
from r2act.cluster.base import (
    INCIDENT_LABEL,
    MANAGED_BY,
    MANAGED_BY_LABEL,
    OPT_IN_LABEL,
    RUN_LABEL,
    ChaosObject,
    Clock,
    Cluster,
    TraceSource,
    foreign_reason,
)
from r2act.cluster.config_fault_object import parse as parse_config_object
from r2act.cluster.jaeger import HttpGet, JaegerTraces
from r2act.cluster.kube import config_fault, flag_fault
from r2act.cluster.kube.api import (
    JSON_PATCH,
    REQUIRED_PERMISSIONS,
    KubeApi,
    Permission,
    client_for_context,
)
from r2act.cluster.kube.parse import (
    CHAOS_GROUP,
    CHAOS_PLURALS,
    CHAOS_VERSION,
    chaos_ref,
    chaos_status,
    deployment_state,
    kube_event,
    pod_app,
    pod_state,
    selected_pods,
    split_log_line,
    strip_server_fields,
    stuck_deletion_detail,
)
from r2act.cluster.kube.plans import PlanOps
from r2act.cluster.prometheus import PrometheusMetrics
from r2act.cluster.retry import RetryPolicy
from r2act.errors import (
    ForeignObjectError,
    NotFoundError,
    PermanentClusterError,
    R2actError,
    SafetyError,
)
from r2act.schema import (
    ChaosRef,
    ChaosStatus,
    ClusterState,
    HealthReport,
    KubeEvent,
    LogLine,
    MetricSeries,
    PreflightReport,
    TimeWindow,
    Topology,
)
from r2act.schema.traces import Span
from r2act.systems import DEFAULT_SYSTEM, SYSTEMS, system_of

__all__ = [
    "REQUIRED_PERMISSIONS",
    "KubeCluster",
    "Permission",
    "TracedKubeCluster",
    "WallClock",
    "connect_kubernetes",
]


class WallClock:
    """Real time, for a real cluster."""

    def now(self) -> float:
        """Seconds since the epoch."""
        return time.time()

    def sleep(self, seconds: float) -> None:
        """Block for ``seconds``."""
        time.sleep(max(0.0, seconds))


class KubeCluster(PlanOps):
    """A Kubernetes namespace running Online Boutique, Chaos Mesh and Prometheus."""

    def __init__(
        self,
        api_client: Any,
        *,
        namespace: str,
        context: str,
        expected_context: str,
        metrics: PrometheusMetrics | None = None,
        topology: Topology = SYSTEMS[DEFAULT_SYSTEM],
        clock: Clock | None = None,
        retry: RetryPolicy | None = None,
        request_timeout_s: float = 30.0,
        poll_interval_s: float = 1.0,
        plan_removal_timeout_s: float = 60.0,
        error_rate_threshold: float = 0.0,
    ) -> None:
        """Wrap a configured ``kubernetes.client.ApiClient``.

        ``context`` is the kubeconfig context the client was built from; writes are refused
        unless it equals ``expected_context`` (the campaign's). Use ``from_target`` to build
        one from a campaign target and the user's kubeconfig.
        """
        self._api = KubeApi(
            api_client,
            namespace=namespace,
            context=context,
            retry=retry or RetryPolicy(),
            request_timeout_s=request_timeout_s,
        )
        self._namespace = namespace
        self._context = context
        self._expected_context = expected_context
        self._metrics = metrics
        self._topology = topology
        self._label = system_of(topology).workload_label
        self._clock: Clock = clock or WallClock()
        self._poll = poll_interval_s
        self._plan_removal_timeout = plan_removal_timeout_s
        self._error_rate_threshold = error_rate_threshold
        self.run_id: str | None = None
        """The run r2act acts for; set, a plan removes only this run's chaos objects."""
        self.notices: list[str] = []
        """What r2act did that the user must hear about (e.g. a removal without opt-in)."""
        self._flags = flag_fault.FlagFaults(
            self._api,
            clock=self._clock,
            notices=self.notices,
            ensure_writable=self.ensure_writable,
            may_revert=self.may_revert,
            note_unopted=self._note_unopted,
        )

    @classmethod
    def from_target(
        cls,
        target: Any,
        *,
        kubeconfig: str | Path | None = None,
        prometheus_url: str | None = None,
        **options: Any,
    ) -> KubeCluster:
        """Connect to a campaign's ``{kind: kubernetes, context, namespace}`` target.

        The kubeconfig (``$KUBECONFIG`` or ``~/.kube/config`` unless given) must contain the
        named context; it is selected explicitly, so the user's *current* context never
        decides where r2act acts. Prometheus is ``prometheus_url``, else
        ``$R2ACT_PROMETHEUS_URL``, else the target's ``prometheus_url`` if it has one, else
        ``http://127.0.0.1:9090`` (where deploy/kind exposes it).
        """
        context = str(target.context)
        namespace = str(target.namespace)
        api_client = client_for_context(context, kubeconfig)
        url = (
            prometheus_url
            or os.environ.get("R2ACT_PROMETHEUS_URL")
            or getattr(target, "prometheus_url", None)
            or "http://127.0.0.1:9090"
        )
        retry = options.get("retry")
        return cls(
            api_client,
            namespace=namespace,
            context=context,
            expected_context=context,
            metrics=PrometheusMetrics(str(url), retry=retry),
            **options,
        )

    # -- the Cluster protocol: identity ---------------------------------------------------

    @property
    def clock(self) -> Clock:
        """Wall-clock time."""
        return self._clock

    @property
    def namespace(self) -> str:
        """The one namespace r2act acts in."""
        return self._namespace

    @property
    def fingerprint(self) -> str:
        """``kubernetes:<context>/<namespace>``."""
        return f"kubernetes:{self._context}/{self._namespace}"

    def close(self) -> None:
        """Release connection pools."""
        self._api.close()
        if self._metrics is not None:
            self._metrics.close()

    # -- safety ----------------------------------------------------------------------------

    def ensure_writable(self) -> None:
        """Refuse (SafetyError) unless context and namespace opt-in are what the campaign says.

        Called before every write, not cached: a namespace can lose its label mid-campaign.
        """
        self._ensure_context()
        if not self._opted_in():
            raise SafetyError(
                f"namespace {self._namespace!r} lacks the label {OPT_IN_LABEL}=true; r2act "
                "refuses to inject or change anything there (opt in with: kubectl label "
                f"namespace {self._namespace} {OPT_IN_LABEL}=true)"
            )

    def _ensure_context(self) -> None:
        if self._context != self._expected_context:
            raise SafetyError(
                f"kubeconfig context {self._context!r} is not the campaign's "
                f"{self._expected_context!r}; r2act refuses to write (fix target.context or "
                "select that context)"
            )

    def _opted_in(self) -> bool:
        try:
            namespace = self._api.read_namespace()
        except NotFoundError as exc:
            raise SafetyError(
                f"namespace {self._namespace!r} does not exist on context {self._context!r}; "
                "r2act refuses to act (create it with deploy/kind/up.sh)"
            ) from exc
        labels = (namespace.get("metadata") or {}).get("labels") or {}
        return bool(labels.get(OPT_IN_LABEL) == "true")

    def may_revert(self) -> bool:
        """Whether reverting r2act's own change may go ahead; True also without the opt-in.

        The opt-in label guards new writes only: a fault or a plan change r2act made stays
        removable after the label was withdrawn (leaving it would be the unsafe choice).
        The context must still be the campaign's. Returns whether the namespace is still
        opted in, so the caller can say what it did without it.
        """
        self._ensure_context()
        return self._opted_in()

    def _note_unopted(self, did: str) -> None:
        self.notices.append(
            f"namespace {self._namespace!r} no longer carries {OPT_IN_LABEL}=true; {did} "
            "anyway (the label guards new writes, not the removal of r2act's own changes)"
        )

    def own_chaos(self, plural: str, ref: ChaosRef) -> dict[str, Any] | None:
        """The live object ``ref`` names, if it exists; ForeignObjectError unless it is ours.

        Checked right before every delete: the managed-by label and the run label.
        """
        try:
            obj = self._api.get_chaos(plural, ref.name)
        except NotFoundError:
            return None
        reason = foreign_reason((obj.get("metadata") or {}).get("labels"), ref)
        if reason is not None:
            raise ForeignObjectError(f"{reason}; r2act leaves it alone")
        return obj

    def _check_chaos(self, chaos: ChaosObject) -> tuple[str, str, dict[str, Any]]:
        """Kind's plural, name and the body to send; refuses anything outside the namespace."""
        kind = str(chaos.get("kind", ""))
        plural = CHAOS_PLURALS.get(kind)
        if plural is None:
            raise PermanentClusterError(
                f"chaos kind {kind!r} is not one r2act injects ({', '.join(CHAOS_PLURALS)})"
            )
        if chaos.get("apiVersion") != f"{CHAOS_GROUP}/{CHAOS_VERSION}":
            raise PermanentClusterError(
                f"chaos object apiVersion {chaos.get('apiVersion')!r} is not "
                f"{CHAOS_GROUP}/{CHAOS_VERSION}"
            )
        body = json.loads(json.dumps(dict(chaos)))
        meta = body.setdefault("metadata", {})
        name = str(meta.get("name") or "")
        if not name:
            raise PermanentClusterError("chaos object has no metadata.name")
        if meta.get("namespace", self._namespace) != self._namespace:
            raise SafetyError(
                f"chaos object {kind}/{name} targets namespace {meta.get('namespace')!r}; r2act "
                f"only acts in {self._namespace!r}"
            )
        selector = (body.get("spec") or {}).get("selector") or {}
        outside = [ns for ns in selector.get("namespaces") or [] if ns != self._namespace]
        if outside:
            raise SafetyError(
                f"chaos object {kind}/{name} selects pods in {outside}; r2act only acts in "
                f"{self._namespace!r}"
            )
        meta["namespace"] = self._namespace
        meta.setdefault("labels", {})[MANAGED_BY_LABEL] = MANAGED_BY
        return plural, name, body

    def _check_namespace(self, ref: ChaosRef) -> None:
        if ref.namespace != self._namespace:
            raise SafetyError(
                f"{ref.kind}/{ref.name} is in namespace {ref.namespace!r}; r2act only acts in "
                f"{self._namespace!r}"
            )

    def _check_ref(self, ref: ChaosRef) -> str:
        if ref.namespace != self._namespace:
            raise SafetyError(
                f"{ref.kind}/{ref.name} is in namespace {ref.namespace!r}; r2act only acts in "
                f"{self._namespace!r}"
            )
        plural = CHAOS_PLURALS.get(ref.kind)
        if plural is None:
            raise PermanentClusterError(f"chaos kind {ref.kind!r} is not one r2act injects")
        return plural

    # -- chaos objects ---------------------------------------------------------------------

    def inject(self, chaos: ChaosObject) -> ChaosRef:
        """Create the Chaos Mesh object (labelled managed-by r2act); ConflictError if it exists.

        A create whose answer was lost but that reached the server counts as created when
        the object found there is the one sent (same spec and labels). A ConfigFault patches
        its Deployment instead (``kube.config_fault``); a FlagFault its flag ConfigMap and
        restarts the flag service (``kube.flag_fault``).
        """
        if chaos.get("kind") == config_fault.KIND:
            return self._inject_config(chaos)
        if chaos.get("kind") == flag_fault.KIND:
            return self._flags.inject(chaos)
        plural, name, body = self._check_chaos(chaos)
        self.ensure_writable()

        def is_ours(existing: dict[str, Any]) -> bool:
            labels = (existing.get("metadata") or {}).get("labels") or {}
            same_spec = bool(strip_server_fields(existing)["spec"] == body.get("spec"))
            return same_spec and labels == body["metadata"]["labels"]

        created = self._api.create_chaos(plural, name, body, is_ours)
        return chaos_ref(created if created.get("metadata") else body, INCIDENT_LABEL)

    # -- ConfigFault ---------------------------------------------------------------------------

    def _inject_config(self, obj: ChaosObject) -> ChaosRef:
        name, spec = parse_config_object(obj)
        meta = obj.get("metadata") or {}
        if meta.get("namespace", self._namespace) != self._namespace:
            raise SafetyError(
                f"ConfigFault {name} targets namespace {meta.get('namespace')!r}; r2act only "
                f"acts in {self._namespace!r}"
            )
        self.ensure_writable()
        deployment = self._api.deployment(str(spec["deployment"]))
        book = config_fault.bookkeeping(deployment)
        if book is not None and book.get("name") == name:  # a retried inject that landed
            return self._config_ref(book)
        patch = config_fault.inject_patch(deployment, obj)
        self._api.patch_deployment(str(spec["deployment"]), patch, JSON_PATCH, "inject into")
        incident = (meta.get("annotations") or {}).get("r2act.io/incident-id") or (
            meta.get("labels") or {}
        ).get(INCIDENT_LABEL)
        run = (meta.get("labels") or {}).get(RUN_LABEL)
        return ChaosRef(
            kind=config_fault.KIND,
            name=name,
            namespace=self._namespace,
            incident_id=None if incident is None else str(incident),
            run_id=None if run is None else str(run),
        )

    def _config_ref(self, book: Mapping[str, Any]) -> ChaosRef:
        incident, run = book.get("incidentId"), book.get("runId")
        return ChaosRef(
            kind=config_fault.KIND,
            name=str(book.get("name")),
            namespace=self._namespace,
            incident_id=None if incident is None else str(incident),
            run_id=None if run is None else str(run),
        )

    def _config_deployment(self, name: str) -> dict[str, Any] | None:
        """The Deployment whose annotation names the ConfigFault ``name``."""
        for deployment in self._api.deployments():
            book = config_fault.bookkeeping(deployment)
            if book is not None and book.get("name") == name:
                return deployment
        return None

    def _config_pods(self, deployment: Mapping[str, Any]) -> list[dict[str, Any]]:
        return selected_pods(deployment, self._api.pods())

    def _config_status(self, ref: ChaosRef) -> ChaosStatus:
        deployment = self._config_deployment(ref.name)
        pods = [] if deployment is None else self._config_pods(deployment)
        return config_fault.status(ref.name, self._namespace, deployment, pods)

    def _remove_config(self, ref: ChaosRef) -> None:
        self.ensure_writable()
        deployment = self._config_deployment(ref.name)
        if deployment is None:
            return
        book = config_fault.bookkeeping(deployment) or {}
        reason = foreign_reason(config_fault.owner_labels(book), ref)
        if reason is not None:
            raise ForeignObjectError(f"{reason}; r2act leaves it alone")
        patch = config_fault.remove_patch(deployment, ref.name)
        if patch is None:
            return
        target = str((deployment.get("metadata") or {}).get("name"))
        self._api.patch_deployment(target, patch, JSON_PATCH, "remove the ConfigFault from")

    def _config_leftovers(self, deployments: Sequence[Mapping[str, Any]]) -> list[ChaosRef]:
        found = []
        for deployment in deployments:
            book = config_fault.bookkeeping(deployment)
            if book is not None and book.get("name"):
                found.append(self._config_ref(book))
        return found

    def chaos_status(self, ref: ChaosRef) -> ChaosStatus:
        """The object's status; ``exists=False`` once it is gone."""
        if ref.kind == config_fault.KIND:
            self._check_namespace(ref)
            return self._config_status(ref)
        if ref.kind == flag_fault.KIND:
            self._check_namespace(ref)
            return self._flags.status(ref)
        plural = self._check_ref(ref)
        try:
            obj = self._api.get_chaos(plural, ref.name)
        except NotFoundError:
            return ChaosStatus(kind=ref.kind, name=ref.name, exists=False)
        return chaos_status(obj)

    def injection_confirmed(self, ref: ChaosRef) -> bool:
        """Selected, AllInjected, every record Injected and every recorded pod still there.

        Chaos Mesh keeps records of deleted pods as Injected while the experiment runs, so
        the status alone over-reports; the pods must still exist.
        """
        status = self.chaos_status(ref)
        return status.exists and status.injected(self.pod_names())

    def remove(self, ref: ChaosRef, timeout_s: float = 60.0) -> None:
        """Delete the object and wait (bounded) until its finalizer lets it go; never force.

        Raises PermanentClusterError with the object's finalizers, phase and the records
        still injected when it outlives ``timeout_s``. A ConfigFault is undone by patching
        its Deployment back (only if the annotation still names it).
        """
        if ref.kind == config_fault.KIND:
            self._check_namespace(ref)
            self._remove_config(ref)
            return
        if ref.kind == flag_fault.KIND:
            self._check_namespace(ref)
            self._flags.remove(ref)
            return
        plural = self._check_ref(ref)
        opted_in = self.may_revert()
        if self.own_chaos(plural, ref) is None:
            return
        try:
            self._api.delete_chaos(plural, ref.name)
        except NotFoundError:
            return
        if not opted_in:
            self._note_unopted(f"removed r2act's own {ref.kind}/{ref.name}")
        deadline = self._clock.now() + timeout_s
        while True:
            try:
                obj = self._api.get_chaos(plural, ref.name)
            except NotFoundError:
                return
            if self._clock.now() >= deadline:
                raise PermanentClusterError(
                    f"{ref.kind}/{ref.name} still exists {timeout_s:g}s after deletion; r2act "
                    "does not force it (that skips Chaos Mesh's recovery and can leave tc "
                    "rules, stress processes or a patched resolv.conf behind). State: "
                    f"{stuck_deletion_detail(obj)}. Inspect: kubectl -n {self._namespace} "
                    f"describe {plural} {ref.name}"
                )
            self._clock.sleep(self._poll)

    def leftovers(self) -> list[ChaosRef]:
        """Every chaos object labelled managed-by r2act in the namespace, of every kind, and
        every ConfigFault and FlagFault a Deployment's annotation names."""
        found: list[ChaosRef] = []
        selector = f"{MANAGED_BY_LABEL}={MANAGED_BY}"
        for plural in CHAOS_PLURALS.values():
            for obj in self._list_chaos(plural, selector):
                found.append(chaos_ref(obj, INCIDENT_LABEL))
        deployments = self._api.deployments()
        return found + self._config_leftovers(deployments) + self._flags.leftovers(deployments)

    def _list_chaos(self, plural: str, selector: str) -> list[dict[str, Any]]:
        try:
            items = self._api.list_chaos(plural, selector)
        except NotFoundError as exc:
            raise PermanentClusterError(
                f"Chaos Mesh does not serve {plural}.{CHAOS_GROUP}/{CHAOS_VERSION}; install it "
                "(deploy/kind/up.sh)"
            ) from exc
        # Never trust a server-side selector for what r2act may delete.
        return [
            obj
            for obj in items
            if ((obj.get("metadata") or {}).get("labels") or {}).get(MANAGED_BY_LABEL) == MANAGED_BY
        ]

    # -- reads -----------------------------------------------------------------------------

    def pod_names(self) -> set[str]:
        """Pods that exist and are not being deleted."""
        return {
            str(p["metadata"]["name"])
            for p in self._api.pods()
            if not (p.get("metadata") or {}).get("deletionTimestamp")
        }

    def pod_nodes(self) -> dict[str, str]:
        """Node of every scheduled pod of the namespace (lanes must not share nodes)."""
        return {
            str(p["metadata"]["name"]): str(node)
            for p in self._api.pods()
            if (node := (p.get("spec") or {}).get("nodeName"))
        }

    def state(self) -> ClusterState:
        """Deployments and pods now."""
        ts = self._clock.now()
        return ClusterState(
            ts=ts,
            namespace=self._namespace,
            deployments=[deployment_state(d) for d in self._api.deployments()],
            pods=[pod_state(p, self._label) for p in self._api.pods()],
        )

    def _read_log(
        self, pod: str, container: str, since_s: int, previous: bool
    ) -> list[tuple[float, str]]:
        try:
            data = self._api.pod_log(pod, container, since_s, previous)
        except PermanentClusterError:  # 403 is a SafetyError and propagates
            return []  # pod gone, container not started yet, no previous instance
        lines = []
        for raw in data.decode("utf-8", "replace").splitlines():
            parsed = split_log_line(raw)
            if parsed is not None:
                lines.append(parsed)
        return lines

    def logs(self, window: TimeWindow) -> Iterator[Sequence[LogLine]]:
        """Each container's lines in the window, one batch per container.

        Asks the kubelet for timestamps and only the recent past (``since_seconds``), and
        also for the previous instance of a container that restarted, since a crash or
        OOM kill is exactly what the window is about. Pods already deleted are gone.
        """
        since = max(1, math.ceil(self._clock.now() - window.start) + 1)
        for pod in self._api.pods():
            meta = pod.get("metadata") or {}
            name = str(meta.get("name", ""))
            service = pod_app(meta, self._label)
            statuses = {
                s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or []
            }
            for container in (pod.get("spec") or {}).get("containers") or []:
                cname = str(container.get("name", ""))
                status = statuses.get(cname) or {}
                restarted = bool((status.get("lastState") or {}).get("terminated")) or bool(
                    status.get("restartCount")
                )
                found: list[tuple[float, str]] = []
                if restarted:
                    found.extend(self._read_log(name, cname, since, previous=True))
                found.extend(self._read_log(name, cname, since, previous=False))
                batch = [
                    LogLine(ts, name, cname, service, line)
                    for ts, line in sorted(found, key=lambda x: x[0])
                    if window.start <= ts <= window.end
                ]
                if batch:
                    yield batch

    def events(self, window: TimeWindow) -> list[KubeEvent]:
        """core/v1 events of the namespace last seen within the window, oldest first."""
        parsed = [e for e in (kube_event(i) for i in self._api.events()) if e is not None]
        return sorted((e for e in parsed if window.start <= e.ts <= window.end), key=lambda e: e.ts)

    def metrics(
        self, window: TimeWindow, queries: Mapping[str, str], step_s: float
    ) -> Iterator[MetricSeries]:
        """Range-query each named PromQL query over the window at the campaign's step."""
        if not queries:
            return iter(())
        if self._metrics is None:
            raise PermanentClusterError("no Prometheus configured for this cluster")
        return self._metrics.query_range(window, queries, step_s)

    def _probe(self, path: str) -> bool:
        """GET a path of the entry point through the API server's service proxy."""
        entry = self._topology.deployment(self._topology.entrypoint)
        port = entry.service_port or self._topology.entrypoint_port
        try:
            self._api.proxy_get(f"{entry.name}:{port}", path)
        except SafetyError:
            raise
        except R2actError:
            return False
        return True

    def _probe_route(self, probe: oracle.Probe) -> float:
        """Send one oracle probe; 0.0 when it succeeded, 1.0 when it failed."""
        entry = self._topology.deployment(self._topology.entrypoint)
        port = entry.service_port or self._topology.entrypoint_port
        started = time.perf_counter()
        service = f"{entry.name}:{port}"
        if probe.encoding == "json" and probe.form:
            status = self._api.proxy_request(
                service, probe.method, probe.path, json_body=probe.json_body()
            )
        else:
            status = self._api.proxy_request(service, probe.method, probe.path, probe.form)
        took_ms = (time.perf_counter() - started) * 1000.0
        return 0.0 if oracle.request_ok(status, took_ms) else 1.0

    def health(self) -> HealthReport:
        """One probe round of the shared oracle (``cluster.oracle``) through the API proxy:
        every entry-point route once, the health endpoint, deployment availability."""
        ts = self._clock.now()
        unavailable = [
            d.name
            for d in map(deployment_state, self._api.deployments())
            if d.available_replicas < d.replicas
        ]
        healthz = self._probe(self._topology.health_path)
        failures = {p.scope: self._probe_route(p) for p in oracle.probes(self._topology)}
        return oracle.judge(
            ts,
            healthz_ok=healthz,
            unavailable=unavailable,
            failures=failures,
            threshold=self._error_rate_threshold,
        )

    def preflight(self, metric_queries: Mapping[str, str]) -> PreflightReport:
        """Opt-in and context first (SafetyError), then readiness, health, leftovers, metrics."""
        self.ensure_writable()
        deployments = [deployment_state(d) for d in self._api.deployments()]
        not_ready = sorted(d.name for d in deployments if d.available_replicas < d.replicas)
        metrics_ok = (
            self._metrics.reachable(metric_queries)
            if self._metrics is not None
            else not metric_queries
        )
        return PreflightReport(
            deployments_ready=not not_ready and bool(deployments),
            not_ready=not_ready,
            frontend_healthy=self._probe(self._topology.health_path),
            leftovers=self.leftovers(),
            metrics_reachable=metrics_ok,
        )


TRACE_FLUSH_S = 10.0
"""Seconds a finished span may take to reach the store: an SDK's batch span processor
exports every 5 s by default (``OTEL_BSP_SCHEDULE_DELAY`` = 5000 ms,
opentelemetry-specification ``specification/configuration/sdk-environment-variables.md``),
then the collector's and Jaeger's batch processors wait up to 200 ms each (their default
``timeout``); doubled for the export calls themselves and a loaded node (an assumption:
nobody publishes an end-to-end bound)."""


class TracedKubeCluster(KubeCluster):
    """A KubeCluster whose campaign collects spans: a ``TraceSource`` whose preflight also
    checks the trace store.

    The store is the manifest's ``traces.store`` URL when it names one, else the system's
    own Jaeger query service (``System.trace_store``) reached through the API server's
    service proxy, so a kind test bed needs no port-forward.
    """

    def __init__(
        self,
        api_client: Any,
        *,
        store_url: str | None = None,
        trace_limit: int = 500,
        trace_recent_s: float = 120.0,
        trace_flush_s: float = TRACE_FLUSH_S,
        **options: Any,
    ) -> None:
        """``trace_recent_s``: how recent a span preflight must find (the load generator
        runs without pause, so two minutes without one means spans are not arriving).
        ``trace_flush_s``: how long after a window's end its last spans may still be on
        their way to the store (``TRACE_FLUSH_S``)."""
        super().__init__(api_client, **options)
        self._trace_flush_s = trace_flush_s
        retry = options.get("retry") or RetryPolicy()
        timeout = float(options.get("request_timeout_s", 30.0))
        self._trace_recent_s = trace_recent_s
        self._emitters: Collection[str] = frozenset(system_of(self._topology).services)
        if store_url:
            http = HttpGet(store_url, timeout_s=timeout)
            self._traces = JaegerTraces(
                http, where=store_url, retry=retry, limit=trace_limit, close=http.close
            )
            return
        store = system_of(self._topology).trace_store
        if store is None:
            raise PermanentClusterError(
                f"system {self._topology.system!r} declares no trace store; set the "
                "manifest's traces.store to a Jaeger query URL or drop its traces section"
            )
        service = f"{store.service}:{store.port}"
        prefix = store.base_path.rstrip("/")

        def get(path: str, query: Sequence[tuple[str, str]]) -> bytes:
            return self._api.service_get(service, prefix + path, query)

        where = f"services/{service}/proxy{prefix} in namespace {self._namespace!r}"
        self._traces = JaegerTraces(get, where=where, retry=retry, limit=trace_limit)

    @property
    def trace_store(self) -> str:
        """Where the spans are read (the URL, or the proxied service), for provenance."""
        return self._traces.where

    def close(self) -> None:
        """Release connection pools, the trace store's too."""
        super().close()
        self._traces.close()

    def traces(self, window: TimeWindow, sample: float) -> Iterator[Sequence[Span]]:
        """Every span of a kept trace that started in the window, in batches.

        Waits first until ``trace_flush_s`` have passed since the window's end (at once
        for a window that ended longer ago), so the spans of its last seconds, still in
        the SDKs' and the collector's batches, have reached the store."""
        late = window.end + self._trace_flush_s - self._clock.now()
        if late > 0:
            self._clock.sleep(late)
        return self._traces.traces(window, sample)

    def preflight(self, metric_queries: Mapping[str, str]) -> PreflightReport:
        """KubeCluster's checks, plus: the trace store answers and holds a recent span of
        one of the system's services."""
        report = super().preflight(metric_queries)
        problem = self._traces.receiving(self._emitters, self._clock.now(), self._trace_recent_s)
        return report.model_copy(update={"traces_problem": problem})


def connect_kubernetes(
    target: Any,
    *,
    namespace: str,
    workspace: Path | None = None,
    metric_queries: Mapping[str, str] | None = None,
    reverting: bool = False,
    traces: TracesConfig | None = None,
    **options: Any,
) -> KubeCluster:
    """The ``kind: kubernetes`` branch of ``r2act.cluster.connect.connect``.

    ``workspace`` and ``metric_queries`` are accepted for the factory's common signature;
    the queries are checked by ``preflight``. The namespace must be the target's own, and
    the safety check (context, opt-in label) runs here, so a campaign pointed at the wrong
    place stops before it plans anything on the cluster. ``reverting`` (``r2act cleanup``)
    only checks the context: removing r2act's own objects needs no opt-in. ``traces`` (the
    manifest's ``TracesConfig``, if any) makes it a ``TracedKubeCluster``; cleanup reads
    no spans.
    """
    del workspace, metric_queries
    if namespace != target.namespace:
        raise SafetyError(
            f"namespace {namespace!r} differs from the target's {target.namespace!r}; r2act "
            "acts only in the namespace the campaign's target names"
        )
    if traces is not None and not reverting:
        cluster: KubeCluster = TracedKubeCluster.from_target(
            target, store_url=traces.store, **options
        )
    else:
        cluster = KubeCluster.from_target(target, **options)
    if reverting:
        cluster.may_revert()  # the context must match; a withdrawn opt-in is said later
    else:
        cluster.ensure_writable()
    return cluster


if TYPE_CHECKING:

    def _conforms(cluster: KubeCluster) -> Cluster:
        """mypy proves KubeCluster implements the Cluster protocol."""
        return cluster

    def _traces_conform(cluster: TracedKubeCluster) -> TraceSource:
        """mypy proves TracedKubeCluster implements the TraceSource protocol."""
        return cluster
