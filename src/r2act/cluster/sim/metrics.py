"""cAdvisor and kube-state-metrics series, answered from scenes as Prometheus would.

The simulator does not evaluate PromQL. It recognises the metric name inside a query
(``promql``), applies the query's equality / inequality / regex label matchers, turns
counters into per-second rates when the query wraps them in ``rate``/``irate``, and honours
an outer ``sum by (...)`` / ``sum(...)``. That covers the manifest's default queries and the usual
hand-written ones; anything else yields no series, as an unknown metric would.

Series carry the labels a kube-prometheus-stack scrape gives them. cAdvisor series
(kubelet ``/metrics/cadvisor``) name the container instance (``id``, ``name``, ``image``)
beside the scrape's target labels, so a restarted container is a new series whose
counters start again from zero, and a container that is not running (waiting out its
restart back-off) has no series at all: Prometheus marks it stale. kube-state-metrics
series carry the pod's ``uid``; pod-level ones (``kube_pod_status_*``) have no
``container``; ``phase`` and ``condition`` are emitted for every value, 0 or 1.

With a background (``noise: realistic | heavy``, ``metric_noise``) cAdvisor series carry a
healthy container's noise, each series type its own; without one (``noise: none``) they
are the expected values with a uniform +-4 % jitter, the clean room of regression tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping

from r2act.cluster.sim.identity import PAUSE_IMAGE, container_id, pod_uid
from r2act.cluster.sim.metric_noise import (
    CPU_PER_SERVICE_MS,
    Background,
    ContainerLoad,
    MetricBackground,
)
from r2act.cluster.sim.promql import LabelKey, Query, Sample, SumBy, matches, parse_query
from r2act.cluster.sim.scene import Scene
from r2act.cluster.sim.seeding import key_int
from r2act.cluster.sim.timeline import STARTUP_S, PodTimeline
from r2act.cluster.sim.traffic import IDLE_CORES, service_ms
from r2act.schema import MetricSeries, TimeWindow, Topology, cpu_millicores, memory_bytes

NODE = "sim-worker"
NODE_CORES = 4.0
"""CPU a container without a CPU limit may use: the simulated node's cores. An assumption
(a kind node on a 4-core workstation), not measured; only systems whose manifests set no CPU
limit read it (with a limit, the limit caps a container)."""
"""The node every simulated pod runs on (as the scheduler's events say)."""
KUBELET_TARGET = {
    "endpoint": "https-metrics",
    "instance": "172.18.0.2:10250",
    "job": "kubelet",
    "metrics_path": "/metrics/cadvisor",
    "node": NODE,
    "service": "kps-kube-prometheus-kubelet",
}
"""Target labels of the kubelet's cAdvisor endpoint as kube-prometheus-stack (release
``kps``, deploy/kind/up.sh) scrapes it."""
PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
CONDITIONS = ("true", "false", "unknown")

_Value = Callable[[str, bool, "_Instant", Scene, dict[str, str]], float | list[Sample] | None]
"""A pod's value of a metric: (metric, rate, its instant, the scene, its labels)."""


class _Labelled:
    """A labels dict of one range query (a pod's, or one ``_with`` derived), matched and
    sorted once: whether it passes the query's matchers, its label key, and the list of
    its series' points, found in the query's points the first time a point is added."""

    __slots__ = ("keep", "key", "labels", "points")

    def __init__(self, labels: dict[str, str], matchers: tuple[tuple[str, str, str], ...]) -> None:
        self.labels = labels
        self.keep = matches(labels, matchers)
        self.key: LabelKey = tuple(sorted(labels.items()))
        self.points: list[tuple[float, float]] | None = None

    def point(
        self, points: dict[LabelKey, list[tuple[float, float]]], t: float, value: float
    ) -> None:
        """Add (t, value) to this key's series in ``points`` (created there if new: the
        query's series keep the order their first points came in)."""
        found = self.points
        if found is None:
            found = points.get(self.key)
            if found is None:
                found = points[self.key] = []
            self.points = found
        found.append((t, value))


class _Instant:
    """A scraped pod's container state at one step, shared by every query of a range query.

    A manifest's queries all ask the same pods at the same steps, and each timeline
    predicate (``waiting``, ``paused``, ``restart_count``, ``active``) scans the pod's
    interval lists when asked; asking each once per (pod, step) instead of once per sample
    removed a good part of the per-sample cost. ``load`` is the background's
    ``ContainerLoad``, built the first time a query needs it. ``pod_text``, ``restarts_text``
    and ``t_text`` are the ``repr`` of the pod's name, its restart count and the instant:
    the parts of the background's draw keys (``_key_text``), formatted once per pod and
    step instead of once per draw (the instant's once per step). ``share`` and ``calls``
    are the pod's part of its service's traffic, which three series types read."""

    __slots__ = (
        "calls",
        "image",
        "instance_key",
        "line",
        "load",
        "paused",
        "pod_key",
        "pod_text",
        "restarts",
        "restarts_text",
        "share",
        "stressed",
        "t_text",
        "waiting",
    )

    def __init__(self, line: PodTimeline, scene: Scene, t_text: str) -> None:
        t = scene.t
        self.line = line
        view = scene.services.get(line.pod.app)
        self.share = 1.0 / len(view.ready) if view and line.pod.name in view.ready else 0.0
        """The pod's share of its service's calls (its ready share), 0 when not ready: every
        cAdvisor query but memory's asks it, once per (pod, step) here."""
        self.calls = scene.received.get(line.pod.app, 0.0) * self.share
        """Calls the pod receives per second (its share of the service's received calls)."""
        self.waiting = line.waiting(t)
        self.paused = line.paused(t)
        self.restarts = line.restart_count(t)
        self.stressed = bool(line.active(t, "cpu"))
        self.load: ContainerLoad | None = None
        name = line.pod.name
        self.pod_key = name
        """The pod's labels' key in a query's cache (``_samples``): its name."""
        self.instance_key = name if self.restarts == 0 else f"{name}#{self.restarts}"
        """A cAdvisor series' key there: the container instance's (a restart is new)."""
        self.image = PAUSE_IMAGE if self.paused else line.facts.image
        """The image cAdvisor names: a pod-failure's pause image while it lasts."""
        self.pod_text = repr(line.pod.name)
        self.restarts_text = repr(self.restarts)
        self.t_text = t_text


def _key_text(*reprs: str) -> str:
    """``str`` of the tuple whose items have these ``repr``s (a tuple of two items or more
    formats as its items' ``repr``s, comma-separated, in parentheses): the text
    ``seeding.Reseeder`` hashes for that tuple key, built from parts formatted earlier."""
    return "(" + ", ".join(reprs) + ")"


def _scraped(scene: Scene) -> list[_Instant]:
    """The pods a scrape at ``scene.t`` sees (existing for 5 s at least), in scene order."""
    t = scene.t
    t_text = repr(t)  # the same for every pod of the step
    return [
        _Instant(line, scene, t_text)
        for line in scene.timelines.values()
        if line.pod.exists(t) and not t < line.pod.created_at + 5.0
    ]


class MetricSource:
    """Computes series of the known metrics from scenes."""

    def __init__(
        self,
        topology: Topology,
        seed: int,
        namespace: str,
        background: MetricBackground | None = None,
    ) -> None:
        self.topology, self.seed, self.namespace = topology, seed, namespace
        self.background = None if background is None else Background(background, seed)
        self.requests = {d.name: memory_bytes(d.main.memory_request) for d in topology.deployments}
        self.working_sets = {
            d.name: topology.working_set_bytes(d.name) for d in topology.deployments
        }
        self.cpu_limit = {  # no limit ("0"): the node's cores cap the container
            d.name: cpu_millicores(d.main.cpu_limit) / 1000 or NODE_CORES
            for d in topology.deployments
        }
        self.cpu_unlimited = {
            d.name for d in topology.deployments if not cpu_millicores(d.main.cpu_limit)
        }
        self.cpu_request = {
            d.name: cpu_millicores(d.main.cpu_request) / 1000 for d in topology.deployments
        }
        self.language = {d.name: d.language for d in topology.deployments}
        self.service_ms = service_ms(topology)
        self.container = {d.name: d.main.name for d in topology.deployments}
        self._phase: dict[tuple[str, str], int] = {}
        self._derived: dict[tuple[int, LabelKey], tuple[dict[str, str], dict[str, str]]] = {}
        self._deployments: dict[str, dict[str, str]] = {}
        self._label_sets: dict[tuple[str, str, int, str], dict[str, str]] = {}

    def series(
        self,
        window: TimeWindow,
        queries: Mapping[str, str],
        step_s: float,
        *,
        scene_at: Callable[[float], Scene],
        gaps: list[tuple[float, float]],
        replicas: Mapping[str, int],
    ) -> Iterator[MetricSeries]:
        """Range-query every query over ``window`` at ``step_s``."""
        step = max(1.0, float(step_s))
        first = math.ceil(window.start / step) * step
        steps = [first + i * step for i in range(int((window.end - first) // step) + 1)]
        steps = [t for t in steps if not any(a <= t < b for a, b in gaps)]
        scenes = [scene_at(t) for t in steps]  # one per step, shared by every query
        pods_at = [_scraped(scene) for scene in scenes]
        self._derived = {}
        for name, promql in queries.items():
            query = parse_query(promql)
            if query is None:
                continue
            points: dict[LabelKey, list[tuple[float, float]]] = {}
            pods: dict[object, _Labelled] = {}
            value_of = self._value_of(query.metric)
            groups = SumBy(query.group) if query.group is not None else None
            for t, scene, scraped in zip(steps, scenes, pods_at, strict=True):
                into = None if groups is not None else (points, t)
                samples = self._samples(
                    query, scene, scraped, replicas, pods, value_of=value_of, into=into
                )
                if groups is not None:
                    for key, value in groups.totals(samples):
                        found = points.get(key)
                        if found is None:
                            points[key] = [(t, value)]
                        else:
                            found.append((t, value))
                    continue
                for labels, value in samples:
                    known = pods.get(id(labels))
                    if known is None or known.labels is not labels:
                        # labels of their own (``_with``, ``_deployment``): matched once;
                        # the entry holds them, so their id stays their own
                        known = pods[id(labels)] = _Labelled(labels, query.matchers)
                    if known.keep:  # ``known.point(points, t, value)``, inlined
                        found = known.points
                        if found is None:
                            found = known.points = points.setdefault(known.key, [])
                        found.append((t, value))
            for key, values in points.items():
                yield MetricSeries(name, dict(key), values)

    def _samples(
        self,
        query: Query,
        scene: Scene,
        scraped: list[_Instant],
        replicas: Mapping[str, int],
        pods: dict[object, _Labelled],
        *,
        value_of: _Value,
        into: tuple[dict[LabelKey, list[tuple[float, float]]], float] | None = None,
    ) -> list[Sample]:
        """Every scraped pod's value at ``scene.t``; ``pods`` caches each pod's labels for
        the query, ``value_of`` is ``_value_of(query.metric)`` (resolved once per query).

        With ``into`` (a query's points by label key and the step's time, when it is not
        summed), a value of a pod's own labels goes straight into its series there (if they
        pass the matchers; at the step's time, which the scene's may round)
        instead of being returned: ``series`` would only look its labels up again to put
        it there. Values with labels of their own (lists: ``_with``) are returned."""
        metric, t = query.metric, scene.t
        if metric.startswith("kube_deployment_"):
            return self._deployment(metric, scene, replicas)
        points, step_t = into if into is not None else (None, t)
        out: list[Sample] = []
        rate, summed = query.rate, query.group is not None
        cadvisor = metric.startswith("container_")
        imaged = cadvisor and not metric.startswith("container_network_")
        """Labels naming the container's image (cAdvisor's, but a network series' sandbox)."""
        noisy = not (metric.endswith("_total") and not rate) and self.background is None
        for now in scraped:
            if cadvisor and now.waiting:
                continue  # no cgroup while the container waits out its back-off: stale
            known = pods.get(now.instance_key if cadvisor else now.pod_key)
            if imaged and known is not None and known.labels["image"] != now.image:
                known = None
            if known is None:
                instance = now.restarts if cadvisor else 0
                labels = self._labels(metric, now.line, t, instance)
                key = now.instance_key if cadvisor else now.pod_key
                known = pods[key] = pods[id(labels)] = _Labelled(labels, query.matchers)
            labels = known.labels
            if summed and not known.keep:
                continue
            value = value_of(metric, rate, now, scene, labels)
            if value is None:
                continue
            if isinstance(value, list):
                out.extend(value)
                continue
            if noisy:
                value *= self._noise(metric, now.line.pod.name, t)
            if points is None:
                out.append((labels, value))
            elif known.keep:  # ``known.point(points, step_t, value)``, inlined: per sample
                found = known.points
                if found is None:
                    found = known.points = points.setdefault(known.key, [])
                found.append((step_t, value))
        return out

    def _with(self, labels: dict[str, str], *extra: tuple[str, str]) -> dict[str, str]:
        """``labels`` and ``extra`` (a ``reason``, a ``phase``...), the same dict at every step
        of a range query, so that ``series`` matches and sorts it once, not once per sample.
        Keyed by the id of ``labels``, which the entry keeps alive: no other dict gets it."""
        key = (id(labels), extra)
        found = self._derived.get(key)
        if found is None:
            found = self._derived[key] = (labels, {**labels, **dict(extra)})
        return found[1]

    def _image(self, line: PodTimeline, t: float) -> str:
        return PAUSE_IMAGE if line.paused(t) else line.facts.image

    def _labels(self, metric: str, line: PodTimeline, t: float, instance: int) -> dict[str, str]:
        """``_labels_of``, one dict per (kind of label set, pod, instance, image): each query
        built its own for every pod (and each window again), while the label sets of the
        cAdvisor queries, of the network ones and of most KSM ones are the same. Callers
        never change a labels dict, so one is shared. Bounded like ``Background``'s."""
        kind = _label_kind(metric)
        image = self._image(line, t) if kind == "cadvisor" else ""
        key = (kind, line.pod.name, instance, image)
        found = self._label_sets.get(key)
        if found is None:
            if len(self._label_sets) > 4096:
                self._label_sets.clear()
            found = self._label_sets[key] = self._labels_of(metric, line, t, instance)
        return found

    def _labels_of(self, metric: str, line: PodTimeline, t: float, instance: int) -> dict[str, str]:
        """A pod's labels for ``metric``: cAdvisor's per container instance, KSM's per pod."""
        pod = line.pod
        uid = pod_uid(pod.name)
        container = self.container.get(pod.app, "server")
        if metric.startswith("kube_pod_status_"):
            return {"namespace": self.namespace, "pod": pod.name, "uid": uid}
        if metric.startswith("kube_"):
            labels = {"namespace": self.namespace, "pod": pod.name, "uid": uid}
            labels["container"] = container
            if metric.startswith("kube_pod_container_resource_"):
                labels["node"] = NODE
            return labels
        slice_ = f"kubelet-kubepods-burstable-pod{uid.replace('-', '_')}.slice"
        cgroup = f"/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/{slice_}"
        labels = {**KUBELET_TARGET, "namespace": self.namespace, "pod": pod.name}
        if metric.startswith("container_network_"):
            sandbox = container_id(self.seed, pod.name, "sandbox")
            labels.update(
                id=f"{cgroup}/cri-containerd-{sandbox}.scope",
                image="registry.k8s.io/pause:3.10",
                interface="eth0",
                name=sandbox,
            )
            return labels
        cid = container_id(self.seed, pod.name, instance)
        labels.update(
            container=container,
            id=f"{cgroup}/cri-containerd-{cid}.scope",
            image=self._image(line, t),
            name=cid,
        )
        return labels

    def _noise(self, metric: str, pod: str, t: float) -> float:
        if metric.startswith("kube_"):
            return 1.0
        h = self._phase.get((metric, pod))
        if h is None:
            h = self._phase[(metric, pod)] = key_int(self.seed, metric, pod) % 10_000
        u = math.sin((t / 15.0 + h) * 12.9898) * 43758.5453
        return 0.96 + 0.08 * (u - math.floor(u))

    def _cores(self, now: _Instant, scene: Scene) -> float:
        line = now.line
        app = line.pod.app
        limit = self.cpu_limit.get(app, 0.2)
        if now.waiting or now.paused:
            return 0.0
        if now.stressed:
            return limit * 0.98
        busy = now.calls * self.service_ms.get(app, 3.0) / 1000
        busy *= CPU_PER_SERVICE_MS
        idle = IDLE_CORES.get(self.language.get(app, "go"), 0.003)
        if app == self.topology.load_generator:
            busy = sum(v.rate for v in scene.routes.values()) * 0.01
        return min(limit, idle + busy)

    def _load(self, now: _Instant, scene: Scene) -> ContainerLoad:
        """What the background of the pod's container depends on at ``scene.t`` (built
        once per pod and step: every cAdvisor query asks for it)."""
        found = now.load
        if found is None:
            found = now.load = self._new_load(now, scene)
        return found

    def _new_load(self, now: _Instant, scene: Scene) -> ContainerLoad:
        line = now.line
        app, t = line.pod.app, scene.t
        calls = now.calls
        cost = self.service_ms.get(app, 3.0) * CPU_PER_SERVICE_MS
        if app == self.topology.load_generator:
            calls, cost = sum(v.rate for v in scene.routes.values()), 10.0
        return ContainerLoad(
            language=self.language.get(app, "go"),
            calls_s=calls,
            cost_ms=cost,
            limit_cores=self.cpu_limit.get(app, 0.2),
            working_set=self.working_sets.get(app, 64 * 2**20),
            age_s=t - _instance_start(line, t),
        )

    def _cpu_seconds(self, line: PodTimeline, scene: Scene) -> float:
        """The CPU counter of the running container instance: idle-and-traffic baseline
        since it started plus stress time (each instance counts from zero)."""
        t, pod = scene.t, line.pod
        born = _instance_start(line, t)
        baseline = IDLE_CORES.get(self.language.get(pod.app, "go"), 0.003) * 2
        stressed = 0.0
        for active in line.faults:
            if active.fault.effect == "cpu":
                stressed += max(0.0, min(t, active.end) - max(born, active.start))
        limit = self.cpu_limit.get(pod.app, 0.2)
        return baseline * (t - born) + (limit - baseline) * stressed

    def _working_set(self, now: _Instant, t: float, scene: Scene | None = None) -> float:
        """cAdvisor's working set: 92-100% of the image's working set under load
        (``Topology.working_set_bytes``), so the peak a method reads is the figure a new
        limit must clear; capped just under the pod's limit, where the kernel reclaims. A
        memory leak (``_leaked``) adds what the running instance has kept so far."""
        line = now.line
        app = line.pod.app
        peak = self.working_sets.get(app, 64 * 2**20)
        if now.paused:
            return 3.1e5  # the pause binary of a pod-failure
        if self.background is not None and scene is not None:
            load = self._load(now, scene)
            base = self.background.working_set(load, line.pod.name, now.restarts, t)
        else:
            base = peak * (self._noise("ws", line.pod.name, t) - 0.04)
        for active in line.active(t, "memory"):
            base += active.fault.memory_bytes
        base += _leaked(line, t)
        return min(base, line.pod.memory_limit * 0.995)

    def _value_of(self, metric: str) -> _Value:
        """The method giving a pod's value of ``metric`` (None for an unknown metric).

        Resolved once per query: the metric's name was tested against each known one for
        every sample before, a chain a kube-state-metrics sample walked to its end."""
        if metric == "container_cpu_usage_seconds_total":
            return self._cpu_usage
        if metric in ("container_memory_working_set_bytes", "container_memory_usage_bytes"):
            return self._memory
        if metric == "container_memory_rss":
            return self._rss
        if metric.startswith("container_network_"):
            return self._network_of(metric)
        if metric in (
            "container_cpu_cfs_throttled_periods_total",
            "container_cpu_cfs_periods_total",
        ):
            return self._cfs_periods
        others: dict[str, _Value] = {
            "container_oom_events_total": self._oom_events,
            "kube_pod_container_status_restarts_total": self._restarts,
            "kube_pod_container_status_ready": self._container_ready,
            "kube_pod_status_ready": self._pod_ready,
            "kube_pod_container_status_last_terminated_reason": self._terminated,
            "kube_pod_container_status_waiting_reason": self._waiting,
            "kube_pod_container_resource_limits": self._resources,
            "kube_pod_container_resource_requests": self._resources,
            "kube_pod_status_phase": self._phase_value,
        }
        return others.get(metric, self._unknown)

    def _unknown(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> None:
        """An unknown metric's value: none (no series, as Prometheus answers for one)."""
        return None

    def _cpu_usage(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> float:
        if not rate:
            return self._cpu_seconds(now.line, scene)
        cores = self._cores(now, scene)
        if self.background is None or cores == 0.0 or now.stressed:
            return cores
        pod = now.line.pod
        idle = IDLE_CORES.get(self.language.get(pod.app, "go"), 0.003)
        key = _key_text(now.pod_text, now.restarts_text, now.t_text)  # (pod, restarts, t)
        return self.background.cpu_cores(cores, idle, self._load(now, scene), key)

    def _memory(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> float:
        return self._working_set(now, scene.t, scene)

    def _rss(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> float:
        return self._working_set(now, scene.t, scene) * 0.85

    def _network_of(self, metric: str) -> _Value:
        """The value method of one network metric: what its name decides (direction,
        bytes or packets, errors) and its draw key's start, worked out once per query
        instead of once per sample."""
        per_call = 1500.0 if "receive" in metric else 4000.0
        packets = "packets" in metric
        idle = "errors" in metric or "dropped" in metric
        metric_text = repr(metric)
        background = self.background

        def value(
            metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
        ) -> float:
            if idle:
                per_s = 0.0
            elif rate and background is not None and not packets:
                load = self._load(now, scene)
                key = _key_text(metric_text, now.pod_text, now.t_text)  # (metric, pod, t)
                return background.network_rate(2000.0, per_call, load, key)
            else:
                per_s = 2000.0 + now.calls * per_call
                if packets:
                    per_s /= 900.0
            # counters: the rate over the pod's age
            return per_s if rate else per_s * (scene.t - now.line.pod.created_at)

        return value

    def _cfs_periods(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> float:
        line, t = now.line, scene.t
        periods = 10.0
        if metric == "container_cpu_cfs_throttled_periods_total":
            periods = 9.6 if now.stressed else 0.02
            if self.background is not None:
                if not now.stressed:
                    periods = self.background.throttled_per_s(self._load(now, scene))
                if rate:
                    key = _key_text(repr(metric), now.pod_text, now.restarts_text, now.t_text)
                    return self.background.count_rate(periods, key)
        return periods if rate else periods * (t - _instance_start(line, t))

    def _oom_events(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> float:
        t = scene.t
        count = sum(1 for ts, reason in now.line.restarts if ts <= t and reason == "OOMKilled")
        return 0.0 if rate else float(count)

    def _restarts(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> float:
        return float(now.restarts)

    def _container_ready(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> float:
        return float(now.line.ready(scene.t))

    def _pod_ready(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> list[Sample]:
        ready = "true" if now.line.ready(scene.t) else "false"
        return [(self._with(labels, ("condition", c)), float(c == ready)) for c in CONDITIONS]

    def _terminated(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> list[Sample] | None:
        reason = now.line.last_reason(scene.t)
        return None if reason is None else [(self._with(labels, ("reason", reason)), 1.0)]

    def _waiting(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> list[Sample] | None:
        if not now.waiting:
            return None
        return [(self._with(labels, ("reason", "CrashLoopBackOff")), 1.0)]

    def _resources(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> list[Sample]:
        pod = now.line.pod
        app = pod.app
        limits = metric.endswith("limits")
        mem = float(pod.memory_limit if limits else self.requests.get(app, 0))
        cpu = (self.cpu_limit if limits else self.cpu_request).get(app, 0.1)
        memory = self._with(labels, ("resource", "memory"), ("unit", "byte"))
        if limits and app in self.cpu_unlimited:  # kube-state-metrics: no series
            return [(memory, mem)]
        return [(memory, mem), (self._with(labels, ("resource", "cpu"), ("unit", "core")), cpu)]

    def _phase_value(
        self, metric: str, rate: bool, now: _Instant, scene: Scene, labels: dict[str, str]
    ) -> list[Sample]:
        return [(self._with(labels, ("phase", p)), float(p == "Running")) for p in PHASES]

    def _deployment(self, metric: str, scene: Scene, replicas: Mapping[str, int]) -> list[Sample]:
        value_of = _DEPLOYMENT.get(metric)
        if value_of is None:
            return []
        out: list[Sample] = []
        for name, view in scene.services.items():
            labels = self._deployments.get(name)  # one dict per deployment (see ``_with``)
            if labels is None:
                labels = self._deployments[name] = {"namespace": self.namespace, "deployment": name}
            desired = float(replicas.get(name, len(view.pods)))
            out.append((labels, value_of(len(view.ready), len(view.pods), desired)))
        return out


_DEPLOYMENT: dict[str, Callable[[int, int, float], float]] = {
    "kube_deployment_status_replicas_available": lambda ready, pods, desired: float(ready),
    "kube_deployment_status_replicas_ready": lambda ready, pods, desired: float(ready),
    "kube_deployment_status_replicas_unavailable": lambda ready, pods, desired: max(
        0.0, desired - ready
    ),
    "kube_deployment_status_replicas": lambda ready, pods, desired: float(pods),
    "kube_deployment_status_replicas_updated": lambda ready, pods, desired: desired,
    "kube_deployment_spec_replicas": lambda ready, pods, desired: desired,
}
"""kube-state-metrics' deployment series: the value from (ready pods, pods, desired)."""


def _label_kind(metric: str) -> str:
    """Which label set ``_labels_of`` gives ``metric``: its branch, by the name's prefix."""
    if metric.startswith("kube_pod_status_"):
        return "status"
    if metric.startswith("kube_pod_container_resource_"):
        return "resource"
    if metric.startswith("kube_"):
        return "kube"
    if metric.startswith("container_network_"):
        return "network"
    return "cadvisor"


def _leaked(line: PodTimeline, t: float) -> float:
    """Bytes a memory leak has kept in the container instance running at ``t``: its rate
    (``Fault.leak_bytes_per_s``) times the time since the leak began in that instance, the
    later of the fault's start and the instance's readiness (the first instance's
    ``ready_at``, a restarted one's start plus ``STARTUP_S``), the instants
    ``timeline._leak`` counts its fill time from, so the series meets the limit when the
    kubelet's OOM kill comes and a restarted instance starts again from its baseline."""
    leaks = line.active(t, "memory_leak")
    if not leaks:
        return 0.0
    born = _instance_start(line, t)
    ready = line.pod.ready_at if born == line.pod.created_at else born + STARTUP_S
    total = 0.0
    for active in leaks:
        total += active.fault.leak_bytes_per_s * max(0.0, t - max(active.start, ready))
    return total


def _instance_start(line: PodTimeline, t: float) -> float:
    """When the container instance running at ``t`` started (pod creation or last restart)."""
    born = line.pod.created_at
    for ts, _ in line.restarts:
        if ts <= t:
            born = ts
    return born
