"""Request-level series derived from the frontend's request log and Locust's stats (15 #3).

The lines below are in the formats the upstream sources write: the frontend's logrus JSON
(``frontend/middleware.go``: ``request complete`` with ``http.req.path``, ``.method``,
``http.resp.status``, ``http.resp.took_ms``; ``handlers.go``: ``request error``) and
Locust's periodic stats table (``locust/stats.py``, ``print_stats``).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pyarrow as pa
import pytest

from r2act.baselines.logparse import user_routes
from r2act.datasets import layout
from r2act.datasets.requests import derive, route
from r2act.systems import get_system

CASE = "case-0123456789ab"


def _complete(ts: float, path: str, status: int, took: int, method: str = "GET") -> dict:
    line = {
        "http.req.id": "x",
        "http.req.method": method,
        "http.req.path": path,
        "http.resp.bytes": 10,
        "http.resp.status": status,
        "http.resp.took_ms": took,
        "message": "request complete",
        "session": "s",
        "severity": "debug",
        "timestamp": "2026-01-01T00:00:00Z",
    }
    return {"ts": ts, "service": "frontend", "pod": "frontend-1", "line": json.dumps(line)}


def _error(ts: float, path: str, text: str) -> dict:
    line = {
        "error": text,
        "http.req.method": "GET",
        "http.req.path": path,
        "message": "request error",
        "severity": "error",
    }
    return {"ts": ts, "service": "frontend", "pod": "frontend-1", "line": json.dumps(line)}


def _locust(ts: float, rps: float, fps: float, med: int) -> list[dict]:
    header = (
        "Type     Name" + " " * 74 + "# reqs      # fails |    Avg     Min     Max    Med |"
        "   req/s  failures/s"
    )
    rows = [
        header,
        f"GET      /product/OLJCESPC7Z{' ' * 60}100     2(2.00%) |     28       9     112"
        f"     28 |    {rps / 2:.2f}        {fps / 2:.2f}",
        f"GET      /product/66VCHSJNUP{' ' * 60}100     2(2.00%) |     28       9     112"
        f"     28 |    {rps / 2:.2f}        {fps / 2:.2f}",
        f"         Aggregated{' ' * 60}200     4(2.00%) |     26       8     104    {med} |"
        f"    {rps:.2f}        {fps:.2f}",
    ]
    return [{"ts": ts, "service": "loadgenerator", "pod": "lg-1", "line": text} for text in rows]


def _logs(rows: list[dict], phase: str = "during") -> pa.Table:
    n = len(rows)
    return (
        pa.Table.from_pylist(
            [{"case_id": CASE, "phase": phase, "container": "server", **r} for r in rows],
            schema=layout.LOG_TABLE,
        ).select(layout.LOG_TABLE.names)
        if n
        else layout.LOG_TABLE.empty_table()
    )


def _metrics(times: list[float], phase: str = "during") -> pa.Table:
    return pa.Table.from_pylist(
        [
            {"case_id": CASE, "phase": phase, "ts": t, "query": "cpu_usage", "labels": "{}"}
            | {"value": 0.0}
            for t in times
        ],
        schema=layout.METRIC_TABLE,
    )


def test_routes_name_product_pages_once() -> None:
    assert route("GET", "/product/OLJCESPC7Z") == "GET /product/*"
    assert route("POST", "/cart/checkout") == "POST /cart/checkout"
    assert route("GET", "/") == "GET /"


def test_frontend_requests_become_rates_errors_and_quantiles_at_the_metric_step() -> None:
    rows = [_complete(101 + i * 0.1, "/cart", 200, 10 + i) for i in range(30)]  # step 100-115
    rows += [_complete(116 + i, "/cart", 500, 100) for i in range(3)]  # step 115-130: errors
    rows += [_error(116.5, "/cart", "could not retrieve cart: lookup cartservice: no such host")]
    services = ["frontend", "cartservice", "cartservicex"]
    table = derive(CASE, _logs(rows), _metrics([100.0, 115.0, 130.0]), ["during"], services)
    assert table.schema.equals(layout.REQUEST_TABLE)
    frame = table.to_pandas()
    cart = frame[(frame.service == "frontend") & (frame.route == "GET /cart")].set_index("ts")
    assert list(cart.index) == [100.0, 115.0, 130.0]  # steps end at the metric samples
    assert cart.loc[100.0, "requests_per_s"] == 0
    assert cart.loc[115.0, "requests_per_s"] == pytest.approx(30 / 15)
    assert cart.loc[115.0, "errors_per_s"] == 0 and cart.loc[115.0, "error_ratio"] == 0
    assert cart.loc[115.0, "latency_p50_ms"] == pytest.approx(24.5)
    assert cart.loc[130.0, "error_ratio"] == 1.0
    callee = frame[frame.service == "cartservice"]
    assert list(callee.route) == ["GET /cart"] and list(callee.ts) == [130.0]
    assert callee.errors_per_s.iloc[0] == pytest.approx(1 / 15)
    assert callee.requests_per_s.isna().all()  # calls to the callee are not logged
    assert set(frame.phase) == {"during"} and set(frame.case_id) == {CASE}


def test_a_step_without_any_completed_request_is_a_zero_rate_not_a_gap() -> None:
    rows = [_complete(101, "/", 200, 5), _complete(131, "/", 200, 5)]
    frame = derive(CASE, _logs(rows), _metrics([100.0, 115.0, 130.0, 145.0]), ["during"])
    frame = frame.to_pandas()
    home = frame[frame.route == "GET /"].set_index("ts")
    assert home.loc[130.0, "requests_per_s"] == 0 and home.loc[130.0, "latency_p50_ms"] != 0


def test_locust_stats_give_rates_per_route_and_the_aggregate_median() -> None:
    rows = _locust(102.0, 4.0, 1.0, 26) + _locust(104.0, 2.0, 0.0, 30)
    frame = derive(CASE, _logs(rows), _metrics([100.0, 115.0]), ["during"]).to_pandas()
    locust = frame[frame.source == "locust-stats"].set_index("route")
    assert locust.loc["*", "requests_per_s"] == pytest.approx(3.0)  # mean over the prints
    assert locust.loc["*", "errors_per_s"] == pytest.approx(0.5)
    assert locust.loc["*", "latency_p50_ms"] == 30  # the last print's median
    assert locust.loc["GET /product/*", "requests_per_s"] == pytest.approx(3.0)  # summed
    assert locust.loc["GET /product/*", "error_ratio"] == pytest.approx(0.5 / 3.0)


def test_no_request_lines_give_an_empty_table_with_the_schema() -> None:
    table = derive(CASE, layout.LOG_TABLE.empty_table(), _metrics([1.0, 16.0]), ["during"])
    assert table.num_rows == 0 and table.schema.equals(layout.REQUEST_TABLE)


def test_the_frontends_wrap_names_the_backend_when_the_grpc_error_names_only_an_address() -> None:
    # The real frontend (handlers.go) wraps a dial error that carries only an IP:port.
    dial = 'rpc error: code = Unavailable desc = connection error: desc = "transport: dial tcp'
    rows = [
        _error(101.0, "/product/OLJCESPC7Z", f"could not retrieve cart: {dial} 10.96.78.179:7070"),
        _error(102.0, "/cart", f"failed to get shipping quote: {dial} 10.96.1.2:50051"),
        _error(103.0, "/", "something no handler step wraps"),
    ]
    frame = derive(CASE, _logs(rows), _metrics([100.0, 115.0]), ["during"]).to_pandas()
    callees = frame[frame.service != "frontend"].set_index("service")
    assert callees.loc["cartservice", "route"] == "GET /product/*"
    assert callees.loc["shippingservice", "route"] == "GET /cart"
    assert len(callees) == 2  # an unknown text is attributed to nobody


def test_every_wrap_the_simulator_renders_maps_back_to_the_backend_that_failed() -> None:
    # systems.onlineboutique holds the wrap -> backend table the derivation reads; the
    # frontend's renderer (its errors module) holds the page -> backend -> wrap table: they
    # must agree.
    from r2act.systems.onlineboutique import frontend_error_backend
    from r2act.systems.onlineboutique.errors import FRONTEND_STEPS, frontend_error

    pairs = [(scope, backend) for scope, steps in FRONTEND_STEPS.items() for backend, _ in steps]
    assert len(pairs) > 10
    for scope, backend in pairs:
        text = frontend_error(scope, backend, "unavailable")
        assert frontend_error_backend(text) == backend, (scope, backend, text)


def test_a_system_whose_load_generator_prints_no_table_gets_no_locust_series() -> None:
    """The Astronomy Shop's Locust runs its web UI (``System.load_stats`` None): lines
    under its name are not a table, so no ``locust-stats`` numbers are made from them."""
    shop = get_system("astronomyshop")
    loadgen = shop.topology.load_generator
    rows = [r | {"service": loadgen} for r in _locust(102.0, 4.0, 1.0, 26)]
    metrics = _metrics([100.0, 115.0])
    frame = derive(CASE, _logs(rows), metrics, ["during"], system=shop).to_pandas()
    assert "locust-stats" not in set(frame.source)
    assert user_routes(_logs(rows).to_pandas(), "during", shop.topology) == {}
    # The same lines from a load generator that prints its table are read.
    printing = replace(shop, load_stats="stdout")
    frame = derive(CASE, _logs(rows), metrics, ["during"], system=printing).to_pandas()
    assert "locust-stats" in set(frame.source)
