"""``SHA256SUMS`` in the coreutils format, so ``sha256sum -c SHA256SUMS`` checks a copy."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Final

from r2act.quality_gate import Problem
from r2act.quality_gate.problems import error

SHA256SUMS: Final = "SHA256SUMS"
"""The checksum file at a dataset's root (``layout`` names it from here: this module is
imported by a digest check that must not load the layout's Arrow schemas)."""

Digest = Callable[[Path], str]
"""A file's hex SHA-256 (``sha256_file``, or a cache of it shared by several checks)."""


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def dataset_files(root: Path) -> list[str]:
    """Every file under ``root`` except SHA256SUMS, as sorted POSIX relative paths."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.name != SHA256SUMS
    )


def write_sums(root: Path) -> None:
    """Write SHA256SUMS for every other file under ``root``."""
    lines = [f"{sha256_file(root / name)}  {name}\n" for name in dataset_files(root)]
    (root / SHA256SUMS).write_text("".join(lines), encoding="utf-8")


def read_sums(root: Path) -> dict[str, str]:
    """Path -> digest from SHA256SUMS; ValueError on a malformed line."""
    sums: dict[str, str] = {}
    for number, line in enumerate((root / SHA256SUMS).read_text("utf-8").splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ValueError(f"SHA256SUMS:{number}: not '<sha256>  <path>'")
        sums[name] = digest
    return sums


def checksum_problems(root: Path, sha256: Digest = sha256_file) -> list[Problem]:
    """The problems of ``root``'s files against its SHA256SUMS: a listed file absent or with
    other content, a file present but not listed."""
    if not (root / SHA256SUMS).is_file():
        return [error("CHECKSUMS_MISSING", "no SHA256SUMS", where=SHA256SUMS)]
    try:
        sums = read_sums(root)
    except (OSError, ValueError) as exc:
        return [error("CHECKSUMS_INVALID", str(exc), where=SHA256SUMS)]
    problems = []
    for name, digest in sums.items():
        path = root / name
        if not path.is_file():
            problems.append(error("FILE_MISSING", "listed in SHA256SUMS but absent", where=name))
        elif sha256(path) != digest:
            problems.append(
                error("CHECKSUM_MISMATCH", "content differs from SHA256SUMS", where=name)
            )
    for name in dataset_files(root):
        if name not in sums:
            problems.append(error("FILE_UNLISTED", "not listed in SHA256SUMS", where=name))
    return problems


def checksums(root: Path) -> list[Problem]:
    """The checksum problems of the dataset at ``root`` alone: every file listed in
    SHA256SUMS present and matching, nothing unlisted.

    What a server of method-visible files needs before handing them out (``mcp serve``):
    the records, folds and card are answers it never reads, and ``evaluate`` checks them
    where they matter, when predictions are scored. Importing this module costs none of
    :mod:`r2act.datasets.validation`'s readers, card or figures."""
    if not root.is_dir():
        return [error("DATASET_MISSING", "no such directory", where=str(root))]
    return checksum_problems(root)
