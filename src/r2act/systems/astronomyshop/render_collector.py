"""OTLP log records as the collector's ``debug`` exporter prints them on the collector pod.

r2act's values end the logs pipeline in ``debug/logs`` at ``verbosity: detailed``
(``deploy/astronomyshop/values.yaml``), so a record a service exports is read from the
stdout of the collector pod on the service's node (a DaemonSet, ``otel-collector-agent``;
the chart's collector is ``otelcol-contrib`` 0.151.0, ``daemonset.yaml`` L47). The exporter
is not in the pinned reference, so its output shape is an **assumption** taken from
``open-telemetry/opentelemetry-collector`` ``exporter/debugexporter`` (listed in
``docs/systems.md``): per export, a zap console line ``<time>\\tinfo\\tLogs\\t{fields,
"resource logs": n, "log records": n}``, then one zap entry whose message is the
``otlptext`` rendering (``ResourceLog #0``, ``Resource attributes:``, ``ScopeLogs #0``,
``InstrumentationScope``, ``LogRecord #0`` with its timestamps, severity, ``Body:
Str(...)``, ``Attributes:``, trace and span ids, flags), which the kubelet stores line by
line, the component's fields after a tab on the last one.

Simplifications, named so a reader knows: each occurrence is exported alone (one
resource, one scope, one record per export; the SDKs' and the collector's batch
processors would group records arriving within a batch window); the resource holds the
SDK's ``service.name`` and the attributes the chart's pipeline adds (``k8sattributes``,
``resourcedetection`` env/system, ``resource``: ``service.instance.id`` from the pod UID),
not every SDK-specific ``telemetry.*`` or process attribute.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache

from r2act.schema import LogLine
from r2act.systems.astronomyshop.render_formats import NAMESPACE, pod_uid
from r2act.systems.astronomyshop.texts import T
from r2act.systems.logformats import iso_millis
from r2act.systems.render import RelayIdentity

COLLECTOR_APP = "opentelemetry-collector"
"""The collector pod's container name and ``app`` (the chart's DaemonSet, ``daemonset.yaml``)."""
NODE = "sim-worker"
"""The node every pod runs on: the simulated cluster's one node, as its scheduler events
name it (``cluster/sim/plans.py``, ``Successfully assigned ... to sim-worker``). On the
kind test bed (``deploy/astronomyshop/kind``: two workers) it is one of
``r2act-astronomy-worker``/``-worker2``, one collector pod each."""
COMPONENT_FIELDS = {
    "otelcol.component.id": "debug/logs",
    "otelcol.component.kind": "exporter",
    "otelcol.signal": "logs",
}
"""The fields the collector's logger adds to a component's entries (assumption, see above)."""
SEVERITY = {"TRACE": 1, "DEBUG": 5, "INFO": 9, "WARN": 13, "ERROR": 17, "FATAL": 21}
"""OTLP SeverityNumber of each level (the log data model's ranges)."""
SEVERITY_NAME = {1: "Trace", 5: "Debug", 9: "Info", 13: "Warn", 17: "Error", 21: "Fatal"}
"""pdata's ``SeverityNumber.String()``."""


@dataclass(frozen=True)
class CollectorPod:
    """The collector pod that prints a record: the node's ``agent-collector``."""

    pod: str
    container: str = COLLECTOR_APP
    app: str = COLLECTOR_APP


@dataclass(frozen=True)
class OtlpRecord:
    """One OTLP log record as a service's SDK exports it."""

    service: str
    """``service.name`` of the exporting SDK's resource (the pod's component label)."""
    pod: str
    """The exporting pod (``k8sattributes`` names it)."""
    scope: tuple[str, str]
    """InstrumentationScope name and version."""
    severity: str
    """SeverityText as the SDK sets it ("" when the SDK sets none)."""
    level: int
    """SeverityNumber (0: unspecified)."""
    body: str
    attributes: tuple[tuple[str, str], ...] = field(default=())
    """(key, pdata value text: ``Str(x)``, ``Int(1)``, ``Double(2.5)``, ``Bool(true)``)."""
    trace: tuple[str, str, int] = ("", "", 0)
    """(trace id, span id, flags); empty outside a span."""


def s(value: object) -> str:
    """pdata's text of a string value."""
    return f"Str({value})"


def i(value: int) -> str:
    """pdata's text of an int value."""
    return f"Int({value})"


def d(value: float) -> str:
    """pdata's text of a double value."""
    return f"Double({value})"


def pdata_time(ts: float) -> str:
    """``pcommon.Timestamp.String()``: Go's ``time.Time.String()`` in UTC (trailing zeros of
    the fraction trimmed; a float epoch holds microseconds, so the nanoseconds are 000)."""
    sec, frac_us = divmod(round(ts * 1e6), 1_000_000)
    frac = f"{frac_us:06d}000".rstrip("0")
    return f"{_go_second(sec)}{'.' + frac if frac else ''} +0000 UTC"


@lru_cache(maxsize=8192)
def _go_second(sec: int) -> str:
    return datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%d %H:%M:%S")


@lru_cache(maxsize=1024)
def _head(service: str, pod: str, scope: tuple[str, str], host: str) -> tuple[str, ...]:
    """The lines before a record's own (resource and scope), the same for every record a
    pod exports under one scope. ``host.name`` and ``os.type`` are the collector's own:
    ``resourcedetection``'s system detector reads the host it runs on and overrides by
    default."""
    attr = T("as.otel.attribute")
    deployment = pod.rsplit("-", 2)[0]
    resource = (
        ("service.name", s(service)),
        ("service.namespace", s("otel-demo")),
        ("host.name", s(host)),
        ("os.type", s("linux")),
        ("k8s.namespace.name", s(NAMESPACE)),
        ("k8s.pod.name", s(pod)),
        ("k8s.pod.uid", s(pod_uid(pod))),
        ("k8s.node.name", s(NODE)),
        ("k8s.deployment.name", s(deployment)),
        ("service.instance.id", s(pod_uid(pod))),
    )
    return (
        T("as.otel.resource_log")(0),
        T("as.otel.resource_schema")(""),
        T("as.otel.resource_attrs")(),
        *(attr(k, v) for k, v in resource),
        T("as.otel.scope_logs")(0),
        T("as.otel.scope_schema")(""),
        T("as.otel.scope")(*scope),
        T("as.otel.record")(0),
    )


def debug_text(ts: float, observed: float, record: OtlpRecord, host: str = "") -> list[str]:
    """The ``otlptext`` lines of one record (the detailed verbosity's message), as the
    collector on ``host`` prints it."""
    attr = T("as.otel.attribute")
    level = record.level
    lines = [
        *_head(record.service, record.pod, record.scope, host),
        T("as.otel.observed")(pdata_time(observed)),
        T("as.otel.timestamp")(pdata_time(ts)),
        T("as.otel.severity_text")(record.severity),
        T("as.otel.severity_number")(SEVERITY_NAME.get(level, "Unspecified"), level),
        *T("as.otel.body")(s(record.body)).split("\n"),
    ]
    if record.attributes:
        lines.append(_ATTRIBUTES)
        for k, v in record.attributes:
            lines.extend(attr(k, v).split("\n"))
    trace_id, span_id, flags = record.trace
    lines += [T("as.otel.trace_id")(trace_id), T("as.otel.span_id")(span_id)]
    lines.append(T("as.otel.flags")(flags))
    return lines


def _fields(extra: dict[str, int] | None = None) -> str:
    return json.dumps({**COMPONENT_FIELDS, **(extra or {})}, separators=(", ", ": "))


_ATTRIBUTES = T("as.otel.attributes")()
_HEADER = f"\tinfo\t{T('as.otel.header')()}\t" + _fields({"resource logs": 1, "log records": 1})
_TAIL = "\t" + _fields()
new = tuple.__new__
"""``tuple.__new__``: builds a ``LogLine`` without the NamedTuple constructor's extra frame."""


def debug_lines(
    ts: float, record: OtlpRecord, collector: RelayIdentity, export_delay: float = 0.2
) -> list[LogLine]:
    """What the collector pod's log holds for one exported record: the exporter's summary
    line, then the record's block (its first line stamped, the fields after the last)."""
    at = ts + export_delay
    stamp = iso_millis(at)
    body = debug_text(ts, ts + export_delay / 2, record, collector.pod)
    body[0] = f"{stamp}\tinfo\t{body[0]}"
    body.append(_TAIL)
    pod, container, app = collector.pod, collector.container, collector.app
    head = new(LogLine, (at, pod, container, app, stamp + _HEADER))
    return [head, *(new(LogLine, (at, pod, container, app, line)) for line in body)]
