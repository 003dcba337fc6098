"""Every line the Astronomy Shop's renderers print is one of its texts, in its runtime's frame.

A fake pod identity (what the engine's ``PodLogger`` gives a hook) renders a few calls per
service; each line is unwrapped from its format (.NET console, log4j pattern, Python's
correlation format, grpc-js' inspected error, the collector's debug exporter) and its
message must be explained by a text, nested error texts recursively, as the engine's
conformance test does (``tests/unit/sim/test_sim_texts.py``).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import lru_cache

import pytest

from r2act.schema import LogLine, Topology
from r2act.systems.astronomyshop.render_collector import CollectorPod
from r2act.systems.astronomyshop.render_formats import pod_ip, pod_uid
from r2act.systems.astronomyshop.renderers import COLLECTOR_RENDERERS, RENDERERS
from r2act.systems.astronomyshop.texts import TEXTS
from r2act.systems.astronomyshop.topology import ASTRONOMY_SHOP
from r2act.systems.render import NO_TRACES, TraceIds
from r2act.systems.runtime_texts import RUNTIME_TEXTS
from r2act.systems.texts import Text

ALL = (*TEXTS, *RUNTIME_TEXTS)
TS = 1_780_000_000.25
COLLECTOR = CollectorPod("otel-collector-agent-7k2xq")
KINDS = (
    "unavailable",
    "dns_error",
    "dns_random",
    "dns_servfail",
    "canceled",
    "upstream|unavailable|valkey-cart",
    "upstream|unavailable|quote",
    "upstream|unavailable|shipping",
    "upstream|unavailable|payment",
    "upstream|unavailable|product-catalog",
    "upstream|unavailable|currency",
)


@dataclass
class FakePod:
    """What a hook reads of the pod it renders for (``systems.render.PodIdentity``)."""

    app: str
    topology: Topology = ASTRONOMY_SHOP
    pod: str = ""
    container: str = ""
    seed: int = 3
    sessions: list[str] = field(default_factory=lambda: ["7d3c0f8e-aaaa-4bbb-8ccc-123456789abc"])
    route_ms: dict[str, float] = field(
        default_factory=lambda: {r.scope: 40.0 for r in ASTRONOMY_SHOP.routes}
    )
    node: str = "0242ac120002"
    traces: TraceIds = NO_TRACES

    def __post_init__(self) -> None:
        self.pod = self.pod or f"{self.app}-6f9d4c7b8-x2k9q"
        self.container = self.container or self.app


def _regex(text: Text) -> str:
    if text.pattern is not None:
        return text.pattern
    out = []
    for part in re.split(r"(\{err\}|\{\})", text.text):
        out.append(r".*?" if part == "{}" else r"(.*)" if part == "{err}" else re.escape(part))
    return "".join(out) + (r": (.*)" if text.wrap else "")


_WHOLE = [re.compile(_regex(t), re.S) for t in ALL]


@lru_cache(maxsize=20_000)
def explained(text: str, depth: int = 0) -> bool:
    """``text`` is some template, each nested ``{err}`` explained in turn."""
    if depth > 8:
        return False
    for regex in _WHOLE:
        match = regex.fullmatch(text)
        if match and all(explained(g, depth + 1) for g in match.groups()):
            return True
    return False


def _line_regex(part: str) -> str:
    return re.sub(r"\\\{(?:err)?\\\}", ".*", re.escape(part))


_LINE = re.compile(
    "|".join(
        f"(?:{_line_regex(part)})" for t in ALL if t.pattern is None for part in t.text.split("\n")
    )
)
"""Any single line of any template."""

_DOTNET_HEAD = re.compile(r"(?:info|warn|fail): [\w.]+\[\d+\]")
_LOG4J = re.compile(
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d - [\w.]+ - (.*) trace_id=\w* span_id=\w* trace_flags=\w* "
)
_PY = re.compile(
    r"[\d-]+ [\d:,]+ (?:INFO|WARNING|ERROR) \[[\w.]+\] \[[\w.]+:\d+\] \[trace_id=\w+ "
    r"span_id=\w+ resource.service.name=[\w-]+ trace_sampled=(?:True|False)\] - (.*)"
)
_ZAP = re.compile(r"[\dT:.-]+Z\tinfo\t(.*)")
_ZAP_FIELDS = re.compile(r'\t\{"otelcol\.component\.id": "debug/logs".*\}')


def unexplained_stdout(lines: list[LogLine]) -> list[str]:
    """The stdout lines whose message no text explains."""
    strays = []
    for line in (x.line for x in lines):
        if _DOTNET_HEAD.fullmatch(line):
            continue
        for frame in (_LOG4J, _PY):
            match = frame.fullmatch(line)
            if match:
                line = match.group(1)
                break
        line = line.removeprefix("      ")
        if not explained(line) and not _LINE.fullmatch(line):
            strays.append(line)
    return strays


def unexplained_collector(lines: list[LogLine]) -> list[str]:
    """The collector lines that are not the debug exporter's, or whose body no text
    explains (a body may span lines: Envoy's ends in a newline)."""
    strays = []
    texts = [x.line for x in lines]
    k = 0
    while k < len(texts):
        line = texts[k]
        zap = _ZAP.fullmatch(line)
        line = zap.group(1) if zap else line
        if line.startswith("Logs\t") or _ZAP_FIELDS.fullmatch(line):
            k += 1
            continue
        if line.startswith("Body: Str("):
            body = line[len("Body: Str(") :]
            while not body.endswith(")"):
                k += 1
                body += "\n" + texts[k]
            value = body[:-1].rstrip("\n")
            if not explained(value):
                strays.append(value)
        elif not _LINE.fullmatch(line):
            strays.append(line)
        k += 1
    return strays


def _render(made: tuple[int, object] | None, out: list[LogLine]) -> int:
    assert made is not None
    n, render = made
    render(TS, random.Random(1), out)  # type: ignore[operator]
    return n


SERVED = (
    ("cart", "GetCart"),
    ("cart", "AddItem"),
    ("cart", "EmptyCart"),
    ("ad", "GetAds"),
    ("recommendation", "ListRecommendations"),
    ("email", "POST /send_order_confirmation"),
    ("accounting", "Consume"),
    ("fraud-detection", "Consume"),
    ("product-reviews", "GetProductReviews"),
    ("product-reviews", "AskProductAIAssistant"),
)
OTLP_SERVED = (
    *SERVED,
    ("checkout", "PlaceOrder"),
    ("product-catalog", "GetProduct"),
    ("product-catalog", "ListProducts"),
    ("currency", "Convert"),
    ("currency", "GetSupportedCurrencies"),
    ("payment", "Charge"),
    ("shipping", "POST /get-quote"),
    ("shipping", "POST /ship-order"),
    ("quote", "POST /getquote"),
)


@pytest.mark.parametrize(("app", "op"), SERVED)
def test_a_served_call_prints_its_texts_on_stdout(app: str, op: str) -> None:
    out: list[LogLine] = []
    n = _render(RENDERERS.served(FakePod(app), op), out)
    assert n == len(out) > 0
    assert {x.pod for x in out} == {FakePod(app).pod}
    assert not unexplained_stdout(out)


@pytest.mark.parametrize("app", ["checkout", "product-catalog", "currency", "shipping", "quote"])
def test_an_otlp_only_service_prints_nothing_on_its_pod(app: str) -> None:
    assert RENDERERS.served(FakePod(app), "PlaceOrder") is None
    out: list[LogLine] = []
    RENDERERS.startup(FakePod(app), TS, out)
    assert out == []


@pytest.mark.parametrize(("app", "op"), OTLP_SERVED)
def test_a_served_call_prints_its_records_on_the_collector(app: str, op: str) -> None:
    out: list[LogLine] = []
    n = _render(COLLECTOR_RENDERERS.served(FakePod(app), COLLECTOR, op), out)
    assert n == len(out) > 0
    assert {x.pod for x in out} == {COLLECTOR.pod}
    lines = {x.line for x in out}
    assert f"     -> service.name: Str({app})" in lines
    assert f"     -> k8s.pod.name: Str({FakePod(app).pod})" in lines
    assert f"     -> host.name: Str({COLLECTOR.pod})" in lines  # the detector's, overriding
    assert not unexplained_collector(out)


def test_fraud_detection_counts_the_records_it_consumed() -> None:
    out: list[LogLine] = []
    made = RENDERERS.served(FakePod("fraud-detection"), "Consume")
    assert made is not None
    for k in range(3):
        made[1](TS + k, random.Random(k), out)
    counts = [int(x.line.split("total count to: ")[1].split(" ")[0]) for x in out]
    assert counts == [1, 2, 3]


def test_stdout_and_collector_copies_of_a_call_agree() -> None:
    """One call's console line and its collector record carry the same values."""
    stdout: list[LogLine] = []
    collector: list[LogLine] = []
    _render(RENDERERS.served(FakePod("cart"), "AddItem"), stdout)
    _render(COLLECTOR_RENDERERS.served(FakePod("cart"), COLLECTOR, "AddItem"), collector)
    product = re.search(r"productId=(\w+)", stdout[1].line)
    assert product is not None
    assert f"     -> productId: Str({product.group(1)})" in {x.line for x in collector}
    assert (
        "Body: Str(AddItemAsync called with userId={userId}, productId={productId}, "
        "quantity={quantity})" in {x.line for x in collector}
    )


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "callee", ["checkout", "cart", "product-catalog", "currency", "ad", "recommendation"]
)
def test_the_frontends_failed_call_is_nextjs_console_error(callee: str, kind: str) -> None:
    out: list[LogLine] = []
    n = _render(RENDERERS.failed_call(FakePod("frontend"), callee, kind), out)
    assert n == len(out) and out[0].line.startswith("Error: ")
    assert not unexplained_stdout(out)


def test_checkouts_email_warning_goes_to_the_collector() -> None:
    assert RENDERERS.failed_call(FakePod("checkout"), "email", "unavailable") is None
    out: list[LogLine] = []
    _render(
        COLLECTOR_RENDERERS.failed_call(FakePod("checkout"), COLLECTOR, "email", "unavailable"), out
    )
    bodies = [x.line for x in out if x.line.startswith("Body: ")]
    assert len(bodies) == 1 and "failed to send order confirmation to " in bodies[0]
    assert 'Post "http://email:8080/send_order_confirmation"' in bodies[0]
    assert "SeverityText: WARN" in {x.line for x in out}
    assert not unexplained_collector(out)


@pytest.mark.parametrize("kind", ["unavailable", "dns_error", "dns_random", "dns_servfail"])
def test_recommendation_logs_grpcios_traceback_when_the_catalog_fails(kind: str) -> None:
    out: list[LogLine] = []
    n = _render(RENDERERS.failed_call(FakePod("recommendation"), "product-catalog", kind), out)
    assert n == len(out)
    assert " ERROR [grpc._server] " in out[0].line
    assert "Traceback (most recent call last):" in {x.line for x in out}
    raised = [x.line for x in out if x.line.startswith("grpc._channel._InactiveRpcError: ")]
    assert len(raised) == 1 and out[-1].line == ">"
    assert not unexplained_stdout(out)


def test_cart_reports_valkeys_failure_through_grpc_dotnet() -> None:
    out: list[LogLine] = []
    _render(RENDERERS.failed_call(FakePod("cart"), "valkey-cart", "unavailable"), out)
    assert out[0].line == "info: Grpc.AspNetCore.Server.ServerCallHandler[7]"
    assert not unexplained_stdout(out)
    copy: list[LogLine] = []
    made = COLLECTOR_RENDERERS.failed_call(FakePod("cart"), COLLECTOR, "valkey-cart", "unavailable")
    _render(made, copy)
    lines = {x.line for x in copy}
    assert "InstrumentationScope Grpc.AspNetCore.Server.ServerCallHandler " in lines
    assert "     -> StatusCode: Str(FailedPrecondition)" in lines
    assert not unexplained_collector(copy)


@pytest.mark.parametrize(
    ("path", "error", "status"),
    [
        ("/api/products/*", None, "200"),
        ("/api/recommendations", None, "200"),
        ("/api/data/", None, "200"),
        ("/api/cart", ("unavailable", "cart"), "500"),
        ("/api/checkout", ("unavailable", "frontend"), "503"),
    ],
)
def test_envoys_access_record_is_rendered_for_the_collector(
    path: str, error: tuple[str, str] | None, status: str
) -> None:
    method = "POST" if path == "/api/checkout" else "GET"
    out: list[LogLine] = []
    n = _render(
        COLLECTOR_RENDERERS.request(FakePod("frontend-proxy"), COLLECTOR, method, path, 0.0, error),
        out,
    )
    assert n == len(out)
    body = next(x.line for x in out if x.line.startswith("Body: Str("))
    assert f' HTTP/1.1" {status} ' in body
    assert not unexplained_collector(out)
    assert RENDERERS.request(FakePod("frontend-proxy"), method, path, 0.0, error) is None


@pytest.mark.parametrize("app", ["cart", "ad", "recommendation", "accounting"])
def test_start_up_banners_are_texts(app: str) -> None:
    out: list[LogLine] = []
    RENDERERS.startup(FakePod(app), TS, out)
    assert out and not unexplained_stdout(out)


@pytest.mark.parametrize("app", ["checkout", "product-catalog", "currency", "shipping", "payment"])
def test_start_up_records_are_texts(app: str) -> None:
    out: list[LogLine] = []
    COLLECTOR_RENDERERS.startup(FakePod(app), COLLECTOR, TS, out)
    assert out and not unexplained_collector(out)


def test_an_invented_text_is_caught() -> None:
    """The checks are not vacuous."""
    for invented in ("[PlaceOrder] failed calling cart", "conversion request received"):
        assert not explained(invented)
        line = LogLine(TS, "p", "c", "a", invented)
        assert unexplained_stdout([line]) == [invented]
    body = LogLine(TS, "p", "c", "a", "Body: Str(received an order)")
    assert unexplained_collector([body]) == ["received an order"]


def test_pod_addresses_agree_with_the_engines() -> None:
    from r2act.cluster.sim import identity

    for pod in ("frontend-6f9d4c7b8-x2k9q", "cart-1", "load-generator"):
        assert pod_ip(pod) == identity.pod_ip(pod)
        assert pod_uid(pod) == identity.pod_uid(pod)


@pytest.mark.parametrize("kind", KINDS)
def test_checkouts_client_errors_are_texts(kind: str) -> None:
    """grpc-go's and net/http's errors, through checkout's wraps, are explained texts."""
    from r2act.systems.astronomyshop.errors import checkout_chain, go_grpc_error, go_http_error

    for callee in ("cart", "currency", "product-catalog", "payment", "checkout"):
        assert explained(go_grpc_error(kind, callee)), (kind, callee)
    for callee in ("email", "shipping"):
        assert explained(go_http_error(kind, callee)), (kind, callee)
    for root in ("cart", "valkey-cart", "currency", "product-catalog", "shipping", "quote"):
        assert explained(checkout_chain(kind, root)), (kind, root)


def test_the_dialled_address_of_a_config_fault_is_the_one_printed() -> None:
    from r2act.systems.astronomyshop.errors import go_grpc_error, js_grpc_error

    assert "203.0.113.9:8080: i/o timeout" in go_grpc_error("dns_random@203.0.113.9:8080", "cart")
    assert js_grpc_error("unavailable@10.1.2.3:8080", "cart")[2].endswith("10.1.2.3:8080")


def test_python_records_carry_the_call_site() -> None:
    """The Python SDK's handler adds where the log call is; the root format prints it too."""
    stdout: list[LogLine] = []
    collector: list[LogLine] = []
    _render(RENDERERS.served(FakePod("recommendation"), "ListRecommendations"), stdout)
    made = COLLECTOR_RENDERERS.served(FakePod("recommendation"), COLLECTOR, "ListRecommendations")
    _render(made, collector)
    assert "[recommendation_server.py:47]" in stdout[0].line
    lines = {x.line for x in collector}
    assert "     -> code.lineno: Int(47)" in lines
    assert "     -> code.function: Str(ListRecommendations)" in lines
