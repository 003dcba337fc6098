"""Kubernetes resource quantities, parsed by the Kubernetes client library itself.

Plans carry limits as strings (``"256Mi"``, ``"0.5Gi"``) because that is what a user writes
and what the API accepts; comparisons against bounds need bytes. The grammar is the API
server's (decimal fractions, binary and decimal suffixes, exponents), so the parsing is
delegated to ``kubernetes.utils.parse_quantity`` rather than re-implemented: a plan the API
server would accept is never rejected here. That module is the one import of ``kubernetes``
outside ``cluster/`` (an exception in the import contracts): it is pure parsing and talks to
no cluster. It is imported on first use because the client package takes about a second to
import and most commands never parse a quantity; the forms the manifests use (whole numbers
with a binary suffix, whole thousandths such as ``"300m"``) are read without it, to the same
``Decimal``, so a simulated campaign never pays for that import.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Final, Protocol

_GRAMMAR: Final = (
    r"[+]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?"
)
_ZERO: Final = r"[+]?0*\.?0*([KMGTPE]i|[numkMGTPE]|[eE].*)?"
_QUANTITY: Final = re.compile(_GRAMMAR)
"""The Kubernetes quantity grammar (non-negative: a limit is never negative)."""
QUANTITY_PATTERN: Final = rf"^(?!{_ZERO}$){_GRAMMAR}$"
"""Positive quantities only (a zero limit is never a plan), for JSON Schemas; the value
itself always comes from the client library's parser."""
_HINT: Final = (
    "write a Kubernetes quantity: a number with an optional suffix Ki, Mi, Gi, Ti, Pi, Ei, "
    "k, M, G, T, P, E or an exponent (e.g. '256Mi', '0.5Gi', '1e9')"
)


_WHOLE_BINARY: Final = re.compile(r"([0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei)?")
"""A whole number with an optional binary suffix: the value is ``n x 1024^k``."""
_BINARY_POWER: Final = {None: 0, "Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_WHOLE_MILLI: Final = re.compile(r"([0-9]+)m")
"""A whole number of thousandths (``"300m"``), the usual form of a CPU request or limit."""
_MILLI: Final = 1000 ** Decimal(-1)
"""The factor the client library's parser multiplies an ``m`` quantity by (the same
``Decimal`` power, so the fast path gives the very same ``Decimal``, exponent included)."""


class _Parser(Protocol):
    def __call__(self, quantity: str) -> Decimal: ...


@cache
def _parser() -> _Parser:
    from kubernetes.utils import parse_quantity

    parser: _Parser = parse_quantity
    return parser


@cache
def quantity(text: str) -> Decimal:
    """The value of a quantity as the API server reads it; ValueError on anything else.

    Cached: the simulator and the planners ask for the same few limits over and over."""
    if not isinstance(text, str) or not _QUANTITY.fullmatch(text.strip()):
        raise ValueError(f"{text!r} is not a quantity; {_HINT}")
    if whole := _WHOLE_BINARY.fullmatch(text.strip()):
        return Decimal(int(whole.group(1)) * 1024 ** _BINARY_POWER[whole.group(2)])
    if milli := _WHOLE_MILLI.fullmatch(text.strip()):
        return Decimal(milli.group(1)) * _MILLI
    try:
        return Decimal(_parser()(text.strip()))
    except (ValueError, InvalidOperation) as exc:
        raise ValueError(f"{text!r} is not a quantity; {_HINT}") from exc


def memory_bytes(text: str) -> int:
    """Bytes in a memory quantity such as ``"256Mi"`` or ``"1.5Gi"`` (a fraction rounds up,
    as the API server rounds memory to whole bytes); raises ValueError on anything else."""
    return math.ceil(quantity(text))


def format_mebibytes(n_bytes: int) -> str:
    """The smallest whole ``Mi`` quantity that holds ``n_bytes``."""
    return f"{-(-n_bytes // 2**20)}Mi"


def cpu_millicores(text: str) -> int:
    """Millicores in a CPU quantity such as ``"200m"`` or ``"1"``."""
    return math.ceil(quantity(text) * 1000)
