"""The metric background a healthy container shows: burstiness, throttling, GC sawtooths.

With ``noise: none`` the simulator renders expected values (a flat line per pod and a
uniform +-4 % jitter). A real scrape is not flat, and each series type is noisy for its own
reason, so each has its own mechanism here (docs/simulator.md, "Metric background"):

* **CPU usage** (``rate(container_cpu_usage_seconds_total[1m])``): the counter grows by one
  request's CPU at a time. Over a one-minute rate window the number of requests a pod
  served is Poisson, so the busy part's relative spread is ``1/sqrt(N)``; the runtime's
  collector adds its cycles' CPU; the idle part (timers, runtime) jitters a little.
* **CFS throttling** (``container_cpu_cfs_throttled_periods_total``): the kernel splits
  time into 100 ms periods and lets a container burn ``limit x 100 ms`` of CPU in each.
  A period is throttled when its demand exceeds that quota: a burst of requests arriving
  together, or a GC cycle whose marking runs on every thread the runtime has. Both happen
  at a low average utilisation, which is why real clusters show throttling with no fault.
* **Working set** (``container_memory_working_set_bytes``): garbage-collected runtimes grow
  their heap between collections and give part of it back after each, a sawtooth whose
  cycle length is the runtime's collection trigger over the allocation rate (so it
  quickens with load); how much of the swing reaches the cgroup differs per runtime.
* **Network bytes**: Poisson request counts times message sizes that vary.
* kube-state-metrics series are state, not samples: exact, as before.

Every draw is keyed by (seed, series, scrape bucket) (``seeding``), so reading a window
twice gives the same values, and the mechanism is the same in pre, during and post.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace

from r2act.cluster.sim.seeding import Reseeder, key_start, text_int, unit
from r2act.schema import NoiseLevel

CFS_PERIOD_S = 0.1
"""The kernel's default CFS period (``cpu.max`` ``$MAX 100000`` on cgroup v2): the kubelet
sets a quota of ``limit x 100 ms`` per 100 ms period."""
RATE_WINDOW_S = 60.0
"""The ``[1m]`` range of the default rate queries (``campaigns/defaults.py``)."""
CPU_PER_SERVICE_MS = 0.6
"""Share of a call's own processing time spent on CPU (the rest waits on I/O); the same
factor the expected CPU usage uses (``MetricSource._cores``)."""


@dataclass(frozen=True)
class Runtime:
    """How one language runtime collects garbage, as far as cAdvisor can see it."""

    live_heap_share: float
    """Live heap as a share of the container's working set under load."""
    cycle_heap_share: float
    """Heap allocated between two collections, as a share of the live heap (the trigger)."""
    ws_swing: float
    """Share of the working set given back after a cycle and regrown before the next."""
    alloc_kib_per_call: float
    """Heap allocated per served call (KiB)."""
    idle_alloc_kib_s: float
    """Heap allocated per second with no traffic (timers, health checks, metrics)."""
    mark_ms_per_mib: float
    """CPU (ms) a collection spends per MiB of live heap (marking / copying survivors)."""
    max_cycle_s: float
    """Longest time between collections whatever the allocation rate."""


RUNTIMES: dict[str, Runtime] = {
    # Go 1.26 (OB Dockerfiles): GOGC=100 starts a cycle when the heap reaches twice the live
    # heap (cycle_heap_share 1.0); sysmon forces a cycle every 2 minutes (forcegcperiod).
    # The background scavenger keeps about the heap goal resident, so only a small part of
    # the doubling leaves the cgroup's working set.
    "go": Runtime(0.25, 1.0, 0.06, 256.0, 8.0, 1.0, 120.0),
    # Node 20 / V8 (Online Boutique's Node services): frequent scavenges of the 16 MiB new
    # space, old-space mark-compacts when it grows by about half; V8 shrinks committed pages after a
    # mark-compact, so the old-space swing shows.
    "node": Runtime(0.35, 0.5, 0.08, 192.0, 16.0, 2.0, 600.0),
    # Temurin 25 JRE with a 300m limit: one active processor, so ergonomics pick SerialGC;
    # the young generation is committed once and reused, so RSS barely moves, while the
    # single-threaded young collections cost CPU.
    "java": Runtime(0.40, 0.3, 0.02, 512.0, 32.0, 1.5, 600.0),
    # .NET (Online Boutique's .NET image) workstation concurrent GC (one CPU): gen0 budget
    # cycles, the GC decommits part of gen0 after a collection.
    "csharp": Runtime(0.30, 0.4, 0.05, 256.0, 16.0, 1.0, 600.0),
    # CPython frees by reference counting as it goes; pymalloc keeps its arenas, and the
    # cyclic collector finds little, so there is no visible sawtooth.
    "python": Runtime(0.50, 0.0, 0.0, 128.0, 4.0, 0.5, 600.0),
    "locust": Runtime(0.50, 0.0, 0.0, 128.0, 4.0, 0.5, 600.0),
    # Redis: jemalloc, no collector.
    "redis": Runtime(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 600.0),
}
"""Per deployment ``language`` (topology); unknown languages have no collector."""
_NO_GC = RUNTIMES["redis"]


@dataclass(frozen=True)
class MetricBackground:
    """The named, seeded parameters of the metric background of one noise level."""

    idle_cpu_cv: float = 0.15
    """Relative spread of an idle container's CPU between scrapes (timer wake-ups)."""
    burst_factor: float = 1.0
    """Clustering of request arrivals beyond Poisson: a page view fans out into several
    backend calls at once; 1.0 is plain Poisson per period."""
    message_size_cv: float = 0.5
    """Relative spread of one request's bytes on the wire (pages and replies differ)."""
    working_set_jitter: float = 0.005
    """Allocator and page-cache churn in the working set, as a share of it (below peak)."""
    runtime_scale: float = 1.0
    """Multiplies every runtime's allocation rates (1.0: the table ``RUNTIMES``)."""
    runtimes: tuple[tuple[str, Runtime], ...] = tuple(RUNTIMES.items())

    def runtime(self, language: str) -> Runtime:
        """The runtime profile of ``language`` (no collector when unknown)."""
        found = dict(self.runtimes).get(language, _NO_GC)
        if self.runtime_scale == 1.0:
            return found
        return replace(
            found,
            alloc_kib_per_call=found.alloc_kib_per_call * self.runtime_scale,
            idle_alloc_kib_s=found.idle_alloc_kib_s * self.runtime_scale,
            ws_swing=min(0.5, found.ws_swing * self.runtime_scale),
        )


REALISTIC = MetricBackground()
HEAVY = MetricBackground(
    idle_cpu_cv=0.3,
    burst_factor=2.0,
    message_size_cv=1.0,
    working_set_jitter=0.01,
    runtime_scale=2.0,
)
"""Every background rate at about twice its realistic figure: a noisier cluster for
robustness tables, not a claim about any particular cluster."""


def background_for(level: NoiseLevel) -> MetricBackground | None:
    """The background of a noise level; None for ``none`` (today's expected values)."""
    if level == NoiseLevel.NONE:
        return None
    return HEAVY if level == NoiseLevel.HEAVY else REALISTIC


def poisson(draw: random.Random, mean: float) -> int:
    """A Poisson count (Knuth below 30, a rounded normal above, which is close there)."""
    if mean <= 0.0:
        return 0
    if mean > 30.0:
        return max(0, round(draw.gauss(mean, math.sqrt(mean))))
    limit, k, p = math.exp(-mean), 0, 1.0
    uniform = draw.random  # looked up once: the loop runs about ``mean`` times
    while True:
        p *= uniform()
        if p <= limit:
            return k
        k += 1


def poisson_tail(mean: float, k: int) -> float:
    """P(N >= k) for N ~ Poisson(mean)."""
    if k <= 0:
        return 1.0
    if mean <= 0.0:
        return 0.0
    term = total = math.exp(-mean)
    for i in range(1, k):
        term *= mean / i
        total += term
    return max(0.0, 1.0 - total)


@dataclass(frozen=True)
class ContainerLoad:
    """What the background of one container instance depends on at one instant."""

    language: str
    calls_s: float
    """Calls this pod serves per second (its share of the service's traffic)."""
    cost_ms: float
    """CPU per call (ms)."""
    limit_cores: float
    working_set: float
    """The image's working set under load (bytes), the sawtooth's peak."""
    age_s: float
    """Seconds since the container instance started."""


class Background:
    """Draws one noise level's background for the simulator's series."""

    def __init__(self, params: MetricBackground, seed: int) -> None:
        self.params, self.seed = params, seed
        self._runtimes: dict[str, Runtime] = {}
        self._cpu_draws = Reseeder(seed, "bg-cpu")
        self._count_draws = Reseeder(seed, "bg-count")
        self._net_draws = Reseeder(seed, "bg-net")
        """``seeding.rng(seed, stream, key)`` for each stream's keys: the same draws, from one
        generator per stream re-seeded (``seeding.Reseeder``). A generator is valid until its
        stream's next call: each draw below is used up before another is asked for."""
        self._offsets: dict[tuple[str, int], float] = {}
        self._ws_keys: dict[tuple[str, int], str] = {}
        self._steadies: dict[
            tuple[str, float, float, float, float], tuple[float | None, float, float]
        ] = {}

    def _runtime(self, language: str) -> Runtime:
        """``params.runtime(language)``, looked up once per language (asked per sample)."""
        found = self._runtimes.get(language)
        if found is None:
            found = self._runtimes[language] = self.params.runtime(language)
        return found

    def _gc_offset(self, pod: str, instance: int) -> float:
        """Where in its collection cycle a container instance started (keyed by the
        instance, so drawn once per instance, not once per sample)."""
        key = (pod, instance)
        found = self._offsets.get(key)
        if found is None:
            if len(self._offsets) > 4096:  # a long-lived cluster: bounded, redrawn alike
                self._offsets.clear()
            found = self._offsets[key] = unit(self.seed, "bg-gc", pod, instance)
        return found

    def _ws_unit(self, pod: str, instance: int, bucket: float) -> float:
        """``unit(seed, "bg-ws", pod, instance, bucket)``, the key text's start (all but the
        bucket) formatted once per container instance instead of once per sample."""
        key = (pod, instance)
        start = self._ws_keys.get(key)
        if start is None:
            if len(self._ws_keys) > 4096:  # bounded like ``_offsets``
                self._ws_keys.clear()
            start = self._ws_keys[key] = key_start(self.seed, "bg-ws", *key)
        return text_int(start + str(bucket)) / 2**64

    def _alloc_mib_s(self, runtime: Runtime, load: ContainerLoad) -> float:
        return (runtime.idle_alloc_kib_s + runtime.alloc_kib_per_call * load.calls_s) / 1024

    def _steady(self, load: ContainerLoad) -> tuple[float | None, float, float]:
        """``(gc_cycle_s, gc_ms, throttled_per_s)`` of ``load``, worked out once per steady
        state. They depend on the load but its age, and a pod's traffic is the same at most
        steps (4,344 loads of ten incidents' queries had 22 such states), so they are kept
        by those five fields; they are pure functions of them, so a kept value is the value.
        Bounded like ``_offsets``."""
        key = (load.language, load.calls_s, load.cost_ms, load.limit_cores, load.working_set)
        found = self._steadies.get(key)
        if found is None:
            if len(self._steadies) > 4096:
                self._steadies.clear()
            found = self._steadies[key] = (
                self._gc_cycle_s(load),
                self._gc_ms(load),
                self._throttled_per_s(load),
            )
        return found

    def gc_cycle_s(self, load: ContainerLoad) -> float | None:
        """Seconds between two collections of the container; None without a collector."""
        return self._steady(load)[0]

    def gc_ms(self, load: ContainerLoad) -> float:
        """CPU (ms) of one collection: proportional to the live heap it marks."""
        return self._steady(load)[1]

    def throttled_per_s(self, load: ContainerLoad) -> float:
        """Expected throttled CFS periods per second with no fault (``_throttled_per_s``)."""
        return self._steady(load)[2]

    def _gc_cycle_s(self, load: ContainerLoad) -> float | None:
        """``gc_cycle_s`` worked out."""
        runtime = self._runtime(load.language)
        if runtime.cycle_heap_share <= 0.0:
            return None
        live_mib = runtime.live_heap_share * load.working_set / 2**20
        alloc = self._alloc_mib_s(runtime, load)
        by_alloc = live_mib * runtime.cycle_heap_share / alloc if alloc > 0 else math.inf
        return min(by_alloc, runtime.max_cycle_s)

    def _gc_ms(self, load: ContainerLoad) -> float:
        """``gc_ms`` worked out."""
        runtime = self._runtime(load.language)
        return runtime.mark_ms_per_mib * runtime.live_heap_share * load.working_set / 2**20

    def _throttled_per_s(self, load: ContainerLoad) -> float:
        """Expected throttled CFS periods per second with no fault.

        A period is throttled when its demand exceeds the quota ``limit x 100 ms``: enough
        calls arriving in one period (Poisson, clustered by ``burst_factor``), or a
        collection, whose marking runs on every thread, together with the period's calls."""
        quota_ms = load.limit_cores * CFS_PERIOD_S * 1000
        if quota_ms <= 0:  # no CPU limit, no CFS quota: never throttled
            return 0.0
        per_period = load.calls_s * CFS_PERIOD_S * self.params.burst_factor
        cost = max(load.cost_ms * self.params.burst_factor, 1e-6)
        p_calls = poisson_tail(per_period, math.ceil(quota_ms / cost))
        out = p_calls / CFS_PERIOD_S
        cycle = self._gc_cycle_s(load)
        if cycle is not None and math.isfinite(cycle) and cycle > 0:
            gc = self._gc_ms(load)
            whole = math.floor(gc / quota_ms)  # periods the collection alone exhausts
            rest = gc - whole * quota_ms
            p_rest = poisson_tail(per_period, math.ceil((quota_ms - rest) / cost))
            out += (whole + p_rest) / cycle
        return out

    def cpu_cores(self, expected: float, idle: float, load: ContainerLoad, key: object) -> float:
        """One scrape of ``rate(cpu[1m])``: idle jitter, a Poisson count of the window's
        calls and the collections that fell in it, capped at the limit."""
        draw = self._cpu_draws(key)
        busy = max(0.0, expected - idle)
        mean_calls = load.calls_s * RATE_WINDOW_S
        if mean_calls > 0:
            served = poisson(draw, mean_calls / self.params.burst_factor)
            busy *= served * self.params.burst_factor / mean_calls
        noisy_idle = idle * max(0.0, 1.0 + self.params.idle_cpu_cv * draw.gauss(0.0, 1.0))
        gc = 0.0
        cycle, gc_ms, _ = self._steady(load)
        if cycle is not None and cycle > 0:
            cycles = poisson(draw, RATE_WINDOW_S / cycle)
            gc = cycles * gc_ms / 1000 / RATE_WINDOW_S
        return min(load.limit_cores, noisy_idle + busy + gc)

    def count_rate(self, per_s: float, key: object) -> float:
        """A counter's ``rate[1m]`` when its increments are independent events."""
        if per_s <= 0.0:
            return 0.0
        draw = self._count_draws(key)
        return poisson(draw, per_s * RATE_WINDOW_S) / RATE_WINDOW_S

    def network_rate(self, base: float, per_call: float, load: ContainerLoad, key: object) -> float:
        """Bytes/s over a rate window: Poisson calls times message sizes that vary."""
        draw = self._net_draws(key)
        mean = load.calls_s * RATE_WINDOW_S
        calls = poisson(draw, mean)
        size = 1.0 + self.params.message_size_cv * draw.gauss(0.0, 1.0) / math.sqrt(max(1, calls))
        keepalive = base * (1.0 + 0.05 * draw.gauss(0.0, 1.0))
        return max(0.0, keepalive + calls * per_call * max(0.0, size) / RATE_WINDOW_S)

    def working_set(self, load: ContainerLoad, pod: str, instance: int, t: float) -> float:
        """The working set at ``t``: the peak minus the part the last collection gave back
        and the heap has not regrown yet, minus allocator churn (never above the peak)."""
        runtime = self._runtime(load.language)
        peak = load.working_set
        below = self.params.working_set_jitter * self._ws_unit(pod, instance, t // 15)
        cycle = self._steady(load)[0]
        if cycle is None or runtime.ws_swing <= 0.0:
            return peak * (1.0 - below)
        phase = (load.age_s / cycle + self._gc_offset(pod, instance)) % 1.0
        return peak * (1.0 - runtime.ws_swing * (1.0 - phase) - below)
