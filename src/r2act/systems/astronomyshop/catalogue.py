"""The Astronomy Shop 2.2.0's catalogue: the (service, fault type) cells its chart 0.40.10
deployment can realise (Chaos Mesh, ConfigFault and its own flagd flags as FlagFaults),
each pointing at its evidence row.

The rule is Online Boutique's: a cell is here only if its injector works on the deployment
and users' requests meet the fault (``docs/faults.md``, "Astronomy Shop 2.2.0"). What it
changes here:

- HTTPChaos meets only connections opened after the injection, so an HTTP/1 server is a
  cell only if its client opens a connection per request: shipping's quote client is made
  per call (quote); the entry proxy needs a load generator that closes its connections, as
  r2act's Online Boutique load generator does. Envoy's pool to the frontend and checkout's
  pooled Go client to shipping and email reuse theirs, and image-provider serves only the
  browser user, so none of those is a cell.
- DNS faults are r2act ConfigFaults (``schema.CHAOS_KIND``): a wrong address in a holder's
  environment, which needs no shell in any image (the distroless holders, frontend and
  checkout, could not take a DNSChaos; ``NO_SHELL``). Only ``host:port`` addresses are
  cells: shipping's, email's and quote's are URLs (``http://...``), and the planner's
  wrong value keeps no scheme.
- Memory pressure is a lowered limit where the runtime does not size its heap from that
  limit: the Go services run with a fixed ``GOMEMLIMIT`` of 16MiB under a 20Mi limit, and
  recommendation is CPython; ad (JVM), cart (.NET) and the Node services would shrink their
  heaps instead of being killed.
- CPU: the chart sets no CPU limit, so a stressor competes for the node, not for a quota;
  the stressed container's own CPU series (cAdvisor) still singles it out.

Services tolerated by their callers (email: checkout logs a warning, ``checkout/main.go``
L379-380; accounting and fraud-detection: Kafka consumers off every user path) have no cell.
"""

from __future__ import annotations

from collections.abc import Mapping

from r2act.schema import FaultType
from r2act.systems.astronomyshop.flags import FLAGS_2_2_0
from r2act.systems.astronomyshop.runtime import DISTROLESS
from r2act.systems.base import FaultCell
from r2act.systems.flags import Source

_EVIDENCE = "docs/faults.md#astronomy-shop-220-per-cell-table"

_GRPC_ON_USER_PATHS = (
    "product-catalog",
    "cart",
    "recommendation",
    "ad",
    "checkout",
    "payment",
)
"""gRPC servers a load-generator task reaches and whose failure the frontend's API
handlers (or checkout) pass on to the user as a 500."""

_CELLS: tuple[tuple[FaultType, tuple[str, ...]], ...] = (
    (
        FaultType.POD_FAILURE,
        (
            "frontend-proxy",
            "frontend",
            *_GRPC_ON_USER_PATHS,
            "currency",
            "product-reviews",
            "shipping",
            "quote",
        ),
    ),
    (FaultType.CPU_SATURATION, ("frontend-proxy", "frontend", *_GRPC_ON_USER_PATHS)),
    (FaultType.MEMORY_PRESSURE, ("checkout", "product-catalog", "recommendation")),
    (
        FaultType.NETWORK_DELAY,
        (
            "frontend-proxy",
            "frontend",
            *_GRPC_ON_USER_PATHS,
            "currency",
            "product-reviews",
            "shipping",
            "quote",
        ),
    ),
    (FaultType.HTTP_ERROR, ("frontend-proxy", "quote")),
    (FaultType.HTTP_ABORT, ("frontend-proxy", "quote")),
    (
        FaultType.DNS_FAULT,
        (*_GRPC_ON_USER_PATHS, "currency", "product-reviews"),
    ),
    (
        FaultType.DNS_RANDOM,
        (*_GRPC_ON_USER_PATHS, "currency", "product-reviews"),
    ),
)

_FLAG_EVIDENCE = "docs/faults.md#astronomy-shop-220-per-flag-realizability"

FLAG_SERVICES: tuple[str, ...] = tuple(
    dict.fromkeys(f.service for f in FLAGS_2_2_0.values() if f.realizable)
)
"""Services that a realizable 2.2.0 flag is a fault of (its reader whose code path
misbehaves), in flag-file order; each is one ``feature_flag`` cell, the flag a parameter
the planner draws among that service's realizable flags."""

CELLS: tuple[FaultCell, ...] = (
    *(FaultCell(service, fault, _EVIDENCE) for fault, services in _CELLS for service in services),
    *(FaultCell(service, FaultType.FEATURE_FLAG, _FLAG_EVIDENCE) for service in FLAG_SERVICES),
)
"""Every realizable cell, by fault type in the schema's order (the flag cells last)."""

_SRC = "opentelemetry-demo-2.2.0/src/"

NO_SHELL: Mapping[str, tuple[str, int, str]] = {
    service: (f"{_SRC}{service}/Dockerfile", line, base)
    for service, (base, line) in DISTROLESS.items()
}
"""Deployments whose image has no shell: (Dockerfile, line of its final ``FROM``, the
distroless base it names). Chaos Mesh's DNSChaos runs ``sh -c`` in the target and fails
there. flagd is absent on purpose: its image (``ghcr.io/open-feature/flagd``) is not built
from the pinned sources, so its base cannot be read here. The list is the runtime
facts' ``DISTROLESS``, so the catalogue and ``System.no_shell`` cannot disagree."""


def no_shell_reasons() -> dict[str, str]:
    """``System.no_shell`` in its own form: per deployment, why DNSChaos cannot apply."""
    return {
        service: f"final FROM {base} has no shell ({path} L{line})"
        for service, (path, line, base) in NO_SHELL.items()
    }


_RENDERED = "opentelemetry-demo-chart-0.40.10/examples/bring-your-own-observability/rendered/"

SOURCES: tuple[Source, ...] = (
    Source(_SRC + "frontend/utils/telemetry/InstrumentationMiddleware.ts", 26, "httpStatus = 500"),
    Source(_SRC + "frontend/utils/telemetry/InstrumentationMiddleware.ts", 27, "throw error"),
    Source(_SRC + "frontend/gateways/rpc/Ad.gateway.ts", 7, "process.env"),
    Source(_SRC + "frontend/gateways/rpc/Ad.gateway.ts", 9, "new AdServiceClient(AD_ADDR"),
    Source(_SRC + "frontend/gateways/rpc/Cart.gateway.ts", 7, "CART_ADDR = '' } = process.env"),
    Source(_SRC + "frontend/gateways/rpc/ProductCatalog.gateway.ts", 9, "PRODUCT_CATALOG_ADDR"),
    Source(_SRC + "checkout/main.go", 201, 'mustMapEnv(&svc.shippingSvcAddr, "SHIPPING_ADDR")'),
    Source(_SRC + "checkout/main.go", 226, 'mustMapEnv(&svc.paymentSvcAddr, "PAYMENT_ADDR")'),
    Source(_SRC + "checkout/main.go", 316, "codes.Internal"),
    Source(_SRC + "checkout/main.go", 331, "failed to charge card"),
    Source(_SRC + "checkout/main.go", 344, "shipping error"),
    Source(_SRC + "checkout/main.go", 379, "cs.sendOrderConfirmation"),
    Source(_SRC + "checkout/main.go", 380, "logger.Warn"),
    Source(_SRC + "checkout/main.go", 463, "otelhttp.Post"),
    Source(_SRC + "checkout/main.go", 465, "failed POST to shipping service"),
    Source(_SRC + "checkout/main.go", 470, "failed POST to email service: expected 200"),
    Source(_SRC + "checkout/main.go", 530, "failed to convert currency"),
    Source(_SRC + "checkout/main.go", 561, "otelhttp.Post"),
    Source(_SRC + "checkout/main.go", 583, "otelhttp.Post"),
    Source(_SRC + "shipping/src/shipping_service/quote.rs", 40, "awc::Client::new()"),
    Source(_SRC + "shipping/src/shipping_service/quote.rs", 43, 'env::var("QUOTE_ADDR")'),
    Source(_SRC + "shipping/src/shipping_service.rs", 25, "Failed to get quote"),
    Source(_SRC + "quote/composer.json", 20, '"react/http"'),
    Source(_SRC + "quote/app/routes.php", 52, "$app->post('/getquote'"),
    Source(_SRC + "load-generator/locustfile.py", 78, "FLAGD_OFREP_PORT"),
    Source(_SRC + "load-generator/locustfile.py", 113, "class WebsiteUser(HttpUser)"),
    Source(_SRC + "load-generator/locustfile.py", 114, "wait_time = between(1, 10)"),
    Source("opentelemetry-demo-chart-0.40.10/values.yaml", 510, "name: LOCUST_USERS"),
    Source("opentelemetry-demo-chart-0.40.10/values.yaml", 511, '"10"'),
    Source(_SRC + "frontend-proxy/envoy.tmpl.yaml", 54, 'prefix: "/images/"'),
    Source(_SRC + "frontend-proxy/envoy.tmpl.yaml", 161, "- name: frontend"),
    Source(_RENDERED + "component.yaml", 829, "name: CART_ADDR"),
    Source(_RENDERED + "component.yaml", 833, "name: EMAIL_ADDR"),
    Source(_RENDERED + "component.yaml", 837, "name: PRODUCT_CATALOG_ADDR"),
    Source(_RENDERED + "component.yaml", 839, "name: SHIPPING_ADDR"),
    Source(_RENDERED + "component.yaml", 849, "name: GOMEMLIMIT"),
    Source(_RENDERED + "component.yaml", 1046, "--uri"),
    Source(_RENDERED + "component.yaml", 1047, "file:./etc/flagd/demo.flagd.json"),
    Source(_RENDERED + "component.yaml", 1113, "cp /config-ro/demo.flagd.json"),
    Source(_RENDERED + "component.yaml", 1123, "emptyDir: {}"),
    Source(_RENDERED + "component.yaml", 1125, "name: flagd-config"),
    Source(_RENDERED + "component.yaml", 1261, "name: AD_ADDR"),
    Source(_RENDERED + "component.yaml", 1273, "name: RECOMMENDATION_ADDR"),
    Source(_RENDERED + "component.yaml", 1275, "name: SHIPPING_ADDR"),
    Source(_RENDERED + "component.yaml", 1680, "name: LOCUST_HOST"),
    Source(_RENDERED + "component.yaml", 1921, "name: GOMEMLIMIT"),
    Source(_RENDERED + "component.yaml", 2008, "name: PRODUCT_CATALOG_ADDR"),
    Source(_RENDERED + "component.yaml", 2158, "name: PRODUCT_CATALOG_ADDR"),
    Source(_RENDERED + "component.yaml", 2231, "name: QUOTE_ADDR"),
)
"""The upstream lines the per-cell table of ``docs/faults.md`` cites, each with the code it
must hold (a test reads them), so a cited line cannot drift from the pinned files."""
