"""The Astronomy Shop's load model: who calls whom per user request, and how fast.

Paths below are under ``shared/reference/opentelemetry-demo-2.2.0/src/``.

**Users.** The chart's Locust (``load-generator/locustfile.py``) runs ``WebsiteUser``
(an ``HttpUser``, L113) with ``wait_time = between(1, 10)`` (L114), waited once per task.
Browser users (``WebsiteBrowserUser``, a Playwright user, L237-L240) exist only when
``LOCUST_BROWSER_TRAFFIC_ENABLED`` is on; ``deploy/astronomyshop/values.yaml`` ships it
``"false"``, so they are left out. The user count is ``LOCUST_USERS``: ``"10"`` in the
chart (``opentelemetry-demo-chart-0.40.10/values.yaml`` L510-L511) and unchanged by
r2act's values (``USERS``).

**Requests.** Every request goes to the entry point, Envoy (``frontend-proxy``), whose
catch-all route passes it to the frontend (``frontend-proxy/envoy.tmpl.yaml`` L64-L65);
the frontend's Next.js API handlers make the backend calls. The load generator sends no
``currencyCode`` and no ``sessionId``, so every ``ProductCatalogService.getProduct`` of
the frontend skips the currency conversion (``frontend/services/ProductCatalog.service.ts``
L11-L14: only a non-empty code other than USD is converted) and ``GET /api/cart`` reads
the empty cart of the user ``''`` (``frontend/pages/api/cart.ts`` L16-L17: no item, so no
product look-up). The API routes answer 200 with JSON (``cart.ts`` L31, L40), never a
redirect, so Locust follows none.

**Failure propagation.** Each API handler awaits its gateway calls, and a gateway rejects
on any gRPC error (``frontend/gateways/rpc/*.gateway.ts``, e.g. ``ProductCatalog.gateway.ts``
L19); ``InstrumentationMiddleware`` records the error and rethrows it, so the request is a
500 (``frontend/utils/telemetry/InstrumentationMiddleware.ts`` L23-L27). Every frontend
call is therefore fatal; ``Promise.all`` over several look-ups fails at the first one.
Checkout's ``PlaceOrder`` (``checkout/main.go`` L289-L393) calls in order and returns at
the first failing one, except: emptying the cart (``_ = cs.emptyUserCart``, L349), the
confirmation e-mail (only a warning, L379-L380) and the Kafka produce to accounting and
fraud-detection (``sendToPostProcessor`` logs and returns, L611-L662). Those consumers
read Kafka off the user path, so no route reaches them (their spans start traces of their
own: ``tracing.py``, ``Tracing.consumers``). In product-reviews the AI
assistant's review look-up is a tool call whose exception becomes a JSON error for the
model (``product-reviews/database.py`` L22-L26), so it is tolerated too.

**Feature flags.** Handlers evaluate flags through OpenFeature, which falls back to the
default value when flagd does not answer (e.g. ``checkout/main.go`` L703-L714), so flagd
never fails a request; its calls are left out of these trees, which drive the log and
metric model (flagd has no Chaos Mesh cell in ``catalogue.py``). The spans do show them:
cart's per-request evaluation and flagd's own spans are walked from ``tracing.EVALUATIONS``
(``cluster/sim/flagspans.py``), as a call no handler fails on. ``flood_home`` asks flagd
over OFREP from the load generator itself, not through the entry point (``locustfile.py``
L78-L85, L218-L220): a trace of its own per run (``tracing.SIDE_TRACES``).

**Deadlines.** None: the frontend's gRPC clients set none (``gateways/rpc/*.gateway.ts``)
and checkout's ``otelhttp.Post`` uses the default client (``checkout/main.go`` L463,
L561, L583), so a slow backend makes slow pages, not errors.
"""

from __future__ import annotations

from r2act.systems.base import Call

USERS = 10
"""``LOCUST_USERS`` as ``deploy/astronomyshop/values.yaml`` ships it (the chart's default,
``opentelemetry-demo-chart-0.40.10/values.yaml`` L510-L511, kept)."""

THINK_S = 5.5
"""Mean think time: ``wait_time = between(1, 10)`` (``locustfile.py`` L114), the mean of a
uniform draw on [1, 10] s."""

CHECKOUT_MULTI_ITEMS = 3
"""Add-to-cart rounds of ``checkout_multi``: ``random.choice([2, 3, 4])``
(``locustfile.py`` L208), mean 3."""

ORDER_ITEMS = 2
"""Distinct products in an order, rounded (``Call.count`` is whole): ``checkout`` adds one
(L199), ``checkout_multi`` 2-4 draws from 10 products (L181, L211-L212), 2.68 distinct on
average since the cart merges a repeated product; the two tasks weigh the same (L195,
L205), so (1 + 2.68) / 2 = 1.84, rounded to 2."""

TASKS: dict[str, tuple[int, tuple[tuple[str, float], ...]]] = {
    "index": (1, (("GET /", 1),)),  # L120-L124
    "browse_product": (10, (("GET /api/products/*", 1),)),  # L126-L131
    "get_recommendations": (3, (("GET /api/recommendations", 1),)),  # L133-L141
    "get_product_reviews": (2, (("GET /api/product-reviews/*", 1),)),  # L143-L148
    "ask_product_ai_assistant": (1, (("POST /api/product-ask-ai-assistant/*", 1),)),
    "get_ads": (3, (("GET /api/data/", 1),)),  # L161-L169
    "view_cart": (3, (("GET /api/cart", 1),)),  # L171-L175
    "add_to_cart": (2, (("GET /api/products/*", 1), ("POST /api/cart", 1))),  # L177-L193
    "checkout": (  # L195-L203: one add_to_cart, then the order
        1,
        (("GET /api/products/*", 1), ("POST /api/cart", 1), ("POST /api/checkout", 1)),
    ),
    "checkout_multi": (  # L205-L216: 2-4 add_to_cart rounds, then the order
        1,
        (
            ("GET /api/products/*", CHECKOUT_MULTI_ITEMS),
            ("POST /api/cart", CHECKOUT_MULTI_ITEMS),
            ("POST /api/checkout", 1),
        ),
    ),
    "flood_home": (5, ()),  # L218-L225: loadGeneratorFloodHomepage is 0 while off
}
"""The load generator's tasks (``locustfile.py``, weights in ``@task(n)``): weight, and the
requests each sends per run (route scope, mean count). ``ask_product_ai_assistant`` is
L150-L159. A user's ``on_start`` also sends one ``GET /`` (L227-L234), once per user
life, left out."""

TASK_WEIGHT = sum(w for w, _ in TASKS.values())
"""32: the weights of all tasks, ``flood_home`` included (it is picked, sends nothing while
its flag is off, and the user waits again)."""


def route_weights() -> dict[str, float]:
    """Requests per route scope per ``TASK_WEIGHT`` tasks (the topology's route weights)."""
    weights: dict[str, float] = {}
    for weight, requests in TASKS.values():
        for scope, count in requests:
            weights[scope] = weights.get(scope, 0.0) + weight * count
    return weights


REQUESTS_PER_TASK = sum(route_weights().values()) / TASK_WEIGHT
"""37 / 32 = 1.16 Locust requests between two waits."""

LOAD_STATS: str | None = None
"""No log holds a stats table (``System.load_stats``): the chart runs Locust with its web UI
(``LOCUST_HEADLESS`` ``"false"``, ``LOCUST_AUTOSTART`` ``"true"``, no ``--print-stats``:
``opentelemetry-demo-chart-0.40.10/examples/default/rendered/component.yaml`` L1682-L1685,
``load-generator/Dockerfile`` L22), so no stats printer runs (locust-2.43.0
``locust/main.py`` L516-L519); the table exists only in the web UI on port 8089. With
``--skip-log-setup`` (Dockerfile L22) Locust installs no console handler, and the root
logger's only handler is the locustfile's OTLP one (``locustfile.py`` L55-L60): its log
records reach the collector, not the pod log (``logsinks``)."""

REDIRECTS: dict[str, str] = {}
"""None: every API route answers 200 with a JSON body (``frontend/pages/api/cart.ts`` L31,
L40, ``checkout.ts`` L35, ``data.ts`` L17), and ``GET /`` renders the page."""

_DB = "postgresql"
_PRODUCT = Call("product-catalog", "GetProduct", children=(Call(_DB, "SELECT"),))
"""``GetProduct`` reads the row from PostgreSQL and fails NotFound when it cannot
(``product-catalog/main.go`` L446-L452)."""


def _products(count: int) -> Call:
    """``count`` look-ups of one product each (a ``Promise.all`` or a loop over items)."""
    return Call(_PRODUCT.callee, _PRODUCT.op, count=count, children=_PRODUCT.children)


_PRODUCTS = Call("product-catalog", "ListProducts", children=(Call(_DB, "SELECT"),))
"""``ListProducts`` loads every product from PostgreSQL (``product-catalog/main.go``
L420-L424)."""
_CART_GET = Call("cart", "GetCart", children=(Call("valkey-cart", "HGET"),))
"""``GetCartAsync``: one ``HashGetAsync`` (``cart/src/cartstore/ValkeyCartStore.cs`` L223)."""
_CART_ADD = Call(
    "cart",
    "AddItem",
    children=(
        Call("valkey-cart", "HGET"),
        Call("valkey-cart", "HSET"),
        Call("valkey-cart", "EXPIRE"),
    ),
)
"""``AddItemAsync``: read, write and re-expire the user's hash (``ValkeyCartStore.cs``
L148, L173, L174)."""
_CONVERT = Call("currency", "Convert")


def _frontend(op: str, *calls: Call) -> tuple[Call, ...]:
    """Envoy passes the request to the frontend, whose handler makes ``calls``."""
    return (Call("frontend", op, children=calls),)


_PLACE_ORDER = Call(
    "checkout",
    "PlaceOrder",
    children=(
        _CART_GET,  # getUserCart, L407 (L492)
        _products(ORDER_ITEMS),  # prepOrderItems: GetProduct per item, L510
        Call("currency", "Convert", count=ORDER_ITEMS),  # price per item, L514
        Call(  # quoteShipping: POST /get-quote, L463; shipping asks quote, quote.rs L39-L43
            "shipping", "POST /get-quote", children=(Call("quote", "POST /getquote"),)
        ),
        _CONVERT,  # shipping cost, L419
        Call("payment", "Charge"),  # chargeCard, L329, L543
        Call("shipping", "POST /ship-order"),  # shipOrder, L342, L583
        Call(  # _ = cs.emptyUserCart, L349
            "cart", "EmptyCart", fatal=False, children=_CART_ADD.children[1:]
        ),
        Call("email", "POST /send_order_confirmation", fatal=False),  # L379-L380, L561
        Call("kafka", "Produce", fatal=False),  # sendToPostProcessor, L386-L389, L611
    ),
)

ROUTE_CALLS: dict[str, tuple[Call, ...]] = {
    # Next.js renders the page server-side with no backend call (pages/_app.tsx L77-L81).
    "GET /": _frontend("GET /"),
    # pages/api/products/[productId]/index.ts L15.
    "GET /api/products/*": _frontend("GET /api/products/[productId]", _PRODUCT),
    # pages/api/recommendations.ts L16-L22: the recommendations, then the first four of
    # them (recommendation returns up to 5 of the 9 others, recommendation_server.py
    # L71, L95-L109).
    "GET /api/recommendations": _frontend(
        "GET /api/recommendations",
        Call("recommendation", "ListRecommendations", children=(_PRODUCTS,)),
        _products(4),
    ),
    # pages/api/product-reviews/[productId]/index.ts L17; product_reviews_server.py
    # L124 and database.py L28-L47 (the query's exception is raised).
    "GET /api/product-reviews/*": _frontend(
        "GET /api/product-reviews/[productId]",
        Call("product-reviews", "GetProductReviews", children=(Call(_DB, "SELECT"),)),
    ),
    # pages/api/product-ask-ai-assistant/[productId]/index.ts L18; product_reviews_server.py
    # L218 (the model asks for a tool, llm/app.py L113-L160), L244-L248 (the reviews, a
    # tolerated look-up), L292 (the final answer).
    "POST /api/product-ask-ai-assistant/*": _frontend(
        "POST /api/product-ask-ai-assistant/[productId]",
        Call(
            "product-reviews",
            "AskProductAIAssistant",
            children=(
                Call("llm", "POST /v1/chat/completions"),
                Call(_DB, "SELECT", fatal=False),
                Call("llm", "POST /v1/chat/completions"),
            ),
        ),
    ),
    # pages/api/data.ts L15.
    "GET /api/data/": _frontend("GET /api/data", Call("ad", "GetAds")),
    # pages/api/cart.ts L17 (an empty cart: no product look-up, see the module docstring).
    "GET /api/cart": _frontend("GET /api/cart", _CART_GET),
    # pages/api/cart.ts L37-L38.
    "POST /api/cart": _frontend("POST /api/cart", _CART_ADD, _CART_GET),
    # pages/api/checkout.ts L18-L33: the order, then a look-up per ordered item.
    "POST /api/checkout": _frontend(
        "POST /api/checkout",
        _PLACE_ORDER,
        _products(ORDER_ITEMS),
    ),
}
"""Entry route scope -> the calls Envoy and the frontend's API handler make (2.2.0)."""


def reached(calls: tuple[Call, ...]) -> list[str]:
    """Every service a call tree reaches, in first-call order (a route's ``services``)."""
    seen: list[str] = []
    frontier = list(calls)
    while frontier:
        call = frontier.pop(0)
        if call.callee not in seen:
            seen.append(call.callee)
        frontier.extend(call.children)
    return seen


SERVICE_MS: dict[str, float] = {
    # Proxies and stores: a hop or a key look-up, well under a millisecond of work.
    "frontend-proxy": 0.5,  # Envoy forwarding one request
    "valkey-cart": 0.5,  # one in-memory hash command
    # The frontend: Next.js on Node renders or serialises JSON per request, the heaviest
    # per-request work of the shop's front door (Online Boutique's Go frontend is 8 ms).
    "frontend": 8.0,
    # gRPC services answering from memory or one indexed query.
    "product-catalog": 2.0,  # one indexed SELECT through database/sql
    "postgresql": 1.0,  # an indexed SELECT on a 10-row table
    "currency": 1.0,  # C++, a table look-up and a multiplication
    "cart": 3.0,  # .NET, (de)serialises the cart protobuf around the Valkey calls
    "ad": 4.0,  # JVM, picks ads from an in-memory map
    "recommendation": 5.0,  # CPython gRPC, list handling and a random sample
    "payment": 3.0,  # Node, validates the card number
    "shipping": 2.0,  # Rust actix, builds a quote or a tracking id
    "quote": 3.0,  # PHP, computes the price from the item count
    "email": 4.0,  # Ruby Sinatra, renders the confirmation template
    "checkout": 10.0,  # Go, orchestrates ten calls and marshals the order
    "kafka": 2.0,  # one produce acknowledged by the broker
    "product-reviews": 5.0,  # CPython gRPC, one query and response building
    # The llm is a mock (llm/app.py): a Flask handler that builds a canned completion.
    "llm": 5.0,
}
"""Own processing time per call in milliseconds on an unloaded pod. No source publishes
these: they are named simulation parameters, chosen per runtime and per what the handler
does (the comment on each entry), on the scale of Online Boutique's
(``systems/onlineboutique/traffic.py``), not measured on a cluster."""
