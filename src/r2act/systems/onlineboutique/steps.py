"""Online Boutique's error steps: the wraps its handlers put around a failed call's error.

The frontend (``frontend/handlers.go``, ``rpc.go``: ``errors.Wrap``), checkout
(``checkoutservice/main.go``: ``fmt.Errorf``) and cart (``RedisCartStore.cs``: the
``RpcException`` it throws when Redis is unreachable) name the step that failed; each maps
to the service the step calls. The innermost step in a line is the one that failed.
"""

from __future__ import annotations

import re

from r2act.systems.steps import ErrorStep

ERROR_STEPS: tuple[ErrorStep, ...] = (
    ErrorStep(
        re.compile(
            r"could not retrieve currencies|failed to (?:do )?convert(?:ing)? (?:currency|price)"
            r"|could not convert currency|currency conversion"
        ),
        "currencyservice",
        "frontend/handlers.go L64, L86, L173, L292; rpc.go L96; checkoutservice/main.go L364",
    ),
    ErrorStep(
        re.compile(
            r"could not retrieve products?\b|failed to get product #|could not retrieve product #"
            r"|failed to get recommended product"
        ),
        "productcatalogservice",
        "frontend/handlers.go L69, L156, L287; rpc.go L109; checkoutservice/main.go L346",
    ),
    ErrorStep(
        re.compile(r"could not retrieve cart|failed to (?:add to|empty) cart|cart failure"),
        "cartservice",
        "frontend/handlers.go L74, L232, L244; checkoutservice/main.go L292",
    ),
    ErrorStep(
        re.compile(r"Can't access cart storage"),
        "redis-cart",
        "cartservice/src/cartstore/RedisCartStore.cs L64",
    ),
    ErrorStep(
        re.compile(r"shipping quote|shipment failed"),
        "shippingservice",
        "frontend/handlers.go L273; checkoutservice/main.go L300, L391",
    ),
    ErrorStep(
        re.compile(r"could not charge the card"),
        "paymentservice",
        "checkoutservice/main.go L374",
    ),
    ErrorStep(re.compile(r"failed to get ads"), "adservice", "frontend/rpc.go L126"),
    ErrorStep(
        re.compile(r"failed to send order confirmation"),
        "emailservice",
        "checkoutservice/main.go L274",
    ),
    ErrorStep(
        re.compile(r"failed to get product recommendations"),
        "recommendationservice",
        "frontend/handlers.go L180, L268",
    ),
)
"""Online Boutique's handler steps and the service each calls, in the order the rule-based
baseline has always tried them (a tie between two steps at one place goes to the first)."""
