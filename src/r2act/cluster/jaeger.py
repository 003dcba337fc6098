"""Spans from a Jaeger query service, for the real cluster (issue 24's fourth modality).

Both systems keep their spans in Jaeger: the Astronomy Shop's chart ships one, and
``deploy/tracing/`` gives Online Boutique r2act's own. This module reads them back through
Jaeger's HTTP JSON query API (``/api/services``, ``/api/traces``, times in microseconds)
and turns each span into a ``schema.traces.Span``. How a request reaches the API is the
caller's ``Get``: a plain URL (``HttpGet``, urllib3) or the API server's service proxy
(``kube.api.KubeApi.service_get``). Every request goes through ``cluster.retry``.

Jaeger answers per service, and a trace that crosses services is returned once per
service it touches, so spans are deduplicated by (trace id, span id). A query answers at
most ``limit`` traces; a time slice that fills it is halved until it does not (down to
``min_slice_s``), so a busy phase is read in full and in bounded pieces (only a slice of
``min_slice_s`` that still fills the limit, more traces of one service in one second than
the limit, is read up to the limit).

How an OpenTelemetry span looks in Jaeger's JSON (what ``span_of`` undoes): the kind is the
``span.kind`` tag, a status other than UNSET is ``otel.status_code`` (``OK``/``ERROR``) with
``otel.status_description``, an error also sets ``error=true``, the instrumentation scope
is ``otel.scope.*`` (and the deprecated ``otel.library.*``), the parent is a ``CHILD_OF``
reference and ``service.name`` is the process's ``serviceName``
(open-telemetry/opentelemetry-collector-contrib ``pkg/translator/jaeger/README.md``;
opentelemetry-specification ``specification/common/mapping-to-non-otlp.md``).
"""

from __future__ import annotations

import json
import math
import urllib.parse
from collections import deque
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

import urllib3

from r2act.cluster.retry import RetryPolicy
from r2act.errors import PermanentClusterError, TransientClusterError
from r2act.schema import TimeWindow
from r2act.schema.traces import SPAN_KINDS, AttributeValue, Span, SpanKind, SpanStatus, keeps_trace

Get = Callable[[str, Sequence[tuple[str, str]]], bytes]
"""One GET of a query-API path (``/api/...``) with its query parameters: the body of a 2xx
answer; otherwise TransientClusterError (connection, 429, 5xx) or PermanentClusterError."""

TRANSLATION_TAGS = frozenset(
    {
        "span.kind",
        "otel.status_code",
        "otel.status_description",
        "error",
        "otel.scope.name",
        "otel.scope.version",
        "otel.library.name",
        "otel.library.version",
        "internal.span.format",
    }
)
"""Tags the OTLP-to-Jaeger translation (and Jaeger itself: ``internal.span.format``) adds,
which are not span attributes; they become the Span's kind and status, or are dropped."""

_US = 1_000_000

FIX = (
    "deploy the trace store (deploy/tracing/apply.sh for Online Boutique; the Astronomy "
    "Shop's chart ships Jaeger) or point the manifest's traces.store at its query URL"
)
"""What a user does when the store cannot be reached."""


class HttpGet:
    """GETs against a Jaeger query URL (``traces.store``), with urllib3's own retries off:
    one policy, ``cluster.retry``'s, governs every attempt."""

    def __init__(self, base_url: str, *, timeout_s: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._pool = urllib3.PoolManager(
            retries=False, timeout=urllib3.Timeout(total=timeout_s), maxsize=2
        )

    def close(self) -> None:
        """Release the connection pool."""
        self._pool.clear()

    def __call__(self, path: str, params: Sequence[tuple[str, str]]) -> bytes:
        """The body of ``GET <base><path>?<params>``; r2act errors otherwise."""
        query = urllib.parse.urlencode(list(params))
        url = f"{self.base_url}{path}" + (f"?{query}" if query else "")
        try:
            response = self._pool.request("GET", url, redirect=False)
        except urllib3.exceptions.HTTPError as exc:
            raise TransientClusterError(f"GET {url}: no answer: {exc}") from exc
        status = int(response.status)
        if 200 <= status < 300:
            return bytes(response.data)
        message = f"GET {url}: HTTP {status}: {response.data[:200].decode('utf-8', 'replace')}"
        if status == 429 or status >= 500:
            raise TransientClusterError(message)
        raise PermanentClusterError(message)


def _tag_value(tag: Mapping[str, Any]) -> AttributeValue:
    value = tag.get("value")
    kind = str(tag.get("type") or "string")
    if kind == "bool":
        return value if isinstance(value, bool) else str(value).lower() == "true"
    if kind == "int64":
        return int(value) if value is not None else 0
    if kind == "float64":
        return float(value) if value is not None else 0.0
    return "" if value is None else str(value)


def _hex(value: Any, digits: int) -> str:
    """An id as lower-case hex of ``digits`` digits (Jaeger drops a 128-bit id's zero high
    half, printing 16 digits)."""
    return str(value or "").lower().rjust(digits, "0")


def _status(tags: Mapping[str, AttributeValue]) -> SpanStatus:
    code = str(tags.get("otel.status_code", "")).upper()
    if code == "ERROR" or tags.get("error") in (True, "true"):
        return "error"
    if code == "OK":
        return "ok"
    return "unset"


def _kind(tags: Mapping[str, AttributeValue]) -> SpanKind:
    found = str(tags.get("span.kind", "")).lower()
    for kind in SPAN_KINDS:
        if kind == found:
            return kind
    return "internal"  # the OTLP translation writes no span.kind for an unspecified kind


def span_of(raw: Mapping[str, Any], processes: Mapping[str, Any]) -> Span:
    """One span of Jaeger's JSON as r2act's Span (times from microseconds to seconds)."""
    tags = {str(t.get("key")): _tag_value(t) for t in raw.get("tags") or []}
    trace_id = _hex(raw.get("traceID"), 32)
    parent = ""
    for ref in raw.get("references") or []:
        if ref.get("refType") == "CHILD_OF" and _hex(ref.get("traceID"), 32) == trace_id:
            parent = _hex(ref.get("spanID"), 16)
            break
    process = processes.get(str(raw.get("processID"))) or raw.get("process") or {}
    return Span(
        trace_id=trace_id,
        span_id=_hex(raw.get("spanID"), 16),
        parent_id=parent,
        service=str(process.get("serviceName", "")),
        operation=str(raw.get("operationName", "")),
        kind=_kind(tags),
        start=int(raw.get("startTime") or 0) / _US,
        duration_s=int(raw.get("duration") or 0) / _US,
        status=_status(tags),
        attributes={k: v for k, v in tags.items() if k not in TRANSLATION_TAGS},
    )


class JaegerTraces:
    """One Jaeger query service: its spans per time window, and whether it receives any."""

    def __init__(
        self,
        get: Get,
        *,
        where: str,
        retry: RetryPolicy | None = None,
        limit: int = 500,
        min_slice_s: float = 1.0,
        close: Callable[[], None] | None = None,
    ) -> None:
        """``where`` names the store for messages (its URL or the proxied service)."""
        if limit < 1:
            raise ValueError(f"trace query limit must be positive, got {limit}")
        self.where = where
        self._get = get
        self._retry = retry or RetryPolicy()
        self._limit = limit
        self._min_slice_us = max(1, int(min_slice_s * _US))
        self._close = close

    def close(self) -> None:
        """Release whatever the transport holds."""
        if self._close is not None:
            self._close()

    def _data(self, path: str, params: Sequence[tuple[str, str]]) -> list[Any]:
        def once() -> list[Any]:
            body = self._get(path, params)
            try:
                decoded = json.loads(body) if body else {}
            except ValueError as exc:
                raise PermanentClusterError(
                    f"answered no JSON ({exc}); is that Jaeger's query service (port 16686, "
                    "with its base path)?"
                ) from exc
            if not isinstance(decoded, dict):
                raise PermanentClusterError(f"answered {type(decoded).__name__}, not an object")
            errors = decoded.get("errors")
            if errors:
                raise TransientClusterError(f"answered errors: {errors}")
            return list(decoded.get("data") or [])

        try:
            return self._retry.call(once)
        except TransientClusterError as exc:
            raise TransientClusterError(
                f"Jaeger query API at {self.where} unreachable ({path}): {exc} ({FIX})"
            ) from exc
        except PermanentClusterError as exc:
            raise PermanentClusterError(
                f"Jaeger query API at {self.where} refused {path}: {exc} ({FIX})"
            ) from exc

    def services(self) -> list[str]:
        """Every service the store has spans of, sorted."""
        return sorted(str(s) for s in self._data("/api/services", ()))

    def _query(self, service: str, start_us: int, end_us: int, limit: int) -> list[Any]:
        params = (
            ("service", service),
            ("start", str(start_us)),
            ("end", str(end_us)),
            ("limit", str(limit)),
        )
        return [t for t in self._data("/api/traces", params) if isinstance(t, dict)]

    def _slices(self, service: str, start_us: int, end_us: int) -> Iterator[list[Any]]:
        """The service's traces in [start, end], oldest slice first, no slice over the limit."""
        pending = deque([(start_us, end_us)])
        while pending:
            lo, hi = pending.popleft()
            found = self._query(service, lo, hi, self._limit)
            if len(found) >= self._limit and hi - lo > self._min_slice_us:
                mid = lo + (hi - lo) // 2
                pending.extendleft([(mid + 1, hi), (lo, mid)])
                continue
            yield found

    def traces(self, window: TimeWindow, sample: float) -> Iterator[Sequence[Span]]:
        """Every span of a kept trace that started in the window, once, in batches."""
        start_us = math.floor(window.start * _US)
        end_us = math.ceil(window.end * _US)
        seen: set[tuple[str, str]] = set()
        for service in self.services():
            for found in self._slices(service, start_us, end_us):
                batch: list[Span] = []
                for trace in found:
                    if not keeps_trace(_hex(trace.get("traceID"), 32), sample):
                        continue
                    processes = trace.get("processes") or {}
                    for raw in trace.get("spans") or []:
                        span = span_of(raw, processes)
                        key = (span.trace_id, span.span_id)
                        if key in seen or not window.start <= span.start <= window.end:
                            continue
                        seen.add(key)
                        batch.append(span)
                if batch:
                    yield batch

    def receiving(self, emitters: Collection[str], now: float, recent_s: float) -> str | None:
        """None when the store answers and holds a span of one of ``emitters`` started in
        the last ``recent_s`` seconds; otherwise what is wrong, with the fix."""
        try:
            listed = self.services()
            known = [s for s in listed if s in emitters]
            if not known:
                return (
                    f"trace store {self.where} has no spans of an instrumented service "
                    f"(it lists: {', '.join(listed) or 'none'}); check that the services "
                    "export to the collector and the collector to the store "
                    "(deploy/README.md, 'Traces')"
                )
            end_us = math.ceil(now * _US)
            start_us = end_us - int(recent_s * _US)
            for service in known:
                if self._query(service, start_us, end_us, 1):
                    return None
        except (TransientClusterError, PermanentClusterError) as exc:
            return str(exc)
        return (
            f"trace store {self.where} received no span in the last {recent_s:g}s from "
            f"{', '.join(known)}; is the load generator running and the collector up "
            "(deploy/README.md, 'Traces')?"
        )
