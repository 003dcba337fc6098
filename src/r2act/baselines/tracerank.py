"""Trace ranking: where the spans say the time and the errors come from (view full+traces).

In the spirit of MicroRank (Yu et al., WWW'21; RCAEval's ``e2e/microrank.py``): an
operation's latency SLO is learnt from the normal window, spans beyond it are anomalous,
a trace holding an anomalous span is an anomalous trace, and the services are ranked by a
spectrum score over anomalous and normal traces (D*, with * = 2, the ``dstar2`` MicroRank
uses). Two changes make it read the call graph the way a fault shows on it:

- A span's own time is its duration minus its children's (so a caller is not blamed for
  waiting on its callee), and its own error is an error status no child of it has (an
  error propagating up the call chain is charged once, where it began).
- A client span's own time and errors are charged to the callee it names
  (``peer.service``, ``net.peer.name``, ``server.address``, Envoy's ``upstream_cluster`` or
  ``rpc.service``): a callee without instrumentation shows only there, and the network
  between caller and callee is the callee's side of the call (a delay injected on its pods
  adds there). A gRPC service is resolved to the deployment whose server spans carry the
  same ``rpc.service`` in the incident's spans (``rpc_servers``), as a reader of the trace
  store would; only a service no server span names falls back to the name itself
  (the last part of a package-qualified name, when it is a deployment's).

Per (charged service, caller, operation, kind) node the normal window (``pre``) gives the
mean and standard deviation of the own time; in the ``during`` window a span is slow
beyond mean + ``K_SD`` deviations (the deviation floored at ``SD_FLOOR`` of the mean, so an
operation with a near-constant time is not flagged by noise), and anomalous when slow or
in own error. Service s scores ef^2 / (ep + nf): ef anomalous traces where s holds an
anomalous span, nf anomalous traces where it does not, ep normal traces that reach s.
Only action-space targets are ranked. Spans locate a fault, they do not name its kind, so
the fault type comes from the log keywords (as the ``keyword`` baseline reads them; the
view holds the logs too).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from r2act.baselines.base import Baseline, RunContext, mapped, policy_of
from r2act.baselines.keyword import fault_by_keywords
from r2act.datasets import layout
from r2act.errors import DataError
from r2act.schema import Prediction, Topology

K_SD = 3.0
"""Deviations beyond the normal mean at which a span is slow (MicroRank's SLO rule)."""
SD_FLOOR = 0.1
"""Least deviation, as a share of the normal mean: a near-constant operation is not flagged
for a deviation smaller than a tenth of its time (an assumption: timer and scheduling
jitter are of that order on a loaded node)."""
PEER_KEYS = ("peer.service", "net.peer.name", "server.address", "upstream_cluster", "rpc.service")
"""Client-span attributes naming the callee, most specific first (OpenTelemetry semantic
conventions: ``peer.service``; ``net.peer.name`` before 1.21, ``server.address`` after;
Envoy's ``upstream_cluster`` tag, the cluster a router span forwards to; ``rpc.service`` as
the gRPC package and service)."""
RPC_SERVICE = "rpc.service"


def rpc_servers(spans: pd.DataFrame) -> dict[str, str]:
    """``rpc.service`` (lower case) -> the deployment whose server spans carry it, read from
    the spans themselves (a service served by several deployments: the first by name)."""
    server = spans[spans["kind"].astype(str) == "server"]
    pairs = zip(server["attributes"].astype(str), server["service"].astype(str), strict=True)
    found: dict[str, str] = {}
    for attributes, service in sorted(set(pairs), key=lambda pair: pair[1]):
        if RPC_SERVICE not in attributes:
            continue
        name = json.loads(attributes).get(RPC_SERVICE)
        if isinstance(name, str):
            found.setdefault(name.lower(), service)
    return found


def callee(
    attributes: str, topology: Topology, servers: dict[str, str] | None = None
) -> str | None:
    """The deployment a client span calls, read from its attributes (None when unknown);
    ``servers`` resolves a gRPC service to the deployment serving it (``rpc_servers``)."""
    parsed: dict[str, Any] = json.loads(attributes)
    names = topology.names
    for key in PEER_KEYS:
        value = str(parsed.get(key, "")).lower()
        if not value:
            continue
        if key == RPC_SERVICE and servers and value in servers:
            return servers[value]
        host = value.split(":")[0].split(".")[0]
        if host in names:
            return host
        short = value.rsplit(".", 1)[-1].split("/")[0]
        if short in names:
            return short
    return None


def _own(spans: pd.DataFrame, topology: Topology) -> pd.DataFrame:
    """Each span with its own time, own error and the service it is charged to."""
    key = spans["trace_id"].astype(str) + "/" + spans["span_id"].astype(str)
    parent = spans["trace_id"].astype(str) + "/" + spans["parent_id"].astype(str)
    error = spans["status"].astype(str) == "error"
    children = spans["duration_s"].astype(float).groupby(parent.to_numpy()).sum()
    failing = error.groupby(parent.to_numpy()).any()
    own_s = spans["duration_s"].astype(float).to_numpy() - key.map(children).fillna(0).to_numpy()
    child_error = key.map(failing).eq(True).to_numpy(dtype=bool)  # a span with no child: False
    service = spans["service"].astype(str).to_numpy()
    client = (spans["kind"].astype(str) == "client").to_numpy()
    attributes = spans["attributes"].astype(str)
    servers = rpc_servers(spans)
    peers = {a: callee(a, topology, servers) for a in set(attributes[client])}
    peer = attributes.map(peers).to_numpy(dtype=object)
    charged = np.where(client & pd.notna(peer), peer, service).astype(str)
    return pd.DataFrame(
        {
            "phase": spans["phase"].astype(str).to_numpy(),
            "trace": spans["trace_id"].astype(str).to_numpy(),
            "charged": charged,
            "node": charged
            + "\x00"
            + service
            + "\x00"
            + spans["operation"].astype(str)
            + "\x00"
            + spans["kind"].astype(str),
            "own_s": np.clip(own_s, 0.0, None),
            "own_error": error.to_numpy() & ~child_error,
        }
    )


def anomalous_spans(spans: pd.DataFrame, topology: Topology) -> pd.DataFrame:
    """The ``during`` spans with their charged service, trace and whether anomalous."""
    own = _own(spans, topology)
    normal = own[own["phase"] == "pre"].groupby("node")["own_s"].agg(["mean", "std"])
    during = own[own["phase"] == "during"].copy()
    # a node no pre span shares maps to missing; cast, since mapping an Arrow string column
    # through an empty table keeps the string type
    mean = during["node"].map(normal["mean"]).astype(float)
    spread = np.maximum(
        during["node"].map(normal["std"]).astype(float).fillna(0.0), SD_FLOOR * mean
    )
    slow = (during["own_s"] > mean + K_SD * spread).fillna(False).to_numpy(dtype=bool)
    during["anomalous"] = slow | during["own_error"].to_numpy(dtype=bool)
    return during


def spectrum(during: pd.DataFrame) -> dict[str, float]:
    """D*2 per charged service over the ``during`` traces (``anomalous_spans``)."""
    bad = set(during.loc[during["anomalous"], "trace"])
    if not bad:
        return {}
    scores: dict[str, float] = {}
    for service, rows in during.groupby("charged", sort=True):
        ef = rows.loc[rows["anomalous"], "trace"].nunique()
        ep = len(set(rows["trace"]) - bad)
        nf = len(bad) - ef
        scores[str(service)] = ef * ef / (ep + nf) if ep + nf else math.inf
    return scores


def ranked(scores: dict[str, float], targets: list[str]) -> list[str]:
    """Action-space targets by their spectrum score, the most suspicious first (ties by
    name); services the spans never reach come last, by name."""
    return sorted(targets, key=lambda s: (-scores.get(s, -1.0), s))


def _tracerank(ctx: RunContext) -> Iterator[Prediction]:
    if not TRACERANK.runs_in(ctx.reader.view):
        raise DataError(
            f"baseline tracerank reads spans: view {ctx.reader.view!r} has none "
            "(run it with --view full+traces on a dataset with traces)"
        )
    for record in ctx.reader.records:
        case = ctx.reader.case(record)
        assert case.traces is not None
        targets = case.action_space.targets
        scores = spectrum(anomalous_spans(case.traces, case.topology))
        order = ranked(scores, targets)
        service = order[0] if scores else case.topology.entrypoint
        fault, _ = fault_by_keywords(case.logs)
        top = {s: round(scores[s], 4) for s in order[:5] if s in scores}
        yield mapped(
            case.case_id,
            case.action_space,
            case.topology,
            service,
            fault,
            method=ctx.method,
            policy=policy_of(record),
            evidence={"spectrum": {k: v if math.isfinite(v) else "inf" for k, v in top.items()}},
        )


TRACERANK = Baseline(
    "tracerank",
    "Spans -> service (MicroRank-style D*2 over slow or failing own spans; view "
    "full+traces); log keywords -> fault type.",
    _tracerank,
    views=tuple(v for v, files in layout.VIEWS.items() if layout.TRACES in files),
)
