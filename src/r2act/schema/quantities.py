"""Kubernetes memory quantities, parsed the way the API server reads them.

Plans carry limits as strings (``"256Mi"``) because that is what a user writes and what the
API accepts; comparisons against bounds need bytes.
"""

from __future__ import annotations

import re

_SUFFIX = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}
_QUANTITY = re.compile(r"^([0-9]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$")


def memory_bytes(quantity: str) -> int:
    """Bytes in a memory quantity such as ``"256Mi"``; raises ValueError on anything else."""
    match = _QUANTITY.fullmatch(quantity.strip()) if isinstance(quantity, str) else None
    if match is None:
        raise ValueError(
            f"{quantity!r} is not a memory quantity; write an integer with an optional "
            "suffix Ki, Mi, Gi, Ti, k, M, G or T (e.g. '256Mi')"
        )
    return int(match.group(1)) * _SUFFIX[match.group(2) or ""]


def format_mebibytes(n_bytes: int) -> str:
    """The smallest whole ``Mi`` quantity that holds ``n_bytes``."""
    return f"{-(-n_bytes // 2**20)}Mi"


def cpu_millicores(quantity: str) -> int:
    """Millicores in a CPU quantity such as ``"200m"`` or ``"1"``."""
    text = quantity.strip()
    if text.endswith("m"):
        return int(text[:-1])
    return round(float(text) * 1000)
