"""The background a healthy cluster shows: runtime pauses stretched by CPU limits.

A real system on kind is not a clean room. Its JVM, .NET and V8 services stop the world to
collect garbage, and a container under a CPU limit runs such a pause at most ``limit``
cores wide: the CFS quota is ``limit x 100 ms`` per 100 ms period, so a pause
needing ``c`` ms of CPU takes about ``c / limit`` ms of wall time once ``limit`` < 1 core
(``cpu.max`` of cgroup v2; a single-threaded collector cannot use more than one core
anyway). Every call that arrives during a pause waits for its end. Two observable marks
follow, in every phase, pre and post included, from the same mechanism:

- a call with a deadline (``Call.deadline_ms``) fails when the rest of a pause is longer
  than the deadline's slack, so the caller's tolerated-failure warning with a deadline
  error appears now and then (``late_share``, read by ``scene._call``; for the system
  r2act ships, the entry point's 100 ms ads deadline against a JVM at 300m,
  ``docs/simulator.md``, "Background");
- a probe fails when its 1 s ``timeoutSeconds`` (the release manifest sets none: the
  default) falls inside a longer pause: an ``Unhealthy`` event with the prober's timeout
  output (``probe_failures``, read by ``events.window_events``). Three failures in a row
  would restart the container; at these rates that takes pauses no collector here makes,
  so no restart follows from the background.

Pause rates and lengths are assumptions, not measurements (no upstream source publishes
the shipped system's GC behaviour); each is named with its reason in ``PAUSES``. The noise
level scales every rate (``NOISE_FACTOR``): ``none`` is the clean room of earlier versions.
Every draw is keyed by what it decides (seed, pod, probe, tick), never by call order.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from r2act.cluster.sim.seeding import unit
from r2act.cluster.sim.timeline import PodTimeline
from r2act.schema import NoiseLevel, Topology
from r2act.schema.quantities import cpu_millicores

NOISE_FACTOR: dict[NoiseLevel, float] = {
    NoiseLevel.NONE: 0.0,
    NoiseLevel.REALISTIC: 1.0,
    NoiseLevel.HEAVY: 3.0,
}
"""Multiplier on every background rate: ``heavy`` stands for a busier node (a laptop
running the test bed beside other work), three times as many pauses."""


@dataclass(frozen=True)
class Pause:
    """One kind of stop-the-world pause of a runtime."""

    rate_per_s: float
    """How often it happens in a serving container."""
    cpu_ms: float
    """Median CPU time it needs (log-normal)."""
    sigma: float
    """Log-normal spread of that CPU time."""
    why: str
    """The assumption behind the figures."""


PAUSES: dict[str, tuple[Pause, ...]] = {
    "java": (
        Pause(
            1 / 20,
            12.0,
            0.7,
            "young collections of a small heap: the JVM picks the serial collector in a "
            "container with under two CPUs (JDK ergonomics), one every ~20 s at the demo's "
            "allocation rate, ~10 ms each",
        ),
        Pause(
            1 / 900,
            150.0,
            0.6,
            "an old-generation (full) collection of the serial collector every ~15 min, "
            "~150 ms of CPU for a heap of a few hundred MiB",
        ),
    ),
    "csharp": (
        Pause(
            1 / 30,
            5.0,
            0.7,
            "gen0/gen1 collections of .NET's workstation GC (the default in a container "
            "limited to one CPU), a few ms each",
        ),
    ),
    "node": (
        Pause(
            1 / 10,
            2.0,
            0.6,
            "V8 scavenges of the young generation, ~1-3 ms",
        ),
        Pause(
            1 / 300,
            25.0,
            0.6,
            "V8 mark-compact of the old generation every few minutes, tens of ms",
        ),
    ),
}
"""Stop-the-world pauses per runtime language. Go's collector stops the world for well
under a millisecond and CPython's cycle collector for a few ms in these small services,
so neither can reach a 100 ms deadline or a 1 s probe timeout: they have none here."""


def _excess_ms(median_ms: float, sigma: float, budget_ms: float) -> float:
    """E[max(0, D - budget)] for a log-normal D of median ``median_ms``."""
    if budget_ms <= 0:
        return median_ms * math.exp(sigma * sigma / 2) - budget_ms
    mu = math.log(median_ms)
    d1 = (mu + sigma * sigma - math.log(budget_ms)) / sigma
    d2 = d1 - sigma
    mean = math.exp(mu + sigma * sigma / 2)
    return mean * _phi(d1) - budget_ms * _phi(d2)


def _phi(x: float) -> float:
    """The standard normal CDF."""
    return 0.5 * math.erfc(-x / math.sqrt(2))


def late_share(language: str, cpu_limit: str | None, budget_ms: float, noise: NoiseLevel) -> float:
    """Share of calls (or probes) to a container that wait longer than ``budget_ms`` for the
    end of a pause: pauses per second times the expected part of a pause that lies beyond
    the budget (a call arriving in that part is late)."""
    factor = NOISE_FACTOR[noise]
    pauses = PAUSES.get(language, ())
    if factor <= 0 or not pauses:
        return 0.0
    cores = (cpu_millicores(cpu_limit) / 1000 if cpu_limit else 0.0) or 1.0  # "0": no limit
    stretch = 1.0 / min(1.0, max(cores, 0.05))
    share = sum(
        p.rate_per_s * factor * _excess_ms(p.cpu_ms * stretch, p.sigma, budget_ms) / 1000
        for p in pauses
    )
    return min(1.0, share)


PROBE_TIMEOUT_MS = 1000.0
"""``timeoutSeconds`` of every probe of the release manifests (unset: the default 1 s)."""


def probe_failures(
    topology: Topology, line: PodTimeline, window: tuple[float, float], seed: int, noise: NoiseLevel
) -> Iterator[tuple[float, str]]:
    """(time, message) of each probe of ``line``'s pod in ``window`` that a pause times out.

    Ticks follow the manifest's periods from the pod's creation; a tick counts only while
    the pod is ready (a crashed or paused container fails its probes by its own mechanism,
    ``timeline``). Each tick is decided by its own key, so any window sees the same ones."""
    lo, hi = window
    facts = line.facts
    spec = topology.deployment(line.pod.app)
    p = late_share(spec.language, spec.main.cpu_limit, PROBE_TIMEOUT_MS, noise)
    if p <= 0:
        return
    pod = line.pod
    for probe, period in (("Readiness", facts.readiness_s), ("Liveness", facts.liveness_s)):
        if period <= 0:
            continue
        first = max(0, math.ceil((lo - pod.created_at) / period))
        last = math.floor((hi - pod.created_at) / period)
        for k in range(first, last + 1):
            ts = pod.created_at + k * period
            if unit(seed, "probe-pause", pod.name, probe, k) >= p:
                continue
            if pod.deleted_at is not None and ts >= pod.deleted_at:
                continue
            if line.ready(ts):
                yield ts, f"{probe} probe failed: timeout"


RESET_PER_CONNECTION = 1e-4
"""Share of the load generator's fresh connections that end in a reset or a closed
connection before the answer (``ConnectionResetError`` / ``HTTPConnectionClosed``, both in
FastHttpUser's ``FAILURE_EXCEPTIONS``, locust-2.43.0 ``locust/contrib/fasthttp.py`` L79-87,
counted as a failure at L301-302). An assumption, not a measurement: no upstream source
publishes a rate for kind's kube-proxy; the reason is the churn a connection per request
makes, each one a new DNAT'd conntrack entry through kube-proxy's rules, where a packet
conntrack judges out of window escapes the translation and draws a RST from the host (the
race kube-proxy mitigates by dropping such packets, which leaves it rare, not impossible).
One in ten thousand is put at "rare": a few an hour at the shipped 27 users."""


RESET_BLOCK_S = 3600.0
"""Length of the clock blocks the reset process is drawn in (a bookkeeping unit, not a
rate: any length gives the same Poisson process)."""


@dataclass
class _Resets:
    """The reset process of one request entry, drawn block by block of the virtual clock
    from ``base`` on: per block its sorted reset times and the resets before it."""

    rate: float
    base: int
    times: list[list[float]]
    before: list[int]


_RESETS: dict[tuple[int, str, str, float], _Resets] = {}


def _poisson(u: float, mean: float) -> int:
    """The Poisson(``mean``) count whose CDF first reaches ``u`` (inverse transform)."""
    k, term = 0, math.exp(-mean)
    total = term
    while total < u and k < 10_000:
        k += 1
        term *= mean / k
        total += term
    return k


def _process(entry: tuple[int, str, str], lam: float, lo: float, hi: float) -> _Resets:
    """The reset process of ``entry`` (seed, pod, entry), drawn at least over the blocks
    from ``lo``'s to ``hi``'s."""
    seed, pod, name = entry
    key = (seed, pod, name, round(lam, 12))
    first = math.floor(lo / RESET_BLOCK_S)
    process = _RESETS.get(key)
    if process is None or first < process.base:
        if len(_RESETS) > 4096:
            _RESETS.clear()
        process = _RESETS[key] = _Resets(lam, first - 48, [], [])
    _draw(process, entry, lam, hi)
    return process


def _draw(process: _Resets, entry: tuple[int, str, str], lam: float, hi: float) -> None:
    """Draw ``process`` on, block by block, through ``hi``'s block."""
    seed, pod, name = entry
    last = math.floor(hi / RESET_BLOCK_S)
    while process.base + len(process.times) <= last:
        b = process.base + len(process.times)
        n = _poisson(unit(seed, "conn-reset", pod, name, b), lam * RESET_BLOCK_S)
        at = sorted(
            (b + unit(seed, "conn-reset-at", pod, name, b, i)) * RESET_BLOCK_S for i in range(n)
        )
        prior = process.before[-1] + len(process.times[-1]) if process.times else 0
        process.times.append(at)
        process.before.append(prior)


def _count(process: _Resets, t: float) -> int:
    """Resets of a process drawn through ``t``'s block, from its first block to ``t``."""
    index = math.floor(t / RESET_BLOCK_S) - process.base
    return process.before[index] + bisect_right(process.times[index], t)


def connection_resets(
    seed: int,
    pod: str,
    entry: str,
    req_rate: float,
    *,
    started: float,
    now: float,
    noise: NoiseLevel,
) -> int:
    """Requests of ``entry`` that a connection reset failed between the load generator
    ``pod``'s start at ``started`` and ``now`` (cumulative, so the stats table's counter
    never drops); zero with noise ``none``.

    The process runs on the virtual clock, not on the time since the load generator
    started: every incident's fresh system starts its load generator the same time before
    the incident, at a start time its place in the plan fixes (``collector.fresh``), so a
    process keyed by the time since that start would give every incident the same resets,
    one draw for the whole campaign, where a real cluster's windows each see their own.
    Each block's count and times are keyed by the block's index, so any window reads the
    same resets whatever was asked first, in one run, on lanes or as shards."""
    return ResetColumn(seed, pod, entry, req_rate, noise).at(started, [now])[0]


class ResetColumn:
    """One request entry's ``connection_resets``, asked table after table.

    A stats table asks for every entry at every tick, and the tables of one stretch of the
    history come one after another: the process is looked up once per column, the resets
    before the load generator's start counted once per start, and the ticks of a table
    (seconds apart, nearly always inside one hour-long block) counted in that block's
    sorted times directly. The counts are ``connection_resets``'s, whatever was asked
    before: the process's draws are keyed, so holding it changes no count."""

    def __init__(self, seed: int, pod: str, entry: str, req_rate: float, noise: NoiseLevel) -> None:
        self.entry = (seed, pod, entry)
        self.lam = req_rate * RESET_PER_CONNECTION * NOISE_FACTOR[noise]
        self._process: _Resets | None = None
        self._started = -math.inf
        self._before = 0
        """Resets of ``_process`` up to ``_started``."""

    def at(self, started: float, ticks: list[float]) -> list[int]:
        """Resets from ``started`` to each of ``ticks`` (zero at a tick not after it)."""
        if self.lam <= 0 or not ticks or max(ticks) <= started:
            return [0] * len(ticks)
        hi = max(ticks)
        process = self._process
        if process is None or started != self._started:
            process = self._process = _process(self.entry, self.lam, started, hi)
            self._started, self._before = started, _count(process, started)
        else:
            _draw(process, self.entry, self.lam, hi)
        before = self._before
        block = math.floor(min(ticks) / RESET_BLOCK_S)
        if block == math.floor(hi / RESET_BLOCK_S):
            times = process.times[block - process.base]
            prior = process.before[block - process.base] - before
            return [prior + bisect_right(times, t) if t > started else 0 for t in ticks]
        return [_count(process, t) - before if t > started else 0 for t in ticks]
