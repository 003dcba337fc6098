"""Default Chaos Mesh parameters per fault type and intensity, and default Prometheus queries.

Kept apart from the models so the numbers that shape the benchmark live in one readable
table. Memory pressure lowers the container's limit to a share of its memory request, drawn
per incident from the intensity's range: 70-85% (moderate) and 55-68% (severe). Every share
lies above the start-up working set (half the request) and below the working set under
load (90% of it, ``systems.onlineboutique.WORKING_SET_SHARE``), so the new pod becomes
ready, takes traffic and is OOM-killed under load, sooner the lower the limit. A limit
below the start-up working set would never become ready, and the Deployment's
RollingUpdate would keep the old pod serving: users would never see the fault. A manifest's
``limit_percent`` fixes the share for every incident of its intensity.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from pydantic import JsonValue

from r2act.schema import FaultType, Intensity

_M, _S = Intensity.MODERATE, Intensity.SEVERE

FAULT_DEFAULTS: Final[dict[FaultType, dict[Intensity, dict[str, JsonValue]]]] = {
    FaultType.POD_FAILURE: {_M: {}, _S: {}},
    FaultType.CPU_SATURATION: {
        _M: {"workers": 1, "load": 80},
        _S: {"workers": 2, "load": 100},
    },
    FaultType.MEMORY_PRESSURE: {
        _M: {"limit_percent_range": [70, 85]},
        _S: {"limit_percent_range": [55, 68]},
    },
    FaultType.NETWORK_DELAY: {
        _M: {"latency": "200ms", "jitter": "50ms", "correlation": "25"},
        _S: {"latency": "1200ms", "jitter": "200ms", "correlation": "25"},
    },
    FaultType.HTTP_ERROR: {_M: {"code": 500}, _S: {"code": 503}},
    FaultType.HTTP_ABORT: {_M: {}, _S: {}},
    FaultType.DNS_FAULT: {_M: {}, _S: {}},
    FaultType.DNS_RANDOM: {_M: {}, _S: {}},
    FaultType.FEATURE_FLAG: {_M: {}, _S: {}},
}
"""Overridable parameters per fault type and intensity (see ``campaigns.manifest``). A
feature flag's come from its flag (``FeatureFlag.variant`` per intensity), not from here."""

NAMESPACE_PLACEHOLDER: Final = "$namespace"
"""Written in a query where the campaign's namespace goes; the manifest substitutes it."""

_NS = f'namespace="{NAMESPACE_PLACEHOLDER}"'

DEFAULT_QUERIES: Final = MappingProxyType(
    {
        "cpu_usage": f'rate(container_cpu_usage_seconds_total{{{_NS},container!=""}}[1m])',
        "memory_working_set": f'container_memory_working_set_bytes{{{_NS},container!=""}}',
        "network_receive": f"sum by (namespace, pod) "
        f"(rate(container_network_receive_bytes_total{{{_NS}}}[1m]))",
        "network_transmit": f"sum by (namespace, pod) "
        f"(rate(container_network_transmit_bytes_total{{{_NS}}}[1m]))",
        "cpu_throttled": f'rate(container_cpu_cfs_throttled_periods_total{{{_NS},container!=""}}'
        f"[1m])",
        "restarts": f"kube_pod_container_status_restarts_total{{{_NS}}}",
        "ready": f"kube_pod_container_status_ready{{{_NS}}}",
        "last_terminated_reason": f"kube_pod_container_status_last_terminated_reason{{{_NS}}}",
        "replicas_available": f"kube_deployment_status_replicas_available{{{_NS}}}",
        "memory_limit": f'kube_pod_container_resource_limits{{{_NS},resource="memory"}}',
    }
)
"""cAdvisor and kube-state-metrics series every campaign collects unless it says otherwise.

cAdvisor network series are per pod (no container label), hence the ``sum by``."""
