"""Stand-in spans for the consumers of traces, until the simulator writes its own (issue 24).

``traced_run(root)`` collects Online Boutique's smoke campaign on the simulator through the
command line, then writes a plausible ``traces.jsonl.zst`` into every phase of every raw
incident, through the raw store's contract (``schema.rawstore.TRACES``: one zstd frame of
JSON lines, one object per span with the fields of ``schema.traces.Span``), and audits
the run. ``traced_dataset(root)`` also builds its dataset. Consumers (the dataset build,
the RCAEval export, the agent tools, the trace baseline) read only what the contract and
the dataset publish, never this module, so the lead can swap it for simulated spans.

What the spans look like:

- only the seven services Online Boutique v0.10.6 instruments emit spans (frontend,
  checkout, productcatalog, currency, payment, email, recommendation;
  ``shared/facts/astronomy-shop-traces-2026.md`` section 2.3); a call to cart, shipping
  or ad shows only as its caller's client span;
- two traces per second per phase (the first ones visiting every route once): a frontend
  server span for a route of the topology,
  a gRPC client span per call the route makes on the call graph (``Topology.routes`` and
  ``DeploymentSpec.calls``), and under it the callee's server span when the callee is
  instrumented; gRPC attributes (``rpc.system``, ``rpc.service``, ``rpc.method``,
  ``net.peer.name``) on the client spans, HTTP ones on the frontend's;
- during the fault window, the root-cause service's own work takes 20-40 ms longer and 30%
  of its calls fail (status ``error``), which shows on its own server spans or, for an
  uninstrumented service, on its callers' client spans; errors and latency propagate to
  the parents as they would.

The answer is in no span: no incident id, chaos object name or fault type name.

Integrity: the spans are added after collection, so ``COMPLETE``'s checksums no longer
cover the incident's files. The fixture recomputes them honestly, with the project's own
``schema.rawstore.file_digests`` over the incident directory (every other key of
``COMPLETE`` is kept), before the audit runs, so the audit's raw-checksum check passes
on the files as they now are.
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
import zstandard

from r2act.schema.rawstore import COMPLETE, INCIDENT_JSON, RAW_DIR, TRACES, file_digests
from r2act.schema.traces import Span
from r2act.systems import SYSTEMS

REPO = Path(__file__).resolve().parent.parent
INSTRUMENTED = frozenset(
    {
        "frontend",
        "checkoutservice",
        "productcatalogservice",
        "currencyservice",
        "paymentservice",
        "emailservice",
        "recommendationservice",
    }
)
_GRPC = {
    "productcatalogservice": ("hipstershop.ProductCatalogService", "GetProduct"),
    "currencyservice": ("hipstershop.CurrencyService", "Convert"),
    "cartservice": ("hipstershop.CartService", "GetCart"),
    "recommendationservice": ("hipstershop.RecommendationService", "ListRecommendations"),
    "shippingservice": ("hipstershop.ShippingService", "GetQuote"),
    "checkoutservice": ("hipstershop.CheckoutService", "PlaceOrder"),
    "paymentservice": ("hipstershop.PaymentService", "Charge"),
    "emailservice": ("hipstershop.EmailService", "SendOrderConfirmation"),
    "adservice": ("hipstershop.AdService", "GetAds"),
}
EXTRA_S = (0.02, 0.04)
"""Seconds the root-cause service's own work takes longer during the fault (uniform)."""
ERROR_SHARE = 0.3
"""Share of the root-cause service's calls that fail during the fault."""
PER_SECOND = 2
"""Traces started per second of every phase."""


def _r2act(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "r2act", *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"r2act {' '.join(args)} failed: {done.stderr[-2000:]}")


class _Tracer:
    """Spans of one incident: seeded by its id, so every run writes the same bytes."""

    def __init__(self, incident_id: str, system: str, root_cause: str) -> None:
        self.rng = random.Random(hashlib.sha256(incident_id.encode()).digest())
        self.topology = SYSTEMS[system]
        self.calls = {d.name: d.calls for d in self.topology.deployments}
        self.root_cause = root_cause
        self.spans: list[Span] = []
        self.faulty = False

    def _id(self, digits: int) -> str:
        return f"{self.rng.getrandbits(digits * 4):0{digits}x}"

    def _call(
        self, trace: str, parent: str, caller: str, callee: str, *, start: float, route: set[str]
    ) -> tuple[float, bool]:
        """The client span of ``caller`` -> ``callee`` (and the callee's server span and
        calls when it is instrumented); returns (duration, failed)."""
        client = self._id(16)
        rpc_service, method = _GRPC.get(callee, (f"{callee}.Service", "Call"))
        name = f"{rpc_service}/{method}"
        own = self.rng.uniform(0.001, 0.003)
        failed = False
        if self.faulty and callee == self.root_cause:
            own += self.rng.uniform(*EXTRA_S)
            failed = self.rng.random() < ERROR_SHARE
        duration = own
        if callee in INSTRUMENTED:
            server = self._id(16)
            inner, inner_failed = self._children(trace, server, callee, start + 0.0002, route)
            duration += inner
            failed = failed or inner_failed
            self.spans.append(
                Span(
                    trace,
                    server,
                    client,
                    callee,
                    name,
                    "server",
                    start + 0.0001,
                    duration,
                    "error" if failed else "unset",
                    {
                        "rpc.system": "grpc",
                        "rpc.service": rpc_service,
                        "rpc.method": method,
                        "rpc.grpc.status_code": 14 if failed else 0,
                    },
                )
            )
        total = duration + 0.0003
        self.spans.append(
            Span(
                trace,
                client,
                parent,
                caller,
                name,
                "client",
                start,
                total,
                "error" if failed else "unset",
                {
                    "rpc.system": "grpc",
                    "rpc.service": rpc_service,
                    "rpc.method": method,
                    "net.peer.name": callee,
                    "rpc.grpc.status_code": 14 if failed else 0,
                },
            )
        )
        return total, failed

    def _children(
        self, trace: str, parent: str, service: str, start: float, route: set[str]
    ) -> tuple[float, bool]:
        elapsed, failed = 0.0, False
        for callee in self.calls.get(service, []):
            if callee not in route:
                continue
            took, bad = self._call(
                trace, parent, service, callee, start=start + elapsed, route=route
            )
            elapsed += took
            failed = failed or bad
        return elapsed, failed

    def trace(self, start: float, faulty: bool, number: int) -> None:
        """The ``number``-th request of a phase through the entry point, at ``start``: the
        first ones visit every route once (so each window holds every operation, which
        methods comparing windows need), the rest follow the routes' weights."""
        self.faulty = faulty
        routes = self.topology.routes
        if number < len(routes):
            route = routes[number]
        else:
            route = self.rng.choices(routes, weights=[r.weight for r in routes])[0]
        entry = self.topology.entrypoint
        trace, root = self._id(32), self._id(16)
        own = self.rng.uniform(0.0005, 0.0015)
        failed = False
        if faulty and entry == self.root_cause:
            own += self.rng.uniform(*EXTRA_S)
            failed = self.rng.random() < ERROR_SHARE
        inner, inner_failed = self._children(trace, root, entry, start + own, set(route.services))
        failed = failed or inner_failed
        self.spans.append(
            Span(
                trace,
                root,
                "",
                entry,
                f"{route.method} {route.path}",
                "server",
                start,
                own + inner,
                "error" if failed else "unset",
                {
                    "http.method": route.method,
                    "http.route": route.path,
                    "http.status_code": 500 if failed else 200,
                },
            )
        )


def _span_line(span: Span) -> str:
    return json.dumps(span._asdict(), sort_keys=True)


def write_traces(incident_dir: Path) -> int:
    """Write every phase's traces file of one raw incident and recompute ``COMPLETE``'s
    checksums with ``file_digests``; returns the number of spans written."""
    incident: dict[str, Any] = json.loads((incident_dir / INCIDENT_JSON).read_text())
    planned = incident["incident"]
    tracer = _Tracer(planned["id"], planned["system"], planned["service"])
    total = 0
    for phase, (start, end) in incident["windows"].items():
        tracer.spans = []
        at, number = float(start) + 0.25, 0
        while at < float(end):
            tracer.trace(at, faulty=phase == "during", number=number)
            at, number = at + 1.0 / PER_SECOND, number + 1
        text = "".join(_span_line(s) + "\n" for s in tracer.spans)
        data = zstandard.ZstdCompressor(level=1, write_checksum=True).compress(text.encode())
        (incident_dir / phase / TRACES).write_bytes(data)
        total += len(tracer.spans)
    complete_path = incident_dir / COMPLETE
    complete = json.loads(complete_path.read_text())
    complete["sha256"] = file_digests(incident_dir)
    complete_path.write_text(json.dumps(complete, sort_keys=True) + "\n")
    return total


def traced_run(root: Path, manifest: Path | None = None) -> Path:
    """A collected, traced and audited run of ``manifest`` (the smoke campaign) under
    ``root``."""
    run = root / "run"
    _r2act("collect", str(manifest or REPO / "campaigns" / "smoke.yaml"), "--out", str(run), "-q")
    for incident_dir in sorted((run / RAW_DIR).iterdir()):
        if (incident_dir / COMPLETE).is_file():
            write_traces(incident_dir)
    _r2act("audit", str(run), "--workers", "1")
    return run


def smoke_with_baseline(path: Path, pre_s: int) -> Path:
    """The smoke campaign with a ``pre_s``-second baseline window, written to ``path``
    (methods that fit a baseline on several metric steps need more than its 30 s)."""
    manifest = yaml.safe_load((REPO / "campaigns" / "smoke.yaml").read_text())
    manifest["phases"]["pre_s"] = pre_s
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return path


def traced_dataset(root: Path, manifest: Path | None = None) -> Path:
    """The dataset of ``traced_run(root, manifest)``, built through the command line."""
    run = traced_run(root, manifest)
    dataset = root / "dataset"
    _r2act("dataset", "build", str(run), "--out", str(dataset), "-q")
    return dataset
