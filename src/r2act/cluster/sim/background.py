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
from typing import TypeVar

from r2act.cluster.sim.seeding import unit
from r2act.cluster.sim.timeline import PodTimeline
from r2act.schema import NoiseLevel, Topology
from r2act.schema.quantities import cpu_millicores

_K = TypeVar("_K")
_V = TypeVar("_V")

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
class _BlockUnits:
    """The unit draws of one request entry's reset process in one block: the one its count
    comes from and those its reset times come from, as many as were asked. They depend on
    the key (seed, pod, entry, block, index) alone, not on the rate, so the block drawn
    again at another rate (every scene that changes the route's rate) reuses them."""

    count: float
    times: list[float]


_UNITS: dict[tuple[int, str, str], dict[int, _BlockUnits]] = {}
_TIMES: dict[tuple[int, str, str, float], dict[int, list[float]]] = {}
"""Per request entry and rate, the sorted reset times of each block asked. Only the blocks
a window asks are drawn: the load generator starts a day before its incident, and the
incidents of a campaign lie weeks apart on the clock, so a process drawn through every
block in between would draw thousands no count reads."""


def _bounded(cache: dict[_K, dict[int, _V]], key: _K) -> dict[int, _V]:
    """``cache[key]``, made empty if missing (the cache is emptied past 4096 keys)."""
    found = cache.get(key)
    if found is None:
        if len(cache) > 4096:
            cache.clear()
        found = cache[key] = {}
    return found


def _poisson(u: float, mean: float) -> int:
    """The Poisson(``mean``) count whose CDF first reaches ``u`` (inverse transform)."""
    k, term = 0, math.exp(-mean)
    total = term
    while total < u and k < 10_000:
        k += 1
        term *= mean / k
        total += term
    return k


def _block_times(
    kept: dict[int, list[float]], entry: tuple[int, str, str], lam: float, block: int
) -> list[float]:
    """The sorted reset times of ``entry``'s process at rate ``lam`` in ``block``: as many
    as the Poisson count its ``conn-reset`` unit gives at the block's mean, each from its
    own ``conn-reset-at`` unit. ``kept``: the blocks already drawn at this rate (the
    entry's and rate's dict of ``_TIMES``)."""
    times = kept.get(block)
    if times is None:
        seed, pod, name = entry
        units = _bounded(_UNITS, entry)
        drawn = units.get(block)
        if drawn is None:
            drawn = units[block] = _BlockUnits(unit(seed, "conn-reset", pod, name, block), [])
        n = _poisson(drawn.count, lam * RESET_BLOCK_S)
        at = drawn.times
        for i in range(len(at), n):
            at.append(unit(seed, "conn-reset-at", pod, name, block, i))
        times = kept[block] = sorted((block + at[i]) * RESET_BLOCK_S for i in range(n))
    return times


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
    history come one after another: the resets from the load generator's start to the
    start of a tick's block are counted once per (start, block), and a tick adds those of
    its block up to it (ticks seconds apart nearly always share one hour-long block). The
    counts are ``connection_resets``'s, whatever was asked before: every block's draws are
    keyed, so holding them changes no count."""

    def __init__(self, seed: int, pod: str, entry: str, req_rate: float, noise: NoiseLevel) -> None:
        self.entry = (seed, pod, entry)
        self.lam = req_rate * RESET_PER_CONNECTION * NOISE_FACTOR[noise]
        self._times = _bounded(_TIMES, (*self.entry, round(self.lam, 12)))
        self._prior: dict[tuple[float, int], int] = {}
        """(start, block) -> resets after the start and before the block (for the start's
        own block: minus those up to the start, so that adding the block's count up to a
        tick gives the resets between them)."""

    def _before(self, started: float, block: int) -> int:
        prior = self._prior
        found = prior.get((started, block))
        if found is not None:
            return found
        first = math.floor(started / RESET_BLOCK_S)
        known = block
        while known > first and (started, known) not in prior:
            known -= 1
        if (started, known) not in prior:
            prior[(started, known)] = -bisect_right(
                _block_times(self._times, self.entry, self.lam, known), started
            )
        count = prior[(started, known)]
        for b in range(known, block):
            count += len(_block_times(self._times, self.entry, self.lam, b))
            prior[(started, b + 1)] = count
        return count

    def at(self, started: float, ticks: list[float]) -> list[int]:
        """Resets from ``started`` to each of ``ticks`` (zero at a tick not after it)."""
        if self.lam <= 0 or not ticks or max(ticks) <= started:
            return [0] * len(ticks)
        out = []
        block, prior, times = None, 0, []
        for t in ticks:
            if t <= started:
                out.append(0)
                continue
            here = math.floor(t / RESET_BLOCK_S)
            if here != block:  # a table's ticks nearly always share one block
                block, prior = here, self._before(started, here)
                times = _block_times(self._times, self.entry, self.lam, here)
            out.append(prior + bisect_right(times, t))
        return out
