"""The log formats of the runtimes services are built on, as precomputed line templates.

A paper-scale campaign writes millions of lines, so lines are never built with
``json.dumps``: every format is a ``%``-template whose constant parts (pod name, logger
name, escaped message) are filled in once per pod, leaving only the timestamp and a few
variable fields per line. The formats are the libraries' own, as a service configures
them: Go logrus ``JSONFormatter`` with the keys renamed to ``timestamp``/``severity``/
``message`` (keys sorted, RFC 3339 nano timestamps), Node pino with a ``severity`` label
and a ``message`` key, python-json-logger with ``record.created`` as ``timestamp``, log4j2
``JsonLayout compact eventEol`` whose ``${ctx:...}`` lookups stay unresolved when no
context injector is installed, Redis' and Python logging's plain text. Which service uses
which, with which logger names, is its system's (``systems/<name>/``); the messages are
texts with upstream citations.

The hot renderers truncate floats with ``math.trunc``: the same integer as ``int()``,
without calling the ``int`` type's constructor (about half the cost per call, a few per
line).
"""

from __future__ import annotations

import json
import random
import re
from datetime import UTC, datetime
from functools import lru_cache
from math import trunc


def q(text: str) -> str:
    """``text`` as a JSON string body (escaped, without the quotes); safe inside templates."""
    return json.dumps(text)[1:-1].replace("%", "%%")


_SPEC = re.compile(r"%(.)", re.DOTALL)
"""A ``%`` conversion of a template: its character after the ``%``."""


def split_slots(template: str) -> list[str]:
    """The constant texts between a positional template's slots, ``%%`` unescaped.

    ``template % values`` scans the whole template, one character at a time, on every
    line; joining the constant texts and the values (an f-string) copies them whole, about
    four times cheaper for a line of a few hundred characters. Only plain ``%s``, ``%d``
    and ``%r`` slots are accepted (a caller fills them as ``{x}``, ``{int}``, ``{x!r}``)."""
    parts: list[str] = []
    current: list[str] = []
    pos = 0
    for match in _SPEC.finditer(template):
        current.append(template[pos : match.start()])
        spec = match.group(1)
        if spec == "%":
            current.append("%")
        elif spec in "sdr":
            parts.append("".join(current))
            current = []
        else:
            raise ValueError(f"unsupported slot %{spec} in {template!r}")
        pos = match.end()
    if "%" in template[pos:]:  # a lone ``%`` at the very end: ``%`` itself would refuse it
        raise ValueError(f"dangling % in {template!r}")
    current.append(template[pos:])
    parts.append("".join(current))
    return parts


def uuid_text(r: random.Random) -> str:
    """A version-4 UUID string drawn from ``r`` (cheaper than the uuid module).

    The version and variant are set on the drawn integer (``_UUID_KEEP``, ``_UUID_SET``),
    so the text needs no per-digit lookup. Its big-endian bytes are cut where the groups
    are and hexed (the middle three groups by one ``hex`` with a ``-`` every two bytes):
    cheaper than five slices of its 32-digit hex text."""
    b = (r.getrandbits(128) & _UUID_KEEP | _UUID_SET).to_bytes(16, "big")
    return f"{b[:4].hex()}-{b[4:10].hex('-', 2)}-{b[10:].hex()}"


_UUID_KEEP = ~((0xF << 76) | (0xC << 60))
"""The drawn bits a version-4 UUID keeps: all but its version digit (the 13th hex digit,
bits 76-79) and the two top bits of its variant digit (the 17th, bits 62-63)."""
_UUID_SET = (0x4 << 76) | (0x8 << 60)
"""Version 4, and the RFC 4122 variant ``10`` in the 17th digit's top bits (8, 9, a or b)."""


def uuid1_text(r: random.Random, ts: float, node: str) -> str:
    """A version-1 (time-based) UUID as Go's ``uuid.NewUUID`` makes it on host ``node``."""
    ticks = trunc(ts * 1e7) + 0x01B21DD213814000
    low, mid, high = ticks & 0xFFFFFFFF, (ticks >> 32) & 0xFFFF, (ticks >> 48) & 0x0FFF
    seq = 0x8000 | r.getrandbits(14)
    return f"{low:08x}-{mid:04x}-1{high:03x}-{seq:04x}-{node}"


@lru_cache(maxsize=8192)
def _second(sec: int) -> str:
    return datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%dT%H:%M:%S")


_SECONDS: dict[int, str] = {}


def rfc3339nano(ts: float) -> str:
    """Go's time.RFC3339Nano (trailing zeros of the fraction trimmed); hot, so hand-cached."""
    sec = trunc(ts)
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
    sec = trunc(ts)
    return f"{_second(sec)}.{trunc((ts - sec) * 1000):03d}Z"


@lru_cache(maxsize=8192)
def _redis_second(sec: int) -> str:
    return datetime.fromtimestamp(sec, UTC).strftime("%d %b %Y %H:%M:%S")


def redis_time(ts: float) -> str:
    """redis's '01 Jan 2026 00:00:00.123'."""
    sec = trunc(ts)
    return f"{_redis_second(sec)}.{trunc((ts - sec) * 1000):03d}"


@lru_cache(maxsize=8192)
def _locust_second(sec: int) -> str:
    return datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%d %H:%M:%S")


def locust_time(ts: float) -> str:
    """Python logging's '2026-01-01 00:00:00,123'."""
    sec = trunc(ts)
    return f"{_locust_second(sec)},{trunc((ts - sec) * 1000):03d}"


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
    """A pino template with ``%d`` for the epoch-ms time, for a pino set up to map the level
    to a ``severity`` label (no numeric ``level``) with ``message`` as the message key."""
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
    level: str,
    message: str,
    logger: str,
    thread: str = "grpc-default-executor-0",
    thread_id: int = 21,
) -> str:
    """A log4j2 JsonLayout (compact) template: ``%d``/``%d`` epoch second/nanos, ``%s`` time.

    The ``logging.googleapis.com/*`` pairs are ``$${ctx:...}`` lookups; without a context
    injector they print unresolved."""
    return (
        '{"instant":{"epochSecond":%d,"nanoOfSecond":%d},'
        f'"thread":"{thread}","level":"{level}","loggerName":"{logger}",'
        f'"message":"{q(message)}","endOfBatch":false,'
        f'"loggerFqcn":"org.apache.logging.log4j.spi.AbstractLogger","threadId":{thread_id},'
        '"threadPriority":5,"logging.googleapis.com/trace":"${ctx:traceId}",'
        '"logging.googleapis.com/spanId":"${ctx:spanId}",'
        '"logging.googleapis.com/traceSampled":"${ctx:traceSampled}","time":"%s"}'
    )
