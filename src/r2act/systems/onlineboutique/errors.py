"""Online Boutique's error texts as each of its clients prints them, composed from its texts.

A failed call reads differently depending on who made it and what broke underneath, and
the chain is what the code builds, not a guess by route:

- a Go gRPC client (frontend, checkout) prints grpc-go's status text, whose desc is the
  transport's dial error (``connect: connection refused`` to the callee's ClusterIP, an
  ``i/o timeout`` to an address nobody answers, ``produced zero addresses`` when the
  name does not resolve) or the callee's own status (cartservice's FailedPrecondition
  with StackExchange.Redis' exception when Redis is down; checkout's Internal error
  wrapping its failed step; recommendationservice's Unknown ``Exception calling
  application`` when its own catalog call failed);
- the frontend wraps the error with the message of the handler step that failed, chosen
  by **which backend failed on which page** (``frontend_error``): the simulator's scene
  says which backend a request died on, this module says what the frontend logs for it.

Error kinds (what the scene reports per failed call): ``unavailable`` (nothing
listens: refused), ``canceled`` (the caller's context was canceled), ``deadline`` (a
per-call deadline ran out; Online Boutique sets one only on the frontend's ads call),
``dns_error`` (the address's name does not resolve), ``dns_random`` (the address is an
IPv4 nobody answers on), and ``upstream|<kind>|<service>`` (the callee answered with an
error because its own call to ``<service>`` failed with ``<kind>``). A kind may carry the
address it dialled after a ``@`` (``dns_random@203.0.113.9:7070``).
"""

from __future__ import annotations

from functools import lru_cache

from r2act.systems.onlineboutique.shop import PRODUCTS
from r2act.systems.onlineboutique.texts import T
from r2act.systems.onlineboutique.topology import ONLINE_BOUTIQUE
from r2act.systems.render import cluster_ip

PORTS: dict[str, int] = {d.name: d.service_port or 0 for d in ONLINE_BOUTIQUE.deployments}
"""Service port per deployment (what clients dial)."""

FRONTEND_STEPS: dict[str, tuple[tuple[str, str], ...]] = {
    "GET /": (
        ("currencyservice", "fe.w.currencies"),
        ("productcatalogservice", "fe.w.products"),
        ("cartservice", "fe.w.cart"),
    ),
    "GET /product/*": (
        ("productcatalogservice", "fe.w.product"),
        ("currencyservice", "fe.w.currencies"),
        ("cartservice", "fe.w.cart"),
    ),
    "POST /cart": (
        ("productcatalogservice", "fe.w.product"),
        ("cartservice", "fe.w.add"),
    ),
    "GET /cart": (
        ("currencyservice", "fe.w.currencies"),
        ("cartservice", "fe.w.cart"),
        ("shippingservice", "fe.w.quote"),
        ("productcatalogservice", "fe.w.cart_product"),
    ),
    "POST /cart/checkout": (
        ("checkoutservice", "fe.w.order"),
        ("currencyservice", "fe.w.currencies"),
    ),
    "POST /cart/empty": (("cartservice", "fe.w.empty"),),
}
"""Per route, the backends whose failure is fatal to the page, in the handler's order,
with the wrap the handler logs (``frontend/handlers.go``). A backend that appears on a
page only after another step already failed never shows its own wrap there (e.g. currency
on the home page fails at ``could not retrieve currencies`` before any conversion).
Recommendations and ads are absent: the handlers tolerate them (warnings, L180, L268, L530;
checkout discards them, L378). ``POST /setCurrency`` calls no backend at all (L500-522)."""

TOLERATED: dict[str, str] = {
    "recommendationservice": "fe.recs_failed",
    "adservice": "fe.ads_failed",
}
"""Backends whose failure the frontend logs as a warning and renders the page anyway."""

_FALLBACK = {
    "currencyservice": "fe.w.currencies",
    "productcatalogservice": "fe.w.product",
    "cartservice": "fe.w.cart",
    "redis-cart": "fe.w.cart",
    "shippingservice": "fe.w.quote",
    "checkoutservice": "fe.w.order",
}
"""The wrap of a backend on a route whose handler does not call it (mechanics that
disagree with ``FRONTEND_STEPS``): the backend's first wrap anywhere."""


def frontend_wrap(scope: str, backend: str) -> str:
    """Key of the wrap the frontend logs when ``backend`` fails a request on ``scope``."""
    for name, key in FRONTEND_STEPS.get(scope, ()):
        if name == backend:
            return key
    return _FALLBACK.get(backend, "fe.w.products")


@lru_cache(maxsize=4096)
def frontend_error(scope: str, backend: str, kind: str, product: int = 0) -> str:
    """The ``error`` field of the frontend's ``request error`` line (``handlers.go`` L537)."""
    inner = go_client_error(kind, backend, product)
    key = frontend_wrap(scope, backend)
    if key in ("fe.w.cart_product", "fe.w.convert_home", "fe.w.cart_convert"):
        return T(key)(PRODUCTS[product % len(PRODUCTS)], inner)
    return T(key)(inner)


def _split(kind: str, callee: str) -> tuple[str, str]:
    """(kind, address dialled): a kind may carry its address after ``@``."""
    base, _, addr = kind.partition("@")
    return base, addr or f"{cluster_ip(callee)}:{PORTS.get(callee, 0)}"


@lru_cache(maxsize=4096)
def go_client_error(kind: str, callee: str, product: int = 0) -> str:
    """``err.Error()`` of a Go gRPC client (grpc-go) whose call to ``callee`` failed."""
    status = T("grpc.status")
    if kind.startswith("upstream"):
        parts = [*kind.split("|"), "", ""]
        root_kind, root = parts[1] or "unavailable", parts[2] or callee
        return _upstream(callee, root_kind, root, product)
    base, addr = _split(kind, callee)
    if base == "canceled":
        return status("Canceled", T("go.canceled")())
    if base == "deadline":
        return status("DeadlineExceeded", T("go.deadline")())
    if base == "dns_error":
        return status("Unavailable", T("grpc.no_addresses")())
    if base == "dns_random":
        return status("Unavailable", T("grpc.conn_error")(T("go.io_timeout")(addr)))
    return status("Unavailable", T("grpc.conn_error")(T("go.refused")(addr)))


def _upstream(callee: str, kind: str, root: str, product: int) -> str:
    """What ``callee`` answers when its own call to ``root`` failed with ``kind``."""
    status = T("grpc.status")
    if callee == "cartservice":
        return status("FailedPrecondition", cart_storage_detail(kind))
    if callee == "recommendationservice":
        return status("Unknown", T("grpcio.exception")(python_inactive(kind, root)))
    if callee == "checkoutservice":
        return status("Internal", checkout_chain(kind, root, product))
    return go_client_error(kind if not kind.startswith("upstream") else "unavailable", callee)


def checkout_chain(kind: str, root: str, product: int = 0) -> str:
    """The desc checkout's PlaceOrder returns when its step calling ``root`` failed.

    ``checkoutservice/main.go``: the cart, catalog, currency and quote steps are wrapped
    by ``prepareOrderItemsAndShippingQuoteFromCart`` (L288-305) and returned as Internal
    (L240); a failed catalog lookup or price conversion drops the inner error (L346,
    L350); the charge is wrapped twice (L254, L374). Redis is reached through cartservice."""
    pid = f'"{PRODUCTS[product % len(PRODUCTS)]}"'
    if root in ("cartservice", "redis-cart"):
        inner = (
            go_client_error(f"upstream|{kind}|redis-cart", "cartservice")
            if root == "redis-cart"
            else go_client_error(kind, "cartservice")
        )
        return T("co.e.cart")(T("co.e.get_cart")(inner))
    if root == "productcatalogservice":
        return T("co.e.prepare")(T("co.e.product")(pid))
    if root == "currencyservice":
        return T("co.e.prepare")(T("co.e.price")(pid, "USD"))
    if root == "shippingservice":
        return T("co.e.quote")(T("co.e.get_quote")(go_client_error(kind, root)))
    if root == "paymentservice":
        return T("co.e.charge")(T("co.e.card")(go_client_error(kind, root)))
    return T("co.e.charge")(T("co.e.card")(go_client_error(kind, "paymentservice")))


def cart_storage_detail(kind: str) -> str:
    """cartservice's RpcException detail when Redis cannot be reached (``RedisCartStore.cs``
    L102: ``Can't access cart storage. {ex}``; the exception's first line)."""
    return T("ca.storage")(T("redis.not_connected")(T("redis.unable")()))


def python_inactive(kind: str, callee: str) -> str:
    """grpcio's ``_InactiveRpcError`` for recommendationservice's failed catalog call."""
    base, addr = _split(kind, callee)
    ipv4 = addr if addr[0].isdigit() else f"{cluster_ip(callee)}:{PORTS.get(callee, 0)}"
    if base == "dns_error":
        host = addr.rsplit(":", 1)[0]
        details = T("grpcio.dns")(addr, host)
    elif base == "dns_random":
        details = T("grpcio.timeout")(ipv4)
    else:
        details = T("grpcio.refused")(ipv4)
    debug = "UNKNOWN:" + details + ' {grpc_status:14, grpc_message:"' + details + '"}'
    return T("grpcio.inactive")("UNAVAILABLE", details, debug)
