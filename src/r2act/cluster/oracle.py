"""The one health oracle: which requests probe the system and what counts as healthy.

The simulated cluster and the Kubernetes adapter judge health by this definition only, so
a replay verdict means the same on both. A probe round sends one request per entry-point
route (the path made concrete with the system's first ``path_ids`` value, POSTs with the
fields its handler reads, ``System.probe_forms``, encoded as its handlers parse a body,
``System.probe_body``: a urlencoded form or a JSON object; a fresh connection each time, no
session cookie, redirects not followed) plus the health endpoint. A request succeeds when
it answers below 400 within ``LATENCY_BUDGET_MS``; the system is healthy when the health
endpoint answers, every deployment has its desired replicas available and the share of
failed probe requests is under the campaign's threshold. The Kubernetes adapter sends the
requests through the API server's service proxy and times them; the simulator computes
each request's chance of failing (failure probability plus the chance of exceeding the
budget under its latency spread) from the same routes, which is what a probe there would
observe on average.

Probes use fresh connections on purpose: HTTPChaos only intercepts connections opened
after its injection (Chaos Mesh's tproxy), so a prober with pooled keep-alive connections
would not see an injected route fault at all.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from r2act.schema import HealthReport, Topology
from r2act.systems import system_of

LATENCY_BUDGET_MS = 200.0
"""A page slower than this fails its probe (Online Boutique pages answer in tens of ms)."""
LATENCY_SPREAD = 0.35
"""Log-normal sigma of a page's latency around its mean (as the simulator renders it)."""
PAGE_FAILURE_LIMIT = 0.5
"""A route whose probe fails at least this often counts as a failing page."""


@dataclass(frozen=True)
class Probe:
    """One probe request: the route it stands for and what is sent."""

    scope: str
    method: str
    path: str
    form: tuple[tuple[str, str], ...] = ()
    encoding: Literal["form", "json"] = "form"
    """How ``form`` goes on the wire (``System.probe_body``)."""

    def json_body(self) -> dict[str, object]:
        """``form`` as the JSON object a ``json`` probe sends: each field by name, a value
        holding a JSON object's or array's text as that object (how ``System.probe_forms``
        writes a nested body), any other value as the string it is."""
        return {key: _json_value(value) for key, value in self.form}


def _json_value(text: str) -> object:
    if text[:1] not in ("{", "["):
        return text
    try:
        value: object = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict | list) else text


def probes(topology: Topology) -> list[Probe]:
    """One probe per entry-point route, in the topology's order."""
    system = system_of(topology)
    forms, ids, encoding = system.probe_forms, system.path_ids, system.probe_body
    out = []
    for route in topology.routes:
        path = route.path.replace("*", ids[0]) if ids else route.path
        form = forms.get(route.scope, ())
        out.append(Probe(route.scope, route.method, path, form, encoding))
    return out


def request_ok(status: int | None, took_ms: float) -> bool:
    """A probe request succeeded: an answer below 400 within the latency budget."""
    return status is not None and status < 400 and took_ms <= LATENCY_BUDGET_MS


def slow_share(mean_ms: float) -> float:
    """Chance that a page of mean latency ``mean_ms`` exceeds the budget (log-normal)."""
    if mean_ms <= 0:
        return 0.0
    z = math.log(LATENCY_BUDGET_MS / mean_ms) / LATENCY_SPREAD
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def failure_share(fail: float, mean_ms: float) -> float:
    """Chance that one probe request fails: it errors, or it answers too late."""
    fail = min(1.0, max(0.0, fail))
    return fail + (1.0 - fail) * slow_share(mean_ms)


def judge(
    ts: float,
    *,
    healthz_ok: bool,
    unavailable: Sequence[str],
    failures: Mapping[str, float],
    threshold: float,
) -> HealthReport:
    """The verdict from one probe round: ``failures`` maps each route to its failed share."""
    error_rate = sum(failures.values()) / len(failures) if failures else 0.0
    error_rate = min(1.0, max(0.0, error_rate))
    failing = sorted(s for s, share in failures.items() if share >= PAGE_FAILURE_LIMIT)
    frontend_ok = healthz_ok and not failing
    healthy = healthz_ok and not unavailable and error_rate < threshold
    if threshold <= 0:
        healthy = healthz_ok and not unavailable and error_rate <= 0.0
    reasons = []
    if not healthz_ok:
        reasons.append("health endpoint failed")
    if failing:
        reasons.append("pages failing: " + ", ".join(failing))
    if unavailable:
        reasons.append("unavailable: " + ", ".join(sorted(unavailable)))
    if error_rate >= threshold and error_rate > 0:
        reasons.append(f"probe error rate {error_rate:.3f} >= {threshold:.3f}")
    return HealthReport(
        ts=ts,
        healthy=healthy,
        frontend_ok=frontend_ok,
        unavailable=sorted(unavailable),
        error_rate=round(error_rate, 6),
        detail="; ".join(reasons),
    )
