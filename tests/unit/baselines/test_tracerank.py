"""The trace-reading baseline (issue 24 point 4): ``tracerank`` ranks services by a
MicroRank-style spectrum over slow or failing own spans, charging a client span to its
callee, and is registered like the other baselines.

The dataset's spans come from ``tests/traces_fixture.py`` (the root cause's own work is
slower and fails during the fault; cart, shipping and ad show only as client spans). Its
RCA-S and Valid on simulated spans are for the lead to measure once the simulator writes
them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from r2act.baselines import BASELINES, DatasetReader, run_baseline
from r2act.baselines.tracerank import anomalous_spans, callee, ranked, spectrum
from r2act.errors import DataError
from r2act.schema import Prediction
from r2act.systems import SYSTEMS
from traces_fixture import traced_dataset

BOUTIQUE = SYSTEMS["onlineboutique"]


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return traced_dataset(tmp_path_factory.mktemp("traced-baselines"))


def test_tracerank_ranks_the_faulty_service_first_on_every_case(traced: Path) -> None:
    reader = DatasetReader(traced, "full+traces")
    hidden = 0
    for record in reader.records:
        case = reader.case(record)
        assert case.traces is not None
        scores = spectrum(anomalous_spans(case.traces, case.topology))
        order = ranked(scores, case.action_space.targets)
        assert order[0] == record.labels.service, (record.incident_id, order[:3])
        hidden += record.labels.service not in set(case.traces["service"])
    assert hidden  # some root causes (cart) emit no span: found through their callers


def test_the_baseline_writes_predictions_that_evaluate_scores(traced: Path, tmp_path: Path) -> None:
    out = tmp_path / "tracerank.jsonl"
    summary = run_baseline("tracerank", traced, out, view="full+traces")
    reader = DatasetReader(traced, "full+traces")
    assert summary.predictions == len(reader.records)
    lines = [Prediction.model_validate_json(x) for x in out.read_text().splitlines()]
    truth = {str(r.case_id): r.labels.service for r in reader.records}
    assert all(p.rca is not None and p.rca.service == truth[p.incident_id] for p in lines)
    assert {p.method for p in lines} == {"tracerank[full+traces]"}
    assert all(p.plan is not None for p in lines)  # mapped like every RCA-only baseline
    report = tmp_path / "report.json"
    command = ["evaluate", str(out), "--dataset", str(traced), "--json", str(report)]
    done = subprocess.run(
        [sys.executable, "-m", "r2act", *command, "--replicates", "200"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    metrics = json.loads(report.read_text())["methods"][0]["metrics"]
    assert metrics["rca_s"]["value"] == 1.0


def test_tracerank_is_registered_and_refuses_views_without_spans(
    traced: Path, tmp_path: Path
) -> None:
    assert "tracerank" in BASELINES and BASELINES["tracerank"].observations
    with pytest.raises(DataError, match="--view full\\+traces"):
        run_baseline("tracerank", traced, tmp_path / "x.jsonl", view="full")
    assert not (tmp_path / "x.jsonl").exists()


def _span(ids: str, service: str, kind: str, *, took: float, status: str, phase: str,
          **attributes: str) -> dict[str, object]:  # fmt: skip
    """One span row; ``ids`` is 'span/parent' (no parent: the root)."""
    span, _, parent = ids.partition("/")
    return {"phase": phase, "trace_id": "t" + phase, "span_id": span, "parent_id": parent,
            "service": service, "operation": "op", "kind": kind, "start": 0.0,
            "duration_s": took, "status": status,
            "attributes": json.dumps(attributes)}  # fmt: skip


def test_an_error_is_charged_where_it_began_and_a_client_span_to_its_callee() -> None:
    rows = []
    checkout = {"rpc.service": "hipstershop.CheckoutService"}
    cart = {"net.peer.name": "cartservice:7070"}
    for phase, failed in (("pre", "unset"), ("during", "error")):
        at = {"phase": phase}
        rows += [
            _span("a", "frontend", "server", took=0.010, status=failed, **at),
            _span("b/a", "frontend", "client", took=0.009, status=failed, **at, **checkout),
            _span("c/b", "checkoutservice", "server", took=0.008, status=failed, **at),
            _span("d/c", "checkoutservice", "client", took=0.002, status="unset", **at, **cart),
        ]
    during = anomalous_spans(pd.DataFrame(rows), BOUTIQUE)
    # only checkout's server span failed on its own: the error its callers carry up the
    # chain is charged once, and the call to cart took its usual time
    assert during.loc[during["anomalous"], "charged"].tolist() == ["checkoutservice"]
    assert set(during["charged"]) == {"frontend", "checkoutservice", "cartservice"}
    assert callee(json.dumps({"net.peer.name": "cartservice:7070"}), BOUTIQUE) == "cartservice"
    assert callee(json.dumps({"rpc.service": "hipstershop.CartService"}), BOUTIQUE) == "cartservice"
    assert callee(json.dumps({"rpc.service": "grpc.health.v1.Health"}), BOUTIQUE) is None
    assert callee(json.dumps({"peer.service": "adservice"}), BOUTIQUE) == "adservice"


def test_a_grpc_service_is_charged_to_the_deployment_whose_server_spans_name_it() -> None:
    """On the Astronomy Shop a client span names its callee only by the gRPC service
    (``oteldemo.CartService``), which is no deployment's name: the callee is the deployment
    whose server spans carry that ``rpc.service``. Envoy's router span names its upstream
    cluster. A cart that is down (no server span of its own in the window) is still
    resolved from the other phase's server spans."""
    from r2act.systems import INSTALLED

    shop = INSTALLED["astronomyshop"].topology
    cart = {"rpc.service": "oteldemo.CartService"}
    rows = []
    for phase, failed in (("pre", "unset"), ("during", "error")):
        at = {"phase": phase}
        rows += [
            _span("a", "frontend-proxy", "server", took=0.020, status=failed, **at),
            _span(
                "b/a",
                "frontend-proxy",
                "client",
                took=0.019,
                status=failed,
                **at,
                upstream_cluster="frontend",
            ),
            _span("c/b", "frontend", "server", took=0.018, status=failed, **at),
            _span("d/c", "frontend", "client", took=0.002, status=failed, **at, **cart),
        ]
        if phase == "pre":
            rows.append(_span("e/d", "cart", "server", took=0.001, status="unset", **at, **cart))
    during = anomalous_spans(pd.DataFrame(rows), shop)
    assert during.loc[during["anomalous"], "charged"].tolist() == ["cart"]
    assert set(during["charged"]) == {"frontend-proxy", "frontend", "cart"}
    assert callee(json.dumps(cart), shop) is None  # without the server spans: unknown
    assert callee(json.dumps(cart), shop, {"oteldemo.cartservice": "cart"}) == "cart"


def test_a_case_with_no_during_span_or_no_pre_peer_is_judged() -> None:
    """The dataset hands out Arrow string columns; mapping one through the pre baseline
    keeps the string type when nothing maps (no during span), which must not break the
    slowness test. A during span with no pre peer is judged by its error alone."""
    from r2act.baselines.tracerank import anomalous_spans
    from r2act.systems import INSTALLED

    text = ("phase", "trace_id", "span_id", "parent_id", "service", "operation", "kind")
    row = {
        "phase": "during",
        "trace_id": "a" * 32,
        "span_id": "b" * 16,
        "parent_id": "",
        "service": "frontend",
        "operation": "GET",
        "kind": "server",
        "start": 0.0,
        "duration_s": 0.5,
        "attributes": "{}",
    }
    topology = INSTALLED["astronomyshop"].topology
    arrow = {c: "string[pyarrow]" for c in (*text, "status", "attributes")}
    rows = [{**row, "status": "error"}, {**row, "span_id": "c" * 16, "status": "ok"}]
    judged = anomalous_spans(pd.DataFrame(rows).astype(arrow), topology)
    assert judged["anomalous"].tolist() == [True, False]
    pre_only = [{**r, "phase": "pre"} for r in rows]
    assert anomalous_spans(pd.DataFrame(pre_only).astype(arrow), topology).empty
