"""A public copy of a dataset with the answers held back (``dataset export --format hf-public``).

A benchmark published with its answers can be fitted to; SWE-bench and many leaderboards
keep a hidden test split instead. This copy is what to upload to the Hugging Face Hub (or
anywhere) for that: every method-visible file of the dataset, byte for byte, and nothing
under ``answers/`` (incident ids, labels, gold and plan sets, provenance, the audit trail,
the id key). The files that describe the dataset are rewritten to match:

- ``README.md`` (the card): its ``configs`` no longer list the answer tables, so
  ``datasets.load_dataset`` offers only what is there, and a closing section says the
  answers are held back and how submissions are scored;
- ``croissant.json``: the answer files and their record sets are removed;
- ``SHA256SUMS``: recomputed over the copy, so ``sha256sum -c SHA256SUMS`` checks it.

The full dataset stays where it is; the holder scores submitted predictions files against
it with ``r2act evaluate``. Before anything is written, the copy's text is checked for
incident ids (they name the root cause), and a hit stops the export.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from r2act.datasets import layout
from r2act.datasets.checksums import dataset_files, read_sums, sha256_file, write_sums
from r2act.datasets.tables import read_records
from r2act.errors import DataError

HELD_BACK = layout.ANSWERS + "/"
_CARD_NOTE = """
## Answers held back

This is the public copy of the dataset: every table a method may read, and none of
`answers/` (incident ids, root-cause labels, valid and invalid plan sets, provenance).
Predict every case of `cases.parquet` (one JSON line per case, keyed by `case_id`) and
send the predictions file to the dataset's maintainers, who score it with
`r2act evaluate PREDICTIONS --dataset FULL_DATASET`.
"""


@dataclass(frozen=True)
class PublicSummary:
    """What the public copy holds."""

    out: Path
    files: int
    held_back: int


def _card(text: str) -> str:
    """The card without the answer configs, and with the held-back note."""
    if not text.startswith("---\n"):
        raise DataError("README.md: the dataset card has no YAML front matter")
    _, front, body = text.split("---\n", 2)
    meta: dict[str, Any] = yaml.safe_load(front) or {}
    configs = meta.get("configs") or []
    meta["configs"] = [
        c
        for c in configs
        if not any(str(f.get("path", "")).startswith(HELD_BACK) for f in c.get("data_files", []))
    ]
    dumped = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    return f"---\n{dumped}---\n{body.rstrip()}\n{_CARD_NOTE}"


def _croissant(text: str) -> str:
    """The Croissant metadata without the answer files and the record sets that read them."""
    meta: dict[str, Any] = json.loads(text)
    held = {
        str(d.get("@id"))
        for d in meta.get("distribution", [])
        if str(d.get("contentUrl", "")).startswith(HELD_BACK)
    }
    meta["distribution"] = [d for d in meta.get("distribution", []) if d.get("@id") not in held]

    def reads_held(record_set: dict[str, Any]) -> bool:
        sources = [f.get("source", {}).get("fileObject", {}) for f in record_set.get("field", [])]
        return any(s.get("@id") in held for s in sources)

    meta["recordSet"] = [r for r in meta.get("recordSet", []) if not reads_held(r)]
    return json.dumps(meta, indent=2, ensure_ascii=False) + "\n"


def _check_no_ids(out: Path, incident_ids: set[str]) -> None:
    """Refuse a copy whose text files name an incident id (parquet is checked at build)."""
    for path in sorted(out.rglob("*")):
        if not path.is_file() or path.suffix not in {".md", ".json", ".jsonl", ".csv", ".txt"}:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        hit = next((i for i in incident_ids if i in text), None)
        if hit is not None:
            raise DataError(
                f"{path}: names incident id {hit} (it carries the label); not published"
            )


def export_public(dataset: Path, out: Path) -> PublicSummary:
    """Write the public copy of ``dataset`` to the new directory ``out``."""
    if out.exists() and any(out.iterdir()):
        raise DataError(f"{out}: exists and is not empty (choose a new --out)")
    if not (dataset / layout.SHA256SUMS).is_file():
        raise DataError(f"{dataset}: no SHA256SUMS (is it a dataset? r2act dataset build)")
    sums = read_sums(dataset)
    names = dataset_files(dataset)
    for name in names:  # never publish a copy of bytes the dataset does not vouch for
        if sums.get(name) != sha256_file(dataset / name):
            raise DataError(
                f"{dataset / name}: does not match SHA256SUMS (r2act dataset validate says more)"
            )
    incident_ids = {r.incident_id for r in read_records(dataset / layout.INCIDENTS)}
    staging = out.with_name(f".{out.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        kept = [n for n in names if not n.startswith(HELD_BACK)]
        for name in kept:
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if name == layout.README:
                target.write_text(_card((dataset / name).read_text("utf-8")), "utf-8")
            elif name == layout.CROISSANT:
                target.write_text(_croissant((dataset / name).read_text("utf-8")), "utf-8")
            else:
                shutil.copyfile(dataset / name, target)
        _check_no_ids(staging, incident_ids)
        write_sums(staging)
        if out.exists():
            out.rmdir()  # empty, checked above
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return PublicSummary(out, len(kept), len(names) - len(kept))
