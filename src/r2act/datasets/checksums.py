"""``SHA256SUMS`` in the coreutils format, so ``sha256sum -c SHA256SUMS`` checks a copy."""

from __future__ import annotations

import hashlib
from pathlib import Path

from r2act.datasets.layout import SHA256SUMS


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
