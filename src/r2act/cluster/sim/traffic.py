"""The request model of Online Boutique: who calls whom per user request, and how fast.

Locust users (think time ``between(1, 10)`` s, task weights from the load generator) send
requests to frontend routes; each route handler calls backends in a fixed pattern, taken
from the frontend's and checkout's handlers (the home page converts every product price,
checkout fans out to six services, ...). Per-call costs are small baseline figures; faults
add latency and failures on top. A failing call is fatal to the page unless the handler
tolerates it (ads on the frontend, the confirmation e-mail in checkout), as in the code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from r2act.schema import Topology


@dataclass(frozen=True)
class Call:
    """One RPC (repeated ``count`` times) and the calls its handler makes in turn."""

    callee: str
    op: str
    count: int = 1
    fatal: bool = True
    children: tuple[Call, ...] = field(default=())


_REDIS_GET = Call("redis-cart", "HGET")
_REDIS_SET = Call("redis-cart", "HSET")
_CURRENCIES = Call("currencyservice", "GetSupportedCurrencies")
_CART = Call("cartservice", "GetCart", children=(_REDIS_GET,))
_RECOMMEND = Call(
    "recommendationservice",
    "ListRecommendations",
    children=(Call("productcatalogservice", "ListProducts"),),
)
_ADS = Call("adservice", "GetAds", fatal=False)


def _convert(count: int) -> Call:
    return Call("currencyservice", "Convert", count=count)


ROUTE_CALLS: dict[str, tuple[Call, ...]] = {
    "GET /": (
        _CURRENCIES,
        Call("productcatalogservice", "ListProducts"),
        _CART,
        _convert(9),
        _ADS,
    ),
    "POST /setCurrency": (_CURRENCIES,),
    "GET /product/*": (
        Call("productcatalogservice", "GetProduct"),
        _CURRENCIES,
        _CART,
        _convert(1),
        _RECOMMEND,
        _ADS,
    ),
    "POST /cart": (
        Call("productcatalogservice", "GetProduct"),
        Call("cartservice", "AddItem", children=(_REDIS_SET,)),
    ),
    "GET /cart": (
        _CURRENCIES,
        _CART,
        _RECOMMEND,
        Call("shippingservice", "GetQuote"),
        Call("productcatalogservice", "GetProduct", count=2),
        _convert(3),
    ),
    "POST /cart/checkout": (
        Call(
            "checkoutservice",
            "PlaceOrder",
            children=(
                _CART,
                Call("productcatalogservice", "GetProduct", count=2),
                _convert(3),
                Call("shippingservice", "GetQuote"),
                Call("paymentservice", "Charge"),
                Call("shippingservice", "ShipOrder"),
                Call("cartservice", "EmptyCart", children=(_REDIS_SET,)),
                Call("emailservice", "SendOrderConfirmation", fatal=False),
            ),
        ),
        _RECOMMEND,
        _CURRENCIES,
    ),
}
"""Frontend route scope -> the RPCs its handler makes (Online Boutique v0.10.6 handlers)."""

SERVICE_MS: dict[str, float] = {
    "frontend": 8.0,
    "currencyservice": 1.5,
    "productcatalogservice": 2.0,
    "cartservice": 4.0,
    "redis-cart": 0.5,
    "recommendationservice": 5.0,
    "shippingservice": 2.0,
    "checkoutservice": 10.0,
    "paymentservice": 3.0,
    "emailservice": 4.0,
    "adservice": 4.0,
}
"""Own processing time per call in milliseconds on an unloaded pod."""

IDLE_CORES: dict[str, float] = {
    "go": 0.002,
    "node": 0.005,
    "python": 0.004,
    "java": 0.012,
    "csharp": 0.008,
    "redis": 0.003,
    "locust": 0.03,
}
"""CPU an idle container burns (runtime, GC, timers), by language."""

THINK_S = 5.5
"""Mean Locust think time of Online Boutique's users: ``wait_time = between(1, 10)``."""
SLO_BUDGET_MS = 150.0
"""Extra page latency over the healthy baseline that the health probe tolerates."""


def route_calls(topology: Topology, scope: str) -> tuple[Call, ...]:
    """The calls of a route; unknown routes call each of their services once, directly."""
    known = ROUTE_CALLS.get(scope)
    if known is not None:
        return known
    route = next(r for r in topology.routes if r.scope == scope)
    return tuple(Call(s, "Call") for s in route.services if s != topology.entrypoint)


def user_rate(users: int) -> float:
    """Requests per second the load generator sends."""
    return users / THINK_S


def route_rates(topology: Topology, users: int) -> dict[str, float]:
    """Requests per second per route scope."""
    total = sum(r.weight for r in topology.routes) or 1.0
    rate = user_rate(users)
    return {r.scope: rate * r.weight / total for r in topology.routes}
