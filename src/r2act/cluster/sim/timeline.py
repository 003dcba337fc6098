"""Pod dynamics under faults: when a pod is down, restarts, and what the kubelet reports.

A pod's fate follows from the chaos objects that selected it, its template (memory
limit), the probes of its container and the kubelet's restart back-off (10 s doubling to
300 s, ``kuberuntime``):

- pod-failure swaps the image for ``pause``: the container restarts, probes fail, the
  liveness probe restarts it again every ~30 s; removal restarts it with the real image.
- memory stress beyond the limit (StressChaos): on cgroup v2 the kubelet sets
  ``memory.oom.group`` (Kubernetes >= 1.28), so the first OOM kills the app and the
  stressor together; the container restarts once and is clean, because Chaos Mesh never
  re-applies a record that stays ``Injected`` (``controllers/common/records``). No
  ``OOMKilling`` event: only node-problem-detector emits it, and deploy/ installs none.
- a memory limit below the working set (a ConfigFault template): OOM-killed at every start
  (below the start-up working set: never ready) or a few seconds after it becomes ready
  and takes load, then CrashLoopBackOff, for as long as the pod runs that template.
- network delay beyond the 1 s probe timeout: probes time out, the pod is mostly not
  ready and the liveness probe restarts it; the netem rule survives container restarts.
- CPU stress at full load makes probes time out now and then (Unhealthy), no restart.

Everything is a pure function of the pod and its faults, so it is computed on demand.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from r2act.cluster.sim.chaos import Fault, parse_chaos
from r2act.cluster.sim.identity import PAUSE_IMAGE, PodFacts
from r2act.cluster.sim.kubetexts import FAILURE_THRESHOLD
from r2act.cluster.sim.seeding import between
from r2act.cluster.sim.state import ChaosRec, PodRec, SimState

START_WS = 0.5
LOADED_WS = 0.9
"""Working set at start-up and under load, as shares of the manifest's memory request. The
loaded one is a fallback: the topology's ``working_set`` (``Topology.working_set_bytes``)
says it per image, and the simulated cAdvisor working set peaks there (``metrics``)."""
BACKOFF_S = (0.0, 10.0, 20.0, 40.0, 80.0, 160.0, 300.0)
LIVENESS_PERIOD_S = 30.0
"""Fallback for an app without probes in its system's table."""


def liveness_s(facts: PodFacts) -> float:
    """Seconds of failing liveness probes before the kubelet restarts: period x threshold
    (the system's manifest periods, ``System.probes``)."""
    period = facts.liveness_s
    return period * FAILURE_THRESHOLD if period > 0 else LIVENESS_PERIOD_S


def readiness_s(facts: PodFacts) -> float:
    """The readiness probe's period (10 s where the manifest sets none)."""
    period = facts.readiness_s
    return period if period > 0 else 10.0


"""Default probe period 10 s x failureThreshold 3: a dead container is restarted every ~30 s."""
PROBE_TIMEOUT_MS = 1000.0
STARTUP_S = 3.0
"""Seconds from a container start until its readiness probe passes."""
FAR_FUTURE = float("inf")
LOOP_HORIZON_S = 86_400.0
"""How far a crash loop of a pod that is never deleted is laid out."""


AppFault = tuple[str, Fault, ChaosRec, float, float]
"""(app, fault, its object, start, stop): a fault on every pod of an app while it acts."""
PastReads = tuple[
    str,
    str,
    int,
    int,
    tuple[tuple[str, str], ...],
    float,
    float,
    float,
    tuple[tuple[Fault, float, float, float], ...],
    tuple[tuple[float, float], ...],
    tuple[tuple[float, str], ...],
]
"""A pod's part in the scenes before an instant (``PodTimeline.read_before``): name, app,
revision, memory limit, env, created, ready, deleted, faults (fault, start, stop, end), down
intervals and restarts."""


@dataclass
class ActiveFault:
    """A fault acting on a pod during [start, end) (end includes healing)."""

    fault: Fault
    rec: ChaosRec
    start: float
    stop: float
    """When the fault stops acting (deletion, expiry or the pod's end)."""
    end: float
    """When its effects are gone: ``stop`` plus healing, or the pod's end."""


@dataclass
class PodTimeline:
    """What happens to one pod: down intervals, restarts and kubelet-level events."""

    pod: PodRec
    facts: PodFacts
    """The kubelet's view of the pod's deployment (container, image, probes)."""
    faults: list[ActiveFault] = field(default_factory=list)
    down: list[tuple[float, float]] = field(default_factory=list)
    restarts: list[tuple[float, str]] = field(default_factory=list)
    events: list[tuple[float, str, str, str]] = field(default_factory=list)
    """(ts, type, reason, message) about the pod."""
    crashed: list[tuple[float, float]] = field(default_factory=list)
    """Intervals with the container dead, waiting out its restart back-off."""
    namespace: str = "default"

    # The predicates below are asked per pod per metric step and per scene; most pods have
    # no fault, restart or down interval, so each first checks for an empty list (a
    # generator costs more than the test) and none builds a list it then scans.

    def ready(self, t: float) -> bool:
        """Exists, started and not in a down interval."""
        if not self.pod.exists(t) or t < self.pod.ready_at:
            return False
        return not self.down or not any(s <= t < e for s, e in self.down)

    def restart_count(self, t: float) -> int:
        """Container restarts up to ``t``."""
        if not self.restarts:
            return 0
        return sum(1 for ts, _ in self.restarts if ts <= t)

    def last_reason(self, t: float) -> str | None:
        """Why the previous container instance ended, as of ``t``."""
        past = [reason for ts, reason in self.restarts if ts <= t]
        return past[-1] if past else None

    def waiting(self, t: float) -> bool:
        """The container is dead, waiting out its restart back-off."""
        return bool(self.crashed) and any(s <= t < e for s, e in self.crashed)

    def paused(self, t: float) -> bool:
        """Running the pause image of a pod-failure (no output of its own)."""
        for a in self.faults:  # the intervals of ``pauses``, without building them
            if a.fault.effect == "pod_failure" and a.start <= t < a.stop + 1.0:
                return True
        return False

    def pauses(self) -> list[tuple[float, float]]:
        """Intervals [s, e) running the pause image: a pod-failure and the second after it."""
        return [(a.start, a.stop + 1.0) for a in self.faults if a.fault.effect == "pod_failure"]

    def silent(self) -> list[tuple[float, float]]:
        """Intervals [s, e) in which the container writes nothing: before and after the
        pod exists, while it waits out a restart back-off, and while it is paused."""
        gaps = [(-math.inf, self.pod.created_at), *self.crashed, *self.pauses()]
        if self.pod.deleted_at is not None:
            gaps.append((self.pod.deleted_at, math.inf))
        return gaps

    def active(self, t: float, effect: str) -> list[ActiveFault]:
        """Faults of one effect acting on the pod at ``t``."""
        if not self.faults:
            return []
        return [a for a in self.faults if a.fault.effect == effect and a.start <= t < a.end]

    def read_before(self, h: float) -> PastReads | None:
        """What the scene of an instant before ``h`` can read of this pod, times at or after
        ``h`` folded into infinity; None when the pod plays no part before ``h``.

        A scene at ``t`` compares every time of a timeline with ``t`` or with an earlier
        instant (``created_at <= t``, ``t < end``, ``ts <= t``), so a time at or after
        ``h > t`` reads as infinity does: a change of the history at or after ``h`` (a
        fault stopped now, a pod created now) leaves this tuple as it was. A pod with no
        time before ``h`` neither exists nor serves a connection then. Every time a change
        point is made of is in it (``change_points``), so equal tuples also mean the same
        stretch bounds below ``h``. The pod's lists are kept in order (the scene sums over
        them in that order)."""
        pod = self.pod
        inf = math.inf
        faults = tuple(
            (a.fault, a.start, a.stop if a.stop < h else inf, a.end if a.end < h else inf)
            for a in self.faults
            if a.start < h
        )
        down = tuple((s, e if e < h else inf) for s, e in self.down if s < h)
        restarts = tuple(r for r in self.restarts if r[0] < h)
        gone = pod.deleted_at if pod.deleted_at is not None and pod.deleted_at < h else inf
        created = pod.created_at if pod.created_at < h else inf
        ready = pod.ready_at if pod.ready_at < h else inf
        if created == ready == gone == inf and not (faults or down or restarts):
            return None
        env = tuple(pod.env.items())
        return (
            pod.name,
            pod.app,
            pod.revision,
            pod.memory_limit,
            env,
            created,
            ready,
            gone,
            faults,
            down,
            restarts,
        )


def history_before(timelines: dict[str, PodTimeline], h: float) -> tuple[PastReads, ...]:
    """What the scene of an instant before ``h`` can read of the history: each pod's
    ``read_before(h)`` that plays a part, in timeline order."""
    parts = (line.read_before(h) for line in timelines.values())
    return tuple(p for p in parts if p is not None)


def fold_history(reads: tuple[PastReads, ...], h: float) -> tuple[PastReads, ...]:
    """``history_before(timelines, h)`` computed from ``history_before(timelines, end)``
    for an ``h`` at or before ``end`` (the folded times stay folded): what a scene before
    ``h`` read of a history that has changed since."""
    inf = math.inf
    out: list[PastReads] = []
    for name, app, revision, limit, env, created, ready, gone, faults, down, restarts in reads:
        f = tuple(
            (x, start, stop if stop < h else inf, end if end < h else inf)
            for x, start, stop, end in faults
            if start < h
        )
        d = tuple((s, e if e < h else inf) for s, e in down if s < h)
        r = tuple(x for x in restarts if x[0] < h)
        c = created if created < h else inf
        b = ready if ready < h else inf
        g = gone if gone < h else inf
        if c == b == g == inf and not (f or d or r):
            continue
        out.append((name, app, revision, limit, env, c, b, g, f, d, r))
    return tuple(out)


def fault_window(rec: ChaosRec) -> tuple[float, float, float] | None:
    """(start, stop, end incl. healing) of a chaos object's action; None if it never acts."""
    if rec.injection_failed or not rec.pods or rec.kind == "ConfigFault":
        return None
    stop = rec.effect_end()
    if stop is None:
        return rec.applied_at, FAR_FUTURE, FAR_FUTURE
    return rec.applied_at, stop, stop + rec.heal_s


def build_timelines(
    state: SimState,
    facts: dict[str, PodFacts],
    request_bytes: dict[str, int],
    seed: int,
    working_sets: dict[str, int] | None = None,
    *,
    app_faults: Sequence[AppFault] = (),
    workload_label: str,
) -> dict[str, PodTimeline]:
    """A timeline for every pod in the state (``facts``: ``identity.pod_facts`` of the
    system); ``working_sets`` holds each app's working set under load
    (``Topology.working_set_bytes``; LOADED_WS of the request where absent);
    ``app_faults`` act on every pod of an app that exists while they do, pods created later
    included (flag faults: ``flagfault.acting``); ``workload_label``: the label the
    system's chaos selectors name workloads by (``System.workload_label``)."""
    loaded = working_sets or {}
    lines = {p.name: PodTimeline(p, facts[p.app], namespace=state.namespace) for p in state.pods}
    for app, fault, rec, start, stop in app_faults:
        for reader in lines.values():
            pod = reader.pod
            gone = FAR_FUTURE if pod.deleted_at is None else pod.deleted_at
            # A fault acting until further notice is laid out a day ahead, as crash loops are.
            begin = max(start, pod.created_at)
            end = min(stop, gone, begin + LOOP_HORIZON_S)
            if pod.app == app and begin < end:
                reader.faults.append(ActiveFault(fault, rec, begin, end, end))
    for rec in state.chaos:
        window = fault_window(rec)
        if window is None:
            continue
        obj = {"kind": rec.kind, "metadata": {"name": rec.name}, **_body(rec)}
        _, _, fault = parse_chaos(obj, workload_label)
        for pod_name in rec.pods:
            line = lines.get(pod_name)
            if line is None:
                continue
            gone = FAR_FUTURE if line.pod.deleted_at is None else line.pod.deleted_at
            start, stop, end = window[0], min(window[1], gone), min(window[2], gone)
            if start < stop:
                line.faults.append(ActiveFault(fault, rec, start, stop, end))
    for line in lines.values():
        request = request_bytes.get(line.pod.app, 0)
        for active in line.faults:
            _dynamics(line, active, request, seed)
        working_set = loaded.get(line.pod.app, LOADED_WS * request)
        for active in line.faults:
            if active.fault.effect == "memory_leak":
                _leak(line, active, working_set, seed)
        _low_limit(line, request, seed, working_set)
        line.restarts.sort()
        line.events.sort()
    return lines


def collectable_from(timelines: dict[str, PodTimeline], now: float) -> dict[str, float]:
    """Pods whose log lines a collection at ``now`` cannot fully read, and from when it can.

    What ``kubectl logs`` reaches is the pods that exist now, and of each container the
    current instance plus one previous (``--previous``); the kubelet removes older ones.
    The real adapter reads exactly that (``kube.KubeCluster.logs``), so the simulator serves
    the same: a deleted pod yields nothing, a pod restarted twice or more loses the lines of
    its earlier instances. Pods missing from the result are read in full."""
    cut: dict[str, float] = {}
    for name, line in timelines.items():
        pod = line.pod
        if pod.created_at > now:
            continue
        if not pod.exists(now):
            cut[name] = math.inf
            continue
        starts = [pod.created_at] + [ts for ts, _ in line.restarts if ts <= now]
        if len(starts) >= 3:
            cut[name] = sorted(starts)[-2]
    return cut


def change_points(timelines: dict[str, PodTimeline]) -> list[float]:
    """Sorted instants at which some condition changes (finite ones only)."""
    points: set[float] = set()
    for line in timelines.values():
        pod = line.pod
        points.update((pod.created_at, pod.ready_at))
        if pod.deleted_at is not None:
            points.add(pod.deleted_at)
        for active in line.faults:
            points.update((active.start, active.stop, active.end))
        for start, stop in line.down:
            points.update((start, stop))
        points.update(t for t, _ in line.restarts)
    return sorted(p for p in points if p != FAR_FUTURE)


def _body(rec: ChaosRec) -> dict[str, object]:
    return {"spec": rec.spec}


def _dynamics(line: PodTimeline, active: ActiveFault, request: int, seed: int) -> None:
    effect = active.fault.effect
    if effect == "pod_failure":
        _pod_failure(line, active, seed)
    elif effect == "memory" and request + active.fault.memory_bytes > line.pod.memory_limit:
        _group_oom(line, active, seed)
    elif effect == "delay" and active.fault.latency_ms > PROBE_TIMEOUT_MS:
        _probe_timeouts(line, active, restart=True)
    elif effect == "cpu" and active.fault.cpu_cores >= 1.5:
        _probe_timeouts(line, active, restart=False)


def _container(line: PodTimeline) -> str:
    return line.facts.container


def _image(line: PodTimeline) -> str:
    return line.facts.image


def _backoff(line: PodTimeline) -> str:
    """kuberuntime's message: ``Back-off restarting failed container %s in pod %s``, the pod
    as ``format.Pod`` prints it (name_namespace(uid))."""
    uid = uuid_of(line.pod.name)
    return (
        f"Back-off restarting failed container {_container(line)} in pod "
        f"{line.pod.name}_{line.namespace}({uid})"
    )


def uuid_of(pod: str) -> str:
    """A stable pod UID (the simulator keeps none): uuid-shaped, derived from the name."""
    digest = hashlib.sha256(pod.encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-a{digest[17:20]}-{digest[20:32]}"


def pod_ip(pod: str) -> str:
    """A stable pod IP on kind's pod network (10.244.0.0/16)."""
    digest = hashlib.sha256(pod.encode()).digest()
    return f"10.244.{digest[0] % 4}.{2 + digest[1] % 250}"


def _restart(line: PodTimeline, t: float, reason: str, image: str) -> None:
    name = _container(line)
    line.restarts.append((t, reason))
    line.events.append(
        (t, "Normal", "Pulled", f'Container image "{image}" already present on machine')
    )
    line.events.append((t, "Normal", "Created", f"Created container {name}"))
    line.events.append((t, "Normal", "Started", f"Started container {name}"))


def _pod_failure(line: PodTimeline, active: ActiveFault, seed: int) -> None:
    name = _container(line)
    start, stop = active.start, active.stop
    line.down.append((start, active.end))
    line.events.append(
        (start, "Normal", "Killing", f"Container {name} definition changed, will be restarted")
    )
    _restart(line, start + 1.0, "Error", PAUSE_IMAGE)
    tick = start + readiness_s(line.facts) / 2
    while tick < min(stop, start + 3600.0):
        readiness = f"Readiness probe failed: {_probe_error(line)}"
        line.events.append((tick, "Warning", "Unhealthy", readiness))
        tick += readiness_s(line.facts)
    live = liveness_s(line.facts)
    t, attempt = start + 1.0 + live, 1
    while t < stop:
        probe = f"Liveness probe failed: {_probe_error(line)}"
        line.events.append((t - live / FAILURE_THRESHOLD, "Warning", "Unhealthy", probe))
        line.events.append(
            (t, "Normal", "Killing", f"Container {name} failed liveness probe, will be restarted")
        )
        wait = BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)]
        line.events.append((t + 0.5, "Warning", "BackOff", _backoff(line)))
        _restart(line, t + wait, "Error", PAUSE_IMAGE)
        t += wait + live
        attempt += 1
    if stop < active.end:
        line.events.append(
            (stop, "Normal", "Killing", f"Container {name} definition changed, will be restarted")
        )
        _restart(line, stop + 1.0, "Error", _image(line))
        line.down[-1] = (start, max(active.end, stop + 1.0 + STARTUP_S))


def _group_oom(line: PodTimeline, active: ActiveFault, seed: int) -> None:
    """One OOM kill of the container's cgroup (app and stressor), one restart, then clean."""
    kill = active.start + between(seed, 3.0, 6.0, "oom", line.pod.name, 0)
    if kill >= active.stop:
        return
    restart_at = kill + 1.0
    line.down.append((kill, restart_at + STARTUP_S))
    _restart(line, restart_at, "OOMKilled", _image(line))
    active.stop = active.end = kill  # the stressor died with the app; nothing re-applies it


def _leak(line: PodTimeline, active: ActiveFault, loaded: float, seed: int) -> None:
    """OOM kills of a leaking container: its working set grows from ``loaded`` at the fault's
    rate until the limit, the kubelet restarts it with the back-off, the new process leaks
    again (the flag is still served), for as long as the fault acts."""
    rate = active.fault.leak_bytes_per_s
    headroom = line.pod.memory_limit - loaded
    if rate <= 0:
        return
    fill = max(1.0, headroom / rate)
    up, attempt = max(active.start, line.pod.ready_at), 0
    while True:
        kill = up + fill + between(seed, 0.0, 2.0, "leak", line.pod.name, attempt)
        if kill >= active.stop:
            return
        wait = BACKOFF_S[min(attempt + 1, len(BACKOFF_S) - 1)]
        restart_at = kill + wait
        line.down.append((kill, min(active.stop, restart_at + STARTUP_S)))
        line.crashed.append((kill, min(active.stop, restart_at)))
        if attempt > 0:
            line.events.append((kill + 1.0, "Warning", "BackOff", _backoff(line)))
        if restart_at >= active.stop:
            return
        _restart(line, restart_at, "OOMKilled", _image(line))
        up = restart_at + STARTUP_S
        attempt += 1


def _low_limit(line: PodTimeline, request: int, seed: int, loaded: float) -> None:
    """CrashLoopBackOff of a pod whose memory limit is below its working set under load
    (``loaded`` bytes): a limit at or above it never OOM-kills."""
    limit, pod = line.pod.memory_limit, line.pod
    if request <= 0 or limit >= loaded:
        return
    at_start = limit < START_WS * request
    end = pod.deleted_at if pod.deleted_at is not None else pod.created_at + LOOP_HORIZON_S
    up, attempt = pod.created_at + 1.0, 0
    if at_start:
        line.down.append((pod.created_at, end))
    while up < end:
        if at_start:
            kill = up + between(seed, 1.0, 3.0, "oom-start", pod.name, attempt)
        else:
            ready = pod.ready_at if attempt == 0 else up + STARTUP_S
            kill = ready + between(seed, 2.0, 6.0, "oom-load", pod.name, attempt)
        if kill >= end:
            break
        wait = BACKOFF_S[min(attempt + 1, len(BACKOFF_S) - 1)]
        restart_at = kill + wait
        if not at_start:
            line.down.append((kill, min(end, restart_at + STARTUP_S)))
        line.crashed.append((kill, min(end, restart_at)))
        if attempt > 0:
            line.events.append((kill + 1.0, "Warning", "BackOff", _backoff(line)))
        if restart_at < end:
            _restart(line, restart_at, "OOMKilled", _image(line))
        up = restart_at
        attempt += 1


def _probe_timeouts(line: PodTimeline, active: ActiveFault, *, restart: bool) -> None:
    name = _container(line)
    stop = active.end
    t = active.start + 10.0
    period = liveness_s(line.facts) if restart else 45.0
    while t < stop:
        line.events.append(
            (
                t,
                "Warning",
                "Unhealthy",
                f"Readiness probe failed: {_probe_error(line, timeout=True)}",
            )
        )
        if restart:
            line.down.append((t, min(t + period - 6.0, stop)))
            line.events.append(
                (
                    t + period - 8.0,
                    "Normal",
                    "Killing",
                    f"Container {name} failed liveness probe, will be restarted",
                )
            )
            _restart(line, t + period - 7.0, "Error", _image(line))
        t += period


def _probe_error(line: PodTimeline, *, timeout: bool = False) -> str:
    """What the kubelet's prober reports: refused (nothing listens) or a 1 s timeout.

    HTTP: Go's net/http client error; gRPC: ``pkg/probe/grpc/grpc.go`` (connect failure
    ``failed to connect service %q within %v: %+v``, slow answer ``health rpc did not
    complete within %v``); TCP: ``dial tcp <ip>:<port>: connect: connection refused``."""
    facts, ip = line.facts, pod_ip(line.pod.name)
    port = facts.port
    if facts.probe == "http":
        url = f"http://{ip}:{port}{facts.health_path}"
        if timeout:
            return (
                f'Get "{url}": context deadline exceeded '
                "(Client.Timeout exceeded while awaiting headers)"
            )
        return f'Get "{url}": dial tcp {ip}:{port}: connect: connection refused'
    if facts.probe == "tcp":
        return f"dial tcp {ip}:{port}: connect: connection refused"
    if timeout:
        return "timeout: health rpc did not complete within 1s"
    return f'timeout: failed to connect service "{ip}:{port}" within 1s: context deadline exceeded'
