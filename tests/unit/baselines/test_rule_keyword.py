"""Rule and keyword readings of hand-built incidents with known symptoms."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import blcases as bc

from r2act.baselines.keyword import fault_by_keywords, loudest_service
from r2act.baselines.rule import diagnose
from r2act.schema import FaultType

REFUSED = (
    'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while '
    'dialing: dial tcp 10.96.1.2:7070: connect: connection refused"'
)
CART_POD = "cartservice-abcdef1234-x1y2z"


def _cart_down() -> bc.Case:
    """cartservice replaced by 'pause': the frontend shouts, checkout names cartservice."""
    frontend = [
        line
        for _ in range(40)
        for line in bc.access("GET", "/cart", 500, error=f"could not retrieve cart: {REFUSED}")
    ]
    checkout = [bc.go_error("[PlaceOrder] failed calling cartservice", REFUSED)] * 5
    return bc.case(
        bc.logs(
            {
                "pre": {"frontend": bc.access("GET", "/cart", 200) * 20},
                "during": {"frontend": frontend, "checkoutservice": checkout},
            }
        ),
        bc.events(
            [
                ("during", "Pulled", CART_POD, 'Container image "k8s/pause:3.9" already present'),
                ("during", "BackOff", CART_POD, "Back-off restarting failed container server"),
            ]
        ),
    )


def test_rule_beats_keyword_when_the_loudest_service_is_a_caller() -> None:
    case = _cart_down()
    assert loudest_service(case.logs, case.action_space.targets, "frontend") == "frontend"
    found = diagnose(case)
    assert (found.service, found.fault) == ("cartservice", FaultType.POD_FAILURE)


def test_without_events_rule_follows_the_callee_the_callers_name() -> None:
    case = _cart_down()
    found = diagnose(
        bc.Case(
            case_id=case.case_id,
            view="logs",
            action_space=case.action_space,
            topology=case.topology,
            logs=case.logs,
        )
    )
    assert (found.service, found.fault, found.rule) == (
        "cartservice",
        FaultType.POD_FAILURE,
        "callers_refused",
    )


def test_dns_failure_is_blamed_on_the_host_callers_cannot_resolve() -> None:
    error = (
        'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while '
        'dialing: dial tcp: lookup productcatalogservice on 10.96.0.10:53: no such host"'
    )
    # every order fails for the whole window (a complaint every 5 s): a persistent symptom
    lines = [bc.go_error("[PlaceOrder] failed calling productcatalogservice", error)] * 12
    found = diagnose(bc.case(bc.logs({"pre": {}, "during": {"checkoutservice": lines}})))
    assert (found.service, found.fault) == ("productcatalogservice", FaultType.DNS_FAULT)


def test_5xx_at_the_entry_point_with_no_handler_error_is_an_http_rule_on_that_route() -> None:
    logs = bc.logs(
        {
            "pre": {"frontend": bc.access("POST", "/cart/checkout", 200) * 10},
            "during": {"frontend": bc.access("POST", "/cart/checkout", 503) * 10},
        }
    )
    found = diagnose(bc.case(logs))
    # the rule sits on the frontend's route, whatever services the route reaches
    assert (found.service, found.fault) == ("frontend", FaultType.HTTP_ERROR)


def _users(failing: str, pages: int) -> list[str]:
    """The load generator's stats tables, one every 2 s: ``failing`` fails outright."""
    tables = []
    for _ in range(pages):
        for method, path, rate in (("GET", "/", 0.08), ("GET", "/cart", 0.24)):
            fps = rate if f"{method} {path}" == failing else 0.0
            tables.append(bc.locust_row(method, path, rate, fps))
        tables.append(bc.locust_row("", "Aggregated", 0.32, 0.08 if failing else 0.0))
    return tables


def test_users_failing_on_one_route_the_frontend_logs_as_fine_is_an_http_error_there() -> None:
    served = bc.access("GET", "/", 200) * 10 + bc.access("GET", "/cart", 200) * 30
    logs = bc.logs(
        {
            "pre": {"frontend": served, "loadgenerator": _users("", 30)},
            # the proxy replaced the answers: the handler logged 200, users got 500
            "during": {"frontend": served, "loadgenerator": _users("GET /", 30)},
        }
    )
    found = diagnose(bc.case(logs))
    assert (found.service, found.fault, found.rule) == (
        "frontend",
        FaultType.HTTP_ERROR,
        "route_failures",
    )
    assert found.clue == "GET /"


def test_users_failing_on_a_route_the_frontend_no_longer_serves_is_an_http_abort() -> None:
    cart = bc.access("GET", "/cart", 200) * 30
    logs = bc.logs(
        {
            "pre": {
                "frontend": bc.access("GET", "/", 200) * 10 + cart,
                "loadgenerator": _users("", 30),
            },
            "during": {"frontend": cart, "loadgenerator": _users("GET /", 30)},
        }
    )
    found = diagnose(bc.case(logs))
    assert (found.service, found.fault) == ("frontend", FaultType.HTTP_ABORT)


def test_users_failing_where_the_frontend_logs_the_backend_error_is_not_a_route_rule() -> None:
    error = f"could not retrieve cart: {REFUSED}"
    logs = bc.logs(
        {
            "pre": {
                "frontend": bc.access("GET", "/cart", 200) * 30,
                "loadgenerator": _users("", 30),
            },
            "during": {
                "frontend": bc.access("GET", "/cart", 500, error=error) * 30,
                "loadgenerator": _users("GET /cart", 30),
            },
        }
    )
    found = diagnose(bc.case(logs))
    assert found.rule != "route_failures"
    assert found.service == "cartservice"


def test_an_oom_kill_left_by_an_earlier_incident_is_not_evidence() -> None:
    old = {CART_POD: (6, "OOMKilled", "cartservice:v0.10.6")}
    logs = bc.logs({"pre": {}, "during": {"frontend": bc.access("GET", "/", 200) * 3}})
    stale = diagnose(bc.case(logs, states={"pre": bc.state(0, old), "during": bc.state(60, old)}))
    assert stale.rule != "oom"
    new = {CART_POD: (7, "OOMKilled", "cartservice:v0.10.6")}
    fresh = diagnose(bc.case(logs, states={"pre": bc.state(0, old), "during": bc.state(60, new)}))
    assert (fresh.service, fresh.fault) == ("cartservice", FaultType.MEMORY_PRESSURE)


def test_cpu_pegged_at_its_limit_is_cpu_saturation_not_the_timeouts_callers_see() -> None:
    deadline = "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
    lines = [bc.go_error("[PlaceOrder] failed calling paymentservice", deadline)] * 5
    pod = "paymentservice-abcdef1234-x1y2z"
    metrics = bc.metrics(
        [
            ("pre", "cpu_usage", pod, 0.004),
            ("during", "cpu_usage", pod, 0.196),
            ("pre", "cpu_throttled", pod, 0.02),
            ("during", "cpu_throttled", pod, 9.6),
        ]
    )
    logs = bc.logs({"pre": {}, "during": {"checkoutservice": lines}})
    assert diagnose(bc.case(logs)).fault == FaultType.NETWORK_DELAY
    found = diagnose(bc.case(logs, metric_rows=metrics))
    assert (found.service, found.fault) == ("paymentservice", FaultType.CPU_SATURATION)


def test_keywords_vote_for_the_most_specific_fault_and_ignore_what_was_there_before() -> None:
    oom = "container server was OOMKilled; service unavailable"
    logs = bc.logs(
        {
            "pre": {"cartservice": ["connection refused"] * 30},
            "during": {"cartservice": [oom] * 5 + ["connection refused"] * 30},
        }
    )
    fault, rise = fault_by_keywords(logs)
    assert fault == FaultType.MEMORY_PRESSURE
    assert rise[FaultType.POD_FAILURE.value] <= 0.0
