"""Each Online Boutique service's own log format, as precomputed line templates.

A paper-scale campaign writes millions of lines, so lines are never built with
``json.dumps``: every format is a ``%``-template whose constant parts (pod name, logger
name, escaped message) are filled in once per pod, leaving only the timestamp and a few
variable fields per line. Formats follow the services' logging set-ups in
``shared/reference/online-boutique/src-v0.10.6``: Go logrus JSONFormatter with keys renamed
(``frontend/main.go`` L95-103; keys sorted, RFC 3339 nano timestamps), Node pino with a
``severity`` level and ``message`` key (``currencyservice/server.js`` L17-26), Python
json logger with ``record.created`` as ``timestamp`` (``emailservice/logger.py``), log4j2
``JsonLayout compact eventEol`` whose ``${ctx:...}`` lookups stay unresolved (no context
injector in v0.10.6, ``adservice/src/main/resources/log4j2.xml``), cartservice plain
``Console.WriteLine`` text, redis and Locust plain text. The messages are in ``texts``.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from functools import lru_cache

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


V = "@@V@@"
"""Placeholder for a variable part inside a message; ``holes`` turns it into ``%s``."""


def holes(template: str) -> str:
    """A template built from a message containing ``V`` placeholders, with ``%s`` in their place."""
    return template.replace(V, "%s")


def q(text: str) -> str:
    """``text`` as a JSON string body (escaped, without the quotes); safe inside templates."""
    return json.dumps(text)[1:-1].replace("%", "%%")


def uuid_text(r: random.Random) -> str:
    """A version-4 UUID string drawn from ``r`` (cheaper than the uuid module)."""
    h = f"{r.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


_VARIANT = {c: "89ab"[int(c, 16) % 4] for c in "0123456789abcdef"}


def uuid1_text(r: random.Random, ts: float, node: str) -> str:
    """A version-1 (time-based) UUID as Go's ``uuid.NewUUID`` makes checkout's order ids."""
    ticks = int(ts * 1e7) + 0x01B21DD213814000
    low, mid, high = ticks & 0xFFFFFFFF, (ticks >> 32) & 0xFFFF, (ticks >> 48) & 0x0FFF
    seq = 0x8000 | r.getrandbits(14)
    return f"{low:08x}-{mid:04x}-1{high:03x}-{seq:04x}-{node}"


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


@lru_cache(maxsize=8192)
def _second(sec: int) -> str:
    return datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%dT%H:%M:%S")


_SECONDS: dict[int, str] = {}


def rfc3339nano(ts: float) -> str:
    """Go's time.RFC3339Nano (trailing zeros of the fraction trimmed); hot, so hand-cached."""
    sec = int(ts)
    prefix = _SECONDS.get(sec)
    if prefix is None:
        if len(_SECONDS) > 8192:
            _SECONDS.clear()
        prefix = _SECONDS[sec] = _second(sec)
    # '%d' truncates a float as int() does, minus the int object: same digits, faster (a
    # format spec would refuse the float)
    frac = ("%09d" % ((ts - sec) * 1e9)).rstrip("0")  # noqa: UP031
    return f"{prefix}.{frac}Z" if frac else f"{prefix}Z"


def iso_millis(ts: float) -> str:
    """ISO 8601 with milliseconds, as log4j and most loggers print it."""
    sec = int(ts)
    return f"{_second(sec)}.{int((ts - sec) * 1000):03d}Z"


@lru_cache(maxsize=8192)
def _redis_second(sec: int) -> str:
    return datetime.fromtimestamp(sec, UTC).strftime("%d %b %Y %H:%M:%S")


def redis_time(ts: float) -> str:
    """redis's '01 Jan 2026 00:00:00.123'."""
    sec = int(ts)
    return f"{_redis_second(sec)}.{int((ts - sec) * 1000):03d}"


@lru_cache(maxsize=8192)
def _locust_second(sec: int) -> str:
    return datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%d %H:%M:%S")


def locust_time(ts: float) -> str:
    """Python logging's '2026-01-01 00:00:00,123'."""
    sec = int(ts)
    return f"{_locust_second(sec)},{int((ts - sec) * 1000):03d}"


def go_line(
    severity: str, message: str, fields: dict[str, str] | None = None, time_slot: str = "%s"
) -> str:
    """A logrus JSON template with ``time_slot`` left for the timestamp (keys sorted as
    logrus sorts them)."""
    items = dict(fields or {})
    items["message"] = f'"{q(message)}"'
    items["severity"] = f'"{severity}"'
    items["timestamp"] = f'"{time_slot}"'
    return "{" + ",".join(f'"{k}":{items[k]}' for k in sorted(items)) + "}"


def pino_line(level: str, pod: str, logger: str, message: str) -> str:
    """A pino template with ``%d`` for the epoch-ms time.

    Online Boutique's pino setup maps the level to a ``severity`` label (no numeric
    ``level``) and uses ``message`` as the message key."""
    return (
        f'{{"severity":"{level}","time":%d,"pid":1,"hostname":"{pod}","name":"{logger}",'
        f'"message":"{q(message)}"}}'
    )


def python_line(severity: str, logger: str, message: str) -> str:
    """A python-json-logger template with ``%r`` for the epoch timestamp (``record.created``,
    a float that ``json.dumps`` prints in full)."""
    return (
        f'{{"timestamp": %r, "severity": "{severity}", "name": "{logger}", '
        f'"message": "{q(message)}"}}'
    )


def java_line(
    level: str, message: str, thread: str = "grpc-default-executor-0", thread_id: int = 21
) -> str:
    """A log4j2 JsonLayout (compact) template: ``%d``/``%d`` epoch second/nanos, ``%s`` time.

    The ``logging.googleapis.com/*`` pairs are ``$${ctx:...}`` lookups; v0.10.6 has no
    context injector, so they print unresolved."""
    return (
        '{"instant":{"epochSecond":%d,"nanoOfSecond":%d},'
        f'"thread":"{thread}","level":"{level}","loggerName":"hipstershop.AdService",'
        f'"message":"{q(message)}","endOfBatch":false,'
        f'"loggerFqcn":"org.apache.logging.log4j.spi.AbstractLogger","threadId":{thread_id},'
        '"threadPriority":5,"logging.googleapis.com/trace":"${ctx:traceId}",'
        '"logging.googleapis.com/spanId":"${ctx:spanId}",'
        '"logging.googleapis.com/traceSampled":"${ctx:traceSampled}","time":"%s"}'
    )
