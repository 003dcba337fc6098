"""Online Boutique's load model: who calls whom per user request, and how fast.

Locust users (think time ``between(1, 10)`` s, task weights from the load generator) send
requests to frontend routes; each route handler calls backends in a fixed pattern, taken
from the frontend's and checkout's handlers (the home page converts every product price,
checkout fans out to six services, ...). Per-call costs are small baseline figures; faults
add latency and failures on top.

Failure propagation is the handlers' (Online Boutique v0.10.6): a handler calls in order
and returns at the first failing call it does not tolerate (``frontend/handlers.go``
``renderHTTPError``), so later calls of that request are never made. Tolerated failures:
recommendations on the product and cart pages (logged as a warning, L178-181, L266-269)
and after an order (``recommendations, _ :=``, L378); ads on every page (``chooseAd``
warns, L527-532); in checkout the cart emptying (``_ = cs.emptyUserCart``,
checkoutservice/main.go L263) and the confirmation e-mail (a warning, L273-275).
``POST /setCurrency`` only sets a cookie and calls no backend (L499-520). The only
per-call deadline is the frontend's 100 ms on ads (``frontend/rpc.go`` L120); every other
call waits as long as the callee takes, so a slow backend makes slow pages, not errors.
"""

from __future__ import annotations

from r2act.systems.base import Call

_REDIS_GET = Call("redis-cart", "HGET")
_REDIS_SET = Call("redis-cart", "HSET")
_CURRENCIES = Call("currencyservice", "GetSupportedCurrencies")
_CART = Call("cartservice", "GetCart", children=(_REDIS_GET,))
_RECOMMEND = Call(
    "recommendationservice",
    "ListRecommendations",
    fatal=False,
    children=(Call("productcatalogservice", "ListProducts"),),
)
_ADS = Call("adservice", "GetAds", fatal=False, deadline_ms=100.0)


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
    "POST /setCurrency": (),
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
                Call("cartservice", "EmptyCart", fatal=False, children=(_REDIS_SET,)),
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

USERS = 27
"""Users of the load generator r2act deploys (``USERS`` in ``deploy/loadgenerator/patch.yaml``;
the release runs 10): the smallest count whose healthy incident reaches the paper's log volume
(``docs/simulator.md``, "Volume from load"). A manifest that names none records this."""
THINK_S = 5.5
"""Mean Locust think time of Online Boutique's users: ``wait_time = between(1, 10)``
(``loadgenerator/locustfile.py`` L92), waited once per task."""

TASKS: dict[str, tuple[int, tuple[str, ...]]] = {
    "index": (1, ("GET /",)),
    "setCurrency": (2, ("POST /setCurrency",)),
    "browseProduct": (10, ("GET /product/*",)),
    "addToCart": (2, ("GET /product/*", "POST /cart")),
    "viewCart": (3, ("GET /cart",)),
    "checkout": (1, ("GET /product/*", "POST /cart", "POST /cart/checkout")),
}
"""The load generator's tasks: weight and the requests each sends, in order
(``loadgenerator/locustfile.py`` L34-L72, weights L83-L88). A user picks a task by weight,
sends its requests back to back, then waits; the route weights of the topology are these
requests per 19 tasks (``GET /product/*`` 10 + 2 + 1, ``POST /cart`` 2 + 1)."""

REQUESTS_PER_TASK = sum(w * len(reqs) for w, reqs in TASKS.values()) / sum(
    w for w, _ in TASKS.values()
)
"""23 / 19 = 1.21 Locust requests between two waits."""

REDIRECTS: dict[str, str] = {
    "POST /setCurrency": "GET /",
    "POST /cart": "GET /cart",
}
"""What each POST's 302 names and Locust's ``FastHttpUser`` follows (its client,
geventhttpclient's ``UserAgent``, follows 301/302/303/307 up to ``max_redirects`` = 30,
``locust/contrib/fasthttp.py`` L378, ``allow_redirects=True`` by default, L199, L255):
``setCurrencyHandler`` redirects to the ``Referer`` or ``/`` (``frontend/handlers.go``
L515-L522; Locust sends no Referer), ``addToCartHandler`` to ``/cart`` (L235-L236). The
frontend serves and logs the followed GET as a request of its own; Locust records one
entry, the POST's. ``POST /cart/checkout`` renders the order page (200, no redirect)."""
