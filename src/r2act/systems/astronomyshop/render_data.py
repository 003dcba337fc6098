"""The values the Astronomy Shop's simulated lines carry: its catalogue, its people, its ads.

They are the pinned sources' own data (``opentelemetry-demo-2.2.0/src/``): the products of
``postgresql/init.sql``, the checkout people of ``load-generator/people.json``, the ad
context keys of ``locustfile.py``. (``systems/astronomyshop/shop.py``, on its way in from
the traffic model's branch, holds the product ids too; one list should remain.)
"""

from __future__ import annotations

PRODUCTS = (
    ("OLJCESPC7Z", "National Park Foundation Explorascope"),
    ("66VCHSJNUP", "Starsense Explorer Refractor Telescope"),
    ("1YMWWN1N4O", "Eclipsmart Travel Refractor Telescope"),
    ("L9ECAV7KIM", "Lens Cleaning Kit"),
    ("2ZYFJ3GM2N", "Roof Binoculars"),
    ("0PUK6V6EV0", "Solar System Color Imager"),
    ("LS4PSXUNUM", "Red Flashlight"),
    ("9SIQT8TOJO", "Optical Tube Assembly"),
    ("6E92ZMYYFZ", "Solar Filter"),
    ("HQTGWGPNH4", "The Comet Book"),
)
"""(id, name) of the catalogue's rows (``postgresql/init.sql`` L147-L156)."""
PEOPLE = (
    (
        "larry_sergei@example.com",
        "USD",
        "0454",
        "1600 Amphitheatre Parkway",
        "Mountain View",
        "CA",
        "United States",
        "94043",
    ),
    (
        "bill@example.com",
        "USD",
        "1278",
        "One Microsoft Way",
        "Redmond",
        "WA",
        "United States",
        "98052",
    ),
    (
        "steve@example.com",
        "USD",
        "1951",
        "One Apple Park Way",
        "Cupertino",
        "CA",
        "United States",
        "95014",
    ),
    (
        "mark@example.com",
        "USD",
        "7083",
        "1 Hacker Way",
        "Menlo Park",
        "CA",
        "United States",
        "94025",
    ),
    (
        "jeff@example.com",
        "USD",
        "7968",
        "410 Terry Ave N",
        "Seattle",
        "WA",
        "United States",
        "98109",
    ),
    (
        "reed@example.com",
        "USD",
        "5647",
        "100 Winchester Circle",
        "Los Gatos",
        "CA",
        "United States",
        "95032",
    ),
    ("tobias@example.com", "CAD", "8031", "150 Elgin St", "Ottawa", "ON", "Canada", "K2P1L4"),
    (
        "jack@example.com",
        "USD",
        "3657",
        "1355 Market St",
        "San Francisco",
        "CA",
        "United States",
        "94103",
    ),
    (
        "moore@example.com",
        "USD",
        "3547",
        "2200 Mission College Blvd",
        "Santa Clara",
        "CA",
        "United States",
        "95054",
    ),
)
"""(e-mail, currency, card's last four digits, street, city, state, country, zip) of the
nine people the load generator's checkouts pick from (``load-generator/people.json``;
``locustfile.py`` L200, L213)."""
LOCUST_NODE = "0a58a9f40001"
"""The node part of the user ids the load generator makes for a checkout
(``str(uuid.uuid1())``, ``locustfile.py`` L197, L207): its pod's 'MAC address', a
parameter."""
CHECKOUT_NODE = "0a58a9f40002"
"""The node part of checkout's order ids (``uuid.NewUUID()``, ``checkout/main.go`` L309)."""
AD_KEYS = ("binoculars", "telescopes", "accessories", "assembly", "travel", "books")
"""The ad context keys the load generator sends (``locustfile.py`` L87-L95; its ``None``
sends no key: the non-targeted request)."""
