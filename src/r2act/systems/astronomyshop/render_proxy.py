"""The entry point's lines: Envoy's access log of each request, a record for the collector.

frontend-proxy's only access logger is ``envoy.access_loggers.open_telemetry``
(``envoy.tmpl.yaml`` L78-L130): per request, one OTLP record whose body is the L90 format
(ending in a newline, which the debug exporter prints as is), with the attributes L96-L130
list and the resource's ``service.name`` (L91-L95). The proxy's own stdout holds no
per-request line, so ``RENDERERS.request`` is None and the record is rendered by
``proxy_request`` for the collector pod.

What a request shows: 200 from the frontend (``via_upstream``); 500 when the frontend's
handler failed (an API handler's thrown gRPC error: Next.js answers 500; the engine's kind
is then ``upstream|...``, the frontend answered); 503 ``UF`` with Envoy's
connection-failure details only when the frontend itself could not be reached. The
load generator's requests carry no ``X-Forwarded-For``; its user agent is a named
parameter (``USER_AGENT``). ``url.path`` is ``%REQ(:PATH)%``, query included;
``url.query`` (no ``:QUERY`` pseudo-header exists) and ``url.template`` (no route has a
name) print Envoy's ``-`` for an unset value. The record carries the request's trace
context (Envoy's tracing is on, L18-L32): its server span of the route, an error span
when the request failed (``PodIdentity.traces``: the kept span when traces are collected).
Pod addresses are drawn from the deployment's
name, not the engine's pod names (the hook is not told the upstream pod).
"""

from __future__ import annotations

import random

from r2act.schema import LogLine
from r2act.systems.astronomyshop.render_collector import OtlpRecord, debug_lines, s
from r2act.systems.astronomyshop.render_data import AD_KEYS, PRODUCTS
from r2act.systems.astronomyshop.render_draw import occurrence
from r2act.systems.astronomyshop.render_formats import envoy_access_body, pod_ip, trace_ids
from r2act.systems.logformats import uuid_text
from r2act.systems.render import PodIdentity, RelayIdentity, RequestError, Sized, SpanAsk

USER_AGENT = "python-requests/2.32.5"
"""Locust's HttpUser sends the requests library's default User-Agent (the version is the
one the load generator's image resolves: an assumption, the pin is not in the reference)."""
FRONTEND_POD = "frontend"
"""The upstream Envoy names: the frontend Service's endpoints (a pod IP on port 8080)."""
REFUSED = (
    "UF",
    "upstream_reset_before_response_started{remote_connection_failure}",
    "delayed_connect_error:_Connection_refused",
)
"""Envoy's RESPONSE_FLAGS, RESPONSE_CODE_DETAILS and transport failure when nothing listens
on the upstream (Envoy's access-log field values; not in the reference)."""
SCOPE = ("", "")
"""Envoy's OpenTelemetry access logger sets no InstrumentationScope."""


def answered(kind: str) -> bool:
    """The frontend answered the request (with an error): its failure is its handler's
    call's (``upstream|<kind>|<service>``), not a connection Envoy could not open."""
    return kind.startswith("upstream")


def _path(route_path: str, r: random.Random) -> str:
    """The path the load generator requests for a route (``locustfile.py`` L120-L225)."""
    if route_path.endswith("*"):
        return route_path[:-1] + PRODUCTS[int(r.random() * len(PRODUCTS))][0]
    if route_path == "/api/recommendations":
        return f"{route_path}?productIds={PRODUCTS[int(r.random() * len(PRODUCTS))][0]}"
    if route_path == "/api/data/":
        pick = int(r.random() * (len(AD_KEYS) + 1))
        return route_path if pick == len(AD_KEYS) else f"{route_path}?contextKeys={AD_KEYS[pick]}"
    return route_path


def proxy_request(  # noqa: PLR0917 - the request hook's arguments, after the collector
    logger: PodIdentity,
    collector: RelayIdentity,
    method: str,
    route_path: str,
    extra_ms: float,
    error: RequestError = None,
) -> Sized:
    """(lines, renderer) of one request's access record on the collector pod."""
    scope = f"{method} {route_path}"
    mean = logger.route_ms.get(scope, 20.0) + extra_ms
    refused = error is not None and error[1] == "frontend" and not answered(error[0])
    status = 503 if refused else (500 if error is not None else 200)
    flags = REFUSED if refused else ("-", "via_upstream", "-")
    local = f"{pod_ip(logger.pod)}:8080"
    pod, traces = logger.pod, logger.traces
    ask: SpanAsk = ("op", scope, error is not None)

    def record(ts: float, r: random.Random) -> tuple[float, OtlpRecord]:
        path = _path(route_path, r)
        took = int(mean * (0.6 + 0.8 * r.random()))
        remote = f"{pod_ip('load-generator')}:{32768 + int(r.random() * 28000)}"
        upstream = f"{pod_ip(FRONTEND_POD)}:8080"
        sent = 0 if refused else (21 if error is not None else 200 + int(r.random() * 4000))
        received = 0 if method == "GET" else 60 + int(r.random() * 900)
        request_id = uuid_text(r)
        port = 40000 + int(r.random() * 20000)
        trace_id, span_id, ts = traces.placed(ask, ts, trace_ids(r))  # the draws' old order
        body = (
            envoy_access_body(
                (ts, method, path, status),
                flags,
                (
                    received,
                    sent + (91 if refused else 0),
                    took,
                    "-" if refused else str(max(0, took - 1)),
                ),
                (USER_AGENT, request_id),
                (
                    upstream,
                    "frontend",
                    f"{pod_ip(pod)}:{port}",
                    local,
                    remote,
                ),
            )
            + "\n"
        )
        return ts, OtlpRecord(
            service="frontend-proxy",
            pod=pod,
            scope=SCOPE,
            severity="",
            level=0,
            body=body,
            attributes=(
                ("destination.address", s(upstream.rsplit(":", 1)[0])),
                ("event.name", s("proxy.access")),
                ("server.address", s(local)),
                ("source.address", s(remote.rsplit(":", 1)[0])),
                ("upstream.cluster", s("frontend")),
                ("upstream.host", s(upstream)),
                ("user_agent.original", s(USER_AGENT)),
                ("url.full", s(f"http://frontend-proxy:8080{path}")),
                ("url.path", s(path)),
                ("url.query", s("-")),
                ("url.template", s("-")),
            ),
            trace=(trace_id, span_id, 1),
        )

    sample = debug_lines(0.0, record(0.0, occurrence(pod, 0.0))[1], collector)

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        at, made = record(ts, occurrence(pod, ts))
        out.extend(debug_lines(at, made, collector))

    return len(sample), render
