"""The Astronomy Shop's error steps: the wraps its handlers put around a failed call's error.

checkout (``checkout/main.go``: ``fmt.Errorf`` and ``status.Errorf`` with ``%+v``) names
the step that failed, and cart (``ValkeyCartStore.cs``: the ``RpcException`` it throws
when Valkey is unreachable) names its storage; the frontend wraps nothing (its gateways
reject with grpc-js' error as it is). Each step maps to the service it calls; the
innermost step in a line is the one that failed.

One phrase is left out on purpose: ``failed POST to email service: expected 200, got
<status>`` is checkout's status check after its calls to shipping as well as to email
(L470, L590, L568: the message names email on every one), so it does not say which
service answered the error. Only the dial-level form (``failed POST to email service:
Post "http://email...``) names email.
"""

from __future__ import annotations

import re

from r2act.systems.steps import ErrorStep

ERROR_STEPS: tuple[ErrorStep, ...] = (
    ErrorStep(
        re.compile(r"failed to convert price of|failed to convert shipping cost to currency"),
        "currency",
        "checkout/main.go L421, L516",
    ),
    ErrorStep(
        re.compile(r"failed to get product #|Product Not Found|failed to load products"),
        "product-catalog",
        "checkout/main.go L512; product-catalog/main.go L423, L448",
    ),
    ErrorStep(
        re.compile(
            r"cart failure|failed to get user cart during checkout|failed to empty user cart"
        ),
        "cart",
        "checkout/main.go L409, L494, L501",
    ),
    ErrorStep(
        re.compile(r"Can't access cart storage"),
        "valkey-cart",
        "cart/src/cartstore/ValkeyCartStore.cs L178, L203, L235",
    ),
    ErrorStep(
        re.compile(r"shipping quote failure|failed POST to shipping service|shipping error"),
        "shipping",
        "checkout/main.go L344, L417, L465, L585",
    ),
    ErrorStep(
        re.compile(r"could not charge the card|failed to charge card"),
        "payment",
        "checkout/main.go L331, L547",
    ),
    ErrorStep(
        re.compile(r'failed to send order confirmation|failed POST to email service: Post "'),
        "email",
        "checkout/main.go L380, L563",
    ),
)
"""The Astronomy Shop's handler steps and the service each calls (paths under
``opentelemetry-demo-2.2.0/src/``)."""
