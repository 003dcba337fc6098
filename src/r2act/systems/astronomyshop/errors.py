"""The Astronomy Shop's error texts as each of its clients reports them, composed from its texts.

Two client libraries carry the user paths' calls, and each words a failure its own way:

- **grpc-go** (checkout's calls to cart, currency, product-catalog and payment):
  ``rpc error: code = Unavailable desc = connection error: desc = "transport: Error while
  dialing: dial tcp <ClusterIP>:8080: connect: connection refused"`` (``go_grpc_error``);
  checkout's own HTTP calls (email, shipping) fail with Go's ``url.Error``, ``Post
  "http://email:8080/send_order_confirmation": dial tcp ...`` (``go_http_error``);
- **grpc-js** (the frontend's gateways): ``<code> <NAME>: <details>``, the details being
  ``No connection established. Last error: connect ECONNREFUSED <ClusterIP>:8080`` when
  nothing listens, or the callee's own status when it answered with an error
  (``js_grpc_error``).

Error kinds are the engine's (``cluster/sim/scene.py``): ``unavailable``, ``canceled``,
``deadline``, ``dns_error``, ``dns_servfail`` (the resolver answers SERVFAIL: Go's
``server misbehaving``, from kube-dns' ClusterIP), ``dns_random`` and
``upstream|<kind>|<service>`` (the callee answered with an error because its own call
to ``<service>`` failed); a kind may carry the address it dialled after ``@``. A call a
feature flag made fail carries the flag (``flag_error:<key>``, ``systems.flags``): the
callee answered with the status the flag's declaration gives (``flags.py``,
``FeatureFlag.status``), so each client prints the flag's own message inside its usual
frame, never the text of a refused connection (the flag's code path refuses none).
"""

from __future__ import annotations

from functools import lru_cache

from r2act.systems.astronomyshop.flags import FLAGS_2_2_0
from r2act.systems.astronomyshop.render_formats import NAMESPACE
from r2act.systems.astronomyshop.texts import T
from r2act.systems.astronomyshop.topology import ASTRONOMY_SHOP
from r2act.systems.flags import FeatureFlag, FlagStatus, flag_of_kind
from r2act.systems.render import cluster_ip

KUBE_DNS = "10.96.0.10:53"
"""kube-dns' ClusterIP on kind (the resolver every pod's ``resolv.conf`` names)."""
PORTS: dict[str, int] = {d.name: d.service_port or 0 for d in ASTRONOMY_SHOP.deployments}
"""Service port per deployment (what clients dial)."""
HTTP_PATHS = {"email": "/send_order_confirmation", "shipping": "/get-quote"}
"""The path of checkout's first HTTP call to each HTTP callee (``checkout/main.go`` L463,
L561): the shipping quote comes before the shipment, so a dead shipping fails there."""
GRPC_CODES = {
    "Canceled": (1, "CANCELLED"),
    "Unknown": (2, "UNKNOWN"),
    "DeadlineExceeded": (4, "DEADLINE_EXCEEDED"),
    "NotFound": (5, "NOT_FOUND"),
    "FailedPrecondition": (9, "FAILED_PRECONDITION"),
    "Internal": (13, "INTERNAL"),
    "Unavailable": (14, "UNAVAILABLE"),
}
"""gRPC status codes by grpc-go's name: grpc-js' number and name (``constants.ts``)."""


def flag_of(kind: str) -> FeatureFlag | None:
    """The flag whose failed call ``kind`` is (None: the failure is not a flag's)."""
    key = flag_of_kind(kind.partition("@")[0])
    return FLAGS_2_2_0.get(key) if key is not None else None


def caught_flag(reader: str, callee: str) -> FeatureFlag | None:
    """The flag whose failure ``reader`` catches on its call to ``callee`` (the engine's
    ``flag_caught`` kind names no flag: the reader's flag whose status ``callee`` gives)."""
    for flag in FLAGS_2_2_0.values():
        if flag.service == reader and flag.status is not None and flag.status.via == callee:
            return flag
    return None


def flag_answer(kind: str, callee: str) -> tuple[str, str] | None:
    """(grpc-go code name, message) ``callee`` answered a flag's failed call with: the
    flag's status, or, when another service gave it (``FlagStatus.via``), what ``callee``
    answers when its call to that service fails so. None: ``kind`` is not a flag's."""
    flag = flag_of(kind)
    status = flag.status if flag is not None else None
    if status is None:
        return None
    if status.via is None or status.via == callee:
        return status.code, status.message
    return callee_status(kind, status.via, callee)


def _split(kind: str, callee: str) -> tuple[str, str]:
    """(kind, address dialled): a kind may carry its address after ``@``."""
    base, _, addr = kind.partition("@")
    return base, addr or f"{cluster_ip(callee)}:{PORTS.get(callee, 0)}"


def _root(kind: str, callee: str) -> tuple[str, str]:
    """(kind, service) of the failure underneath an ``upstream|kind|service`` kind."""
    parts = [*kind.split("|"), "", ""]
    return parts[1] or "unavailable", parts[2] or callee


def go_dial_error(kind: str, callee: str) -> str:
    """The transport error under a Go client's failed dial (Go's ``net`` texts)."""
    base, addr = _split(kind, callee)
    if base == "dns_error":
        return T("as.go.no_such_host")(f"{callee}.{NAMESPACE}.svc.cluster.local")
    if base == "dns_servfail":
        return T("as.go.servfail")(f"{callee}.{NAMESPACE}.svc.cluster.local", KUBE_DNS)
    if base == "dns_random":
        return T("go.io_timeout")(addr)
    return T("go.refused")(addr)


@lru_cache(maxsize=4096)
def go_grpc_error(kind: str, callee: str) -> str:
    """``err.Error()`` of checkout's grpc-go client whose call to ``callee`` failed."""
    status = T("grpc.status")
    if kind.startswith("upstream"):
        code, desc = callee_status(*_root(kind, callee), callee)
        return status(code, desc)
    answered = flag_answer(kind, callee)
    if answered is not None:
        return status(*answered)
    base, addr = _split(kind, callee)
    if base == "canceled":
        return status("Canceled", T("go.canceled")())
    if base == "deadline":
        return status("DeadlineExceeded", T("go.deadline")())
    if base == "dns_error":
        return status("Unavailable", T("grpc.no_addresses")())
    if base == "dns_servfail":
        host = f"{callee}.{NAMESPACE}.svc.cluster.local"
        return status("Unavailable", T("as.grpc.dns_lookup")(host, KUBE_DNS))
    if base == "dns_random":
        return status("Unavailable", T("grpc.conn_error")(T("go.io_timeout")(addr)))
    return status("Unavailable", T("grpc.conn_error")(T("go.refused")(addr)))


@lru_cache(maxsize=4096)
def go_http_error(kind: str, callee: str) -> str:
    """What checkout's HTTP call to ``callee`` (email, shipping) wraps: Go's ``url.Error``,
    or its own ``expected 200, got 500`` when the callee answered with an error (its
    status check names the email service on every call, ``checkout/main.go`` L470, L590)."""
    if kind.startswith("upstream"):
        return T("as.co.e.status_email")(500)
    url = f"http://{callee}:{PORTS.get(callee, 0)}{HTTP_PATHS.get(callee, '/')}"
    if kind.partition("@")[0] in ("canceled", "deadline"):
        cause = T("go.canceled")() if kind.startswith("canceled") else T("go.deadline")()
        return T("as.go.url_error")("Post", url, cause)
    return T("as.go.url_error")("Post", url, go_dial_error(kind, callee))


def callee_status(kind: str, root: str, callee: str) -> tuple[str, str]:
    """(grpc-go code name, desc) a service answers with when its own call to ``root``
    failed with ``kind``."""
    if callee == "cart":
        return "FailedPrecondition", cart_storage_detail()
    if callee == "checkout":
        return "Internal", checkout_chain(kind, root)
    if callee == "product-catalog":
        return "NotFound", T("as.pc.e.not_found")("OLJCESPC7Z")
    if callee == "recommendation":
        return "Unknown", T("as.grpcio.exception")(python_inactive(kind, root))
    return "Unavailable", go_dial_error(kind, root)


def cart_storage_detail() -> str:
    """cart's RpcException detail when Valkey cannot be reached (``ValkeyCartStore.cs``
    L235: ``Can't access cart storage. {ex}``; the exception's first line)."""
    return T("as.ca.storage")(T("as.redis.not_connected")(T("as.redis.unable")()))


def checkout_chain(kind: str, root: str, product: str = "OLJCESPC7Z") -> str:
    """The message checkout's PlaceOrder fails with when its step calling ``root`` failed.

    ``checkout/main.go``: cart, catalog, currency and the shipping quote are wrapped by
    ``prepareOrderItemsAndShippingQuoteFromCart`` (L407-L422) and returned as Internal
    (L316); a failed catalog look-up or price conversion drops the inner error (L512,
    L516); the charge is wrapped twice (L331, L547); the quote's HTTP error once more
    (L465). A quote failure reaches checkout as shipping's 500 (L470)."""
    pid = f'"{product}"'
    if root in ("cart", "valkey-cart"):
        inner = go_grpc_error(
            f"upstream|{kind}|valkey-cart" if root == "valkey-cart" else kind, "cart"
        )
        return T("as.co.e.cart")(T("as.co.e.get_cart")(inner))
    if root in ("product-catalog", "postgresql"):
        return T("as.co.e.prepare")(T("as.co.e.product")(pid))
    if root == "currency":
        return T("as.co.e.prepare")(T("as.co.e.price")(pid, "USD"))
    if root in ("shipping", "quote"):
        http = go_http_error(f"upstream|{kind}|quote" if root == "quote" else kind, "shipping")
        return T("as.co.e.quote")(T("as.co.e.post_shipping")(http) if root == "shipping" else http)
    return T("as.co.e.charge")(T("as.co.e.card")(go_grpc_error(kind, "payment")))


@lru_cache(maxsize=4096)
def js_grpc_error(kind: str, callee: str) -> tuple[int, str, str]:
    """(code number, code name, details) of the frontend's grpc-js call to ``callee``."""
    answered = (
        callee_status(*_root(kind, callee), callee)
        if kind.startswith("upstream")
        else flag_answer(kind, callee)
    )
    if answered is not None:
        number, name = GRPC_CODES[answered[0]]
        return number, name, answered[1]
    base, addr = _split(kind, callee)
    if base == "canceled":
        return 1, "CANCELLED", T("as.grpcjs.cancelled")()
    if base == "deadline":
        return 4, "DEADLINE_EXCEEDED", T("as.grpcjs.deadline")("5.001")
    if base in ("dns_error", "dns_servfail"):
        return 14, "UNAVAILABLE", T("as.grpcjs.resolution")(f"{callee}:{PORTS.get(callee, 0)}")
    cause = T("as.node.timeout")(addr) if base == "dns_random" else T("as.node.refused")(addr)
    return 14, "UNAVAILABLE", T("as.grpcjs.no_connection")(cause)


def python_inactive(kind: str, callee: str) -> str:
    """grpcio's ``_InactiveRpcError`` of recommendation's failed catalog call (its channel
    dials the ClusterIP: ``ipv4:`` in the details); when the catalog answered with a
    flag's status, that status, received from the peer."""
    base, addr = _split(kind, callee)
    ipv4 = addr if addr[0].isdigit() else f"{cluster_ip(callee)}:{PORTS.get(callee, 0)}"
    flag = flag_of(kind)
    if flag is not None and flag.status is not None:
        return _python_peer_error(flag.status, ipv4)
    if base in ("dns_error", "dns_servfail"):
        details = T("as.grpcio.dns")(addr, addr.rsplit(":", 1)[0])
    elif base == "dns_random":
        details = T("as.grpcio.timeout")(ipv4)
    else:
        details = T("as.grpcio.refused")(ipv4)
    debug = "UNKNOWN:" + details + ' {grpc_status:14, grpc_message:"' + details + '"}'
    return T("as.grpcio.inactive")("UNAVAILABLE", details, debug)


def _python_peer_error(status: FlagStatus, ipv4: str) -> str:
    """grpcio's ``_InactiveRpcError`` for a status the peer answered with: its code and
    details, and the core's debug string naming the peer (an assumption in part: the core's
    ``created_time`` field is left out, as for the connection errors above)."""
    number, name = GRPC_CODES[status.code]
    peer = T("as.grpcio.peer")(ipv4)
    debug = f'UNKNOWN:{peer} {{grpc_message:"{status.message}", grpc_status:{number}}}'
    return T("as.grpcio.inactive")(name, status.message, debug)


def openai_status_error(status: FlagStatus) -> str:
    """``str()`` of the OpenAI client's ``APIStatusError`` for an HTTP error answer:
    ``Error code: <status> - <the JSON body, as a Python dict>`` (the mock's body,
    ``llm/app.py`` L122-L129)."""
    body = {
        "error": {
            "message": status.message,
            "type": T("as.llm.rate_limit_type")(),
            "param": "null",
            "code": "null",
        }
    }
    return T("as.openai.status_error")(status.code, repr(body))
