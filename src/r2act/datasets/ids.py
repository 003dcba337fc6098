"""Opaque case ids: what a method sees in place of an incident id.

Incident ids spell the answer (``<system>_<service>_<fault>_<intensity>_rNN``), so every
method-visible table is keyed by a case id instead:
``"case-" + first 12 hex digits of HMAC-SHA256(salt, incident_id)``.

The salt is derived deterministically from the dataset's answers (every record, labels and
plans included, in id order), so a rebuild of the same run gives the same ids, while the
method-visible tables alone do not determine it: recomputing it takes the answers. It is
stored only with the answers (``answers/key.json``). A dataset relabelled under another
policy is another dataset with other case ids; predictions keyed by incident id carry over.

Everything here is pure (no files): the builder, ``load_records`` and the scorers' id
resolution (``evaluate`` and ``replay`` accept predictions keyed by either id) share it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping
from typing import Final

from r2act.schema import BenchmarkRecord

PREFIX: Final = "case-"
HEX_DIGITS: Final = 12
CASE_ID: Final = re.compile(rf"^{PREFIX}[0-9a-f]{{{HEX_DIGITS}}}$")
ALGORITHM: Final = "HMAC-SHA256"
_SALT_DOMAIN: Final = b"r2act case-id salt v1\n"


def derive_salt(records: Iterable[BenchmarkRecord]) -> str:
    """The dataset's salt (64 hex): SHA-256 over every record's JSON, in incident-id order.

    The records are taken without their ``case_id`` (which depends on the salt), so the
    salt depends on the answers and nothing else.
    """
    digest = hashlib.sha256(_SALT_DOMAIN)
    for record in sorted(records, key=lambda r: r.incident_id):
        digest.update(record.model_dump_json(exclude={"case_id"}).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def case_id(salt: str, incident_id: str) -> str:
    """``case-`` + 12 hex of HMAC-SHA256(salt, incident_id)."""
    mac = hmac.new(bytes.fromhex(salt), incident_id.encode("utf-8"), hashlib.sha256)
    return PREFIX + mac.hexdigest()[:HEX_DIGITS]


def assign(records: list[BenchmarkRecord]) -> tuple[str, list[BenchmarkRecord]]:
    """The salt and the records with their case ids set; ValueError on a collision."""
    salt = derive_salt(records)
    out = [r.model_copy(update={"case_id": case_id(salt, r.incident_id)}) for r in records]
    seen: dict[str, str] = {}
    for record in out:
        assert record.case_id is not None
        if record.case_id in seen:
            raise ValueError(f"case id collision: {seen[record.case_id]} and {record.incident_id}")
        seen[record.case_id] = record.incident_id
    return salt, out


def aliases(records: Iterable[BenchmarkRecord]) -> dict[str, str]:
    """Every id a prediction may use (case id or incident id) -> the incident id."""
    out: dict[str, str] = {}
    for record in records:
        out[record.incident_id] = record.incident_id
        if record.case_id is not None:
            out[record.case_id] = record.incident_id
    return out


def resolve(key: str, known: Mapping[str, str]) -> str:
    """The incident id ``key`` names (via ``aliases``); an unknown key stays itself."""
    return known.get(key, key)


def key_document(salt: str) -> dict[str, str]:
    """``answers/key.json``: the salt and how case ids are made from it."""
    return {
        "algorithm": ALGORITHM,
        "salt": salt,
        "case_id": f"{PREFIX!r} + the first {HEX_DIGITS} hex digits of "
        f"{ALGORITHM}(key=bytes.fromhex(salt), message=incident_id as UTF-8)",
        "salt_from": "SHA-256 of 'r2act case-id salt v1\\n' and every record's JSON "
        "(without case_id) in incident-id order, each followed by a newline",
    }
