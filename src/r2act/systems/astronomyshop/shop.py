"""The Astronomy Shop's data: its catalogue and what its users and the health prober send.

Paths are under ``shared/reference/opentelemetry-demo-2.2.0/src/``. The product ids are the
catalogue's rows (``postgresql/init.sql`` L147-L156; 2.2.0 keeps the products in
PostgreSQL, ``product-catalog/main.go`` L268-L291, not in a ``products.json``), in the
order of the load generator's ``products`` list (``load-generator/locustfile.py``
L97-L108), which holds the same ten.
"""

from __future__ import annotations

import json

PRODUCTS = (
    "0PUK6V6EV0",
    "1YMWWN1N4O",
    "2ZYFJ3GM2N",
    "66VCHSJNUP",
    "6E92ZMYYFZ",
    "9SIQT8TOJO",
    "L9ECAV7KIM",
    "LS4PSXUNUM",
    "OLJCESPC7Z",
    "HQTGWGPNH4",
)
"""Product ids the users browse (``locustfile.py`` L97-L108; rows of ``init.sql``
L147-L156)."""

CATEGORIES = ("binoculars", "telescopes", "accessories", "assembly", "travel", "books", None)
"""Ad context keys ``get_ads`` draws (``locustfile.py`` L87-L95; ``None`` is sent too)."""

CURRENCIES = ("USD", "CAD")
"""The currencies orders are placed in: the ``userCurrency`` of the load generator's
people (``load-generator/people.json``, e.g. L11 and L113); browsing sends none, so every
product price is shown in USD (``frontend/services/ProductCatalog.service.ts`` L11-L14)."""

_PERSON = {  # load-generator/people.json L2-L18, the first person
    "email": "larry_sergei@example.com",
    "address": {
        "streetAddress": "1600 Amphitheatre Parkway",
        "zipCode": "94043",
        "city": "Mountain View",
        "state": "CA",
        "country": "United States",
    },
    "userCurrency": "USD",
    "creditCard": {
        "creditCardNumber": "4432-8015-6152-0454",
        "creditCardExpirationMonth": 1,
        "creditCardExpirationYear": 2039,
        "creditCardCvv": 672,
    },
}

PROBE_USER = "r2act-health-probe"
"""The ``userId`` the health oracle's cart and order requests name (its own cart)."""


def _fields(body: dict[str, object]) -> tuple[tuple[str, str], ...]:
    """A JSON body's top-level fields, nested objects as JSON text."""
    return tuple(
        (key, value if isinstance(value, str) else json.dumps(value, separators=(",", ":")))
        for key, value in body.items()
    )


PROBE_FORMS: dict[str, tuple[tuple[str, str], ...]] = {
    # pages/api/cart.ts L35-L37 reads { userId, item }; the locustfile's body, L186-L193.
    "POST /api/cart": _fields(
        {"userId": PROBE_USER, "item": {"productId": PRODUCTS[0], "quantity": 1}}
    ),
    # pages/api/product-ask-ai-assistant/[productId]/index.ts L16 reads { question };
    # the locustfile's question, L153.
    "POST /api/product-ask-ai-assistant/*": (
        ("question", "Can you summarize the product reviews?"),
    ),
    # pages/api/checkout.ts L17 passes the body on as a PlaceOrderRequest: a person of
    # people.json with the userId set (locustfile.py L200-L202).
    "POST /api/checkout": _fields({**_PERSON, "userId": PROBE_USER}),
}
"""Per POST route, the body fields its handler reads, as the health oracle sends them. The
handlers read JSON bodies (the load generator posts ``json=``); the pairs are the body's
top-level fields, nested objects as their JSON text."""
