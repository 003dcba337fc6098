"""PromQL range queries for the real cluster, through prometheus-api-client.

The only module that imports ``prometheus_api_client``. It turns the client's JSON into
``MetricSeries`` and its failures into r2act errors: connection problems and 429/5xx are
transient (retried with backoff), a 4xx means the query itself is wrong and is permanent.
The client's own urllib3 retries are switched off so that one retry policy, with an
injectable sleep, governs every call.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from prometheus_api_client import PrometheusConnect
from prometheus_api_client.exceptions import PrometheusApiClientException
from urllib3.util.retry import Retry

from r2act.cluster.retry import RetryPolicy
from r2act.errors import PermanentClusterError, TransientClusterError
from r2act.schema import MetricSeries, TimeWindow

_STATUS = re.compile(r"HTTP Status Code (\d{3})")


def format_step(step_s: float) -> str:
    """A query_range step Prometheus accepts: plain seconds, no trailing '.0'."""
    if step_s <= 0:
        raise ValueError(f"metrics step must be positive, got {step_s}")
    return f"{step_s:g}"


def _series(name: str, raw: Mapping[str, Any]) -> MetricSeries:
    labels = {str(k): str(v) for k, v in dict(raw.get("metric") or {}).items()}
    points = [(float(ts), float(value)) for ts, value in raw.get("values") or []]
    return MetricSeries(query=name, labels=labels, points=points)


class PrometheusMetrics:
    """A Prometheus server answering the campaign's PromQL queries."""

    def __init__(
        self,
        url: str,
        *,
        retry: RetryPolicy | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        self.url = url.rstrip("/")
        self._retry = retry or RetryPolicy()
        self._timeout = timeout_s
        self._client = PrometheusConnect(
            url=self.url, disable_ssl=True, retry=Retry(total=0, redirect=0), timeout=timeout_s
        )

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._client.close()

    def _guard(self, what: str, fn: Any) -> Any:
        def once() -> Any:
            try:
                return fn()
            except PrometheusApiClientException as exc:
                found = _STATUS.search(str(exc))
                status = int(found.group(1)) if found else 0
                message = f"Prometheus {self.url}: {what}: {exc}"
                if status == 429 or status >= 500 or status == 0:
                    raise TransientClusterError(message) from exc
                raise PermanentClusterError(message) from exc
            except OSError as exc:  # requests' errors are OSErrors: refused, reset, timeout
                raise TransientClusterError(
                    f"Prometheus {self.url} unreachable during {what}: {exc}"
                ) from exc

        return self._retry.call(once)

    def reachable(self, queries: Mapping[str, str] | None = None) -> bool:
        """True when the server answers a trivial query and evaluates every given query."""
        try:
            self._guard("instant query", lambda: self._client.custom_query("vector(1)"))
            for name, query in (queries or {}).items():
                self._guard(f"query {name}", lambda q=query: self._client.custom_query(q))
        except (TransientClusterError, PermanentClusterError):
            return False
        return True

    def query_range(
        self, window: TimeWindow, queries: Mapping[str, str], step_s: float
    ) -> Iterator[MetricSeries]:
        """Every series of every named query over the window, at the campaign's step."""
        start = datetime.fromtimestamp(window.start, tz=UTC)
        end = datetime.fromtimestamp(window.end, tz=UTC)
        step = format_step(step_s)
        for name, query in queries.items():
            result = self._guard(
                f"query_range {name}",
                lambda q=query: self._client.custom_query_range(
                    q, start_time=start, end_time=end, step=step
                ),
            )
            for raw in result or []:
                yield _series(name, raw)
