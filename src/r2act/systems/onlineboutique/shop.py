"""The shop's data: its catalogue and what its users and the health prober send.

The product ids are the catalogue's (``productcatalogservice/products.json``, the load
generator's ``products`` list); the currencies are those the load generator sets
(``loadgenerator/locustfile.py`` L38); the e-mail addresses and Visa numbers are shaped as
its Faker draws; the probe forms are what the frontend's POST handlers validate.
"""

from __future__ import annotations

import random

PRODUCTS = (
    "OLJCESPC7Z",
    "66VCHSJNUP",
    "1YMWWN1N4O",
    "L9ECAV7KIM",
    "2ZYFJ3GM2N",
    "0PUK6V6EV0",
    "LS4PSXUNUM",
    "9SIQT8TOJO",
    "6E92ZMYYFZ",
)
"""Product ids of Online Boutique's catalog."""
CURRENCIES = ("USD", "EUR", "JPY", "GBP", "TRY", "CAD")
"""Currencies users pick (and services print)."""
CATEGORIES = (
    "[accessories]",
    "[clothing, tops]",
    "[accessories]",
    "[footwear]",
    "[hair, beauty]",
    "[decor, home]",
    "[kitchen]",
    "[kitchen]",
    "[kitchen]",
)
"""Each product's categories as Java prints the list adservice receives (same order as
``PRODUCTS``; the product page asks for ads by its product's categories)."""


_FIRST = (
    "james", "mary", "john", "patricia", "robert", "jennifer", "michael", "linda",
    "william", "elizabeth", "david", "susan", "richard", "jessica", "joseph", "sarah",
)  # fmt: skip
_LAST = (
    "smith", "johnson", "williams", "brown", "jones", "garcia", "miller", "davis",
    "rodriguez", "martinez", "wilson", "anderson", "taylor", "thomas", "moore", "lee",
)  # fmt: skip
_DOMAINS = ("example.com", "example.org", "example.net")


def fake_email(r: random.Random) -> str:
    """An address like Faker's ``email()`` (safe example.* domains), drawn from ``r``.

    The load generator fills the checkout form with ``fake.email()`` and
    ``fake.credit_card_number(card_type="visa")`` (``loadgenerator/locustfile.py``
    L65-73), so addresses and cards vary per order; Faker itself is not a dependency,
    the shapes are reproduced."""
    first = _FIRST[int(r.random() * len(_FIRST))]
    last = _LAST[int(r.random() * len(_LAST))]
    domain = _DOMAINS[int(r.random() * len(_DOMAINS))]
    shape = int(r.random() * 3)
    if shape == 0:
        return f"{first}{last}@{domain}"
    if shape == 1:
        return f"{first[0]}{last}@{domain}"
    return f"{last}{int(r.random() * 100)}@{domain}"


def fake_visa(r: random.Random) -> str:
    """A 16-digit Visa number with a valid Luhn check digit, as Faker's ``visa`` draws."""
    digits = [4] + [int(r.random() * 10) for _ in range(14)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return "".join(map(str, digits)) + str((10 - total % 10) % 10)


PROBE_FORMS: dict[str, tuple[tuple[str, str], ...]] = {
    "POST /setCurrency": (("currency_code", "EUR"),),
    "POST /cart": (("product_id", PRODUCTS[0]), ("quantity", "1")),
    "POST /cart/checkout": (
        ("email", "probe@example.com"),
        ("street_address", "1600 Amphitheatre Parkway"),
        ("zip_code", "94043"),
        ("city", "Mountain View"),
        ("state", "CA"),
        ("country", "United States"),
        ("credit_card_number", "4432801561520454"),
        ("credit_card_expiration_month", "1"),
        ("credit_card_expiration_year", "2039"),
        ("credit_card_cvv", "672"),
    ),
}
"""Form fields each POST handler validates (``frontend/handlers.go``, ``validator.go``), as
the health oracle sends them."""
