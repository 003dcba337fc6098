"""The rule baseline on a noisy cluster: background and one-off blips in pre or during do
not fire a rule; an effect that persists over the fault window does (issue 22 item 4)."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))

import blcases as bc

from r2act.baselines.rule import diagnose
from r2act.schema import FaultType

CART_POD = "cartservice-abcdef1234-x1y2z"
NO_HOST = (
    'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while '
    'dialing: dial tcp: lookup cartservice on 10.96.0.10:53: no such host"'
)


def _series(pod: str, query: str, value: Callable[[str, float], float]) -> pd.DataFrame:
    """One pod's series scraped every 5 s over both phases; ``value(phase, t)``."""
    labels = json.dumps({"container": "server", "pod": pod}, sort_keys=True)
    rows = []
    for phase, (start, end) in (("pre", bc.PRE), ("during", bc.DURING)):
        t = start
        while t <= end:
            rows.append((phase, t, query, labels, value(phase, t)))
            t += 5.0
    return pd.DataFrame(rows, columns=["phase", "ts", "query", "labels", "value"])


def _quiet_logs() -> pd.DataFrame:
    """The load generator and the frontend logging along, nothing wrong."""
    ok = bc.access("GET", "/", 200) * 30
    return bc.logs({"pre": {"frontend": ok}, "during": {"frontend": ok}})


def _background_throttling(phase: str, t: float) -> float:
    """A healthy pod's throttling: GC cycles and call bursts, 0 to 0.2 periods/s."""
    return 0.1 + 0.1 * math.sin(t / 7.0)


def test_a_one_off_throttling_spike_is_not_cpu_saturation() -> None:
    def spike(phase: str, t: float) -> float:
        return 9.6 if phase == "during" and 80 <= t < 90 else _background_throttling(phase, t)

    metrics = _series(CART_POD, "cpu_throttled", spike)
    found = diagnose(bc.case(_quiet_logs(), metric_rows=metrics))
    assert found.rule != "cpu_pegged"


def test_throttling_that_stays_up_over_the_window_is_cpu_saturation() -> None:
    def pegged(phase: str, t: float) -> float:
        return 9.6 if phase == "during" and t >= 65 else _background_throttling(phase, t)

    metrics = _series(CART_POD, "cpu_throttled", pegged)
    found = diagnose(bc.case(_quiet_logs(), metric_rows=metrics))
    assert (found.service, found.fault, found.rule) == (
        "cartservice",
        FaultType.CPU_SATURATION,
        "cpu_pegged",
    )


def test_a_gc_sawtooth_is_not_memory_growth_a_lasting_rise_is() -> None:
    peak = 57 * 2**20

    def sawtooth(phase: str, t: float) -> float:
        return peak * (1 - 0.06 * (1 - (t % 30) / 30))  # the heap regrows, then drops back

    quiet = diagnose(
        bc.case(_quiet_logs(), metric_rows=_series(CART_POD, "memory_working_set", sawtooth))
    )
    assert quiet.rule != "memory_growth"

    def leak(phase: str, t: float) -> float:
        return sawtooth(phase, t) * (1.4 if phase == "during" else 1.0)

    grown = diagnose(
        bc.case(_quiet_logs(), metric_rows=_series(CART_POD, "memory_working_set", leak))
    )
    assert (grown.service, grown.rule) == ("cartservice", "memory_growth")


def test_probe_timeouts_the_cluster_already_shows_are_background() -> None:
    timeout = "Readiness probe failed: timeout: health rpc did not complete within 1s"
    rows = [("pre", "Unhealthy", CART_POD, timeout)] * 2 + [
        ("during", "Unhealthy", CART_POD, timeout)
    ] * 3
    found = diagnose(bc.case(_quiet_logs(), bc.events(rows)))
    assert found.rule != "probe_timeouts"  # 3 during where pre predicts 2: not rarer before
    persistent = [("during", "Unhealthy", CART_POD, timeout)] * 8
    found = diagnose(bc.case(_quiet_logs(), bc.events(persistent)))
    assert (found.service, found.rule) == ("cartservice", "probe_timeouts")


def _timed(phase: str, service: str, stamped: list[tuple[float, str]]) -> pd.DataFrame:
    pod = f"{service}-abcdef1234-x1y2z"
    return pd.DataFrame(
        [(phase, ts, pod, service, line) for ts, line in stamped],
        columns=["phase", "ts", "pod", "service", "line"],
    )


def test_a_burst_of_caller_complaints_is_a_blip_a_steady_stream_is_a_fault() -> None:
    complaint = bc.go_error("[PlaceOrder] failed calling cartservice", NO_HOST)
    blip = pd.concat(
        [
            _quiet_logs(),
            _timed("during", "checkoutservice", [(90.0 + i / 2, complaint) for i in range(6)]),
        ]
    )
    assert diagnose(bc.case(blip)).rule != "callers_dns_error"
    stream = pd.concat(
        [
            _quiet_logs(),
            _timed("during", "checkoutservice", [(61.0 + 5 * i, complaint) for i in range(12)]),
        ]
    )
    found = diagnose(bc.case(stream))
    assert (found.service, found.fault) == ("cartservice", FaultType.DNS_FAULT)


def test_complaints_at_the_pre_windows_own_rate_are_background() -> None:
    deadline = "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
    warning = bc.go_error("[GetAds] failed calling adservice", deadline)
    steady = [(start + 4 * i, warning) for start in (0.0,) for i in range(15)]
    logs = pd.concat(
        [
            _quiet_logs(),
            _timed("pre", "frontend", steady),
            _timed("during", "frontend", [(60.0 + t, line) for t, line in steady]),
        ]
    )
    assert diagnose(bc.case(logs)).rule != "callers_deadline"
