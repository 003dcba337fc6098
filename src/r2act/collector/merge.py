"""Shard records, and merging the raw stores of shard runs into one run.

``r2act collect --shard I/N`` writes ``RUN/.r2act/shard.json`` before its first incident: which
shard, of which plan (``plan_sha256``, target-independent) and which incidents it owes. A
run directory holds one shard for good: collecting another shard (or another campaign)
into it is refused, so a resume can never mix two shards' incidents.

``merge`` combines runs into a new run directory. It refuses, before writing anything,
runs of different campaigns (plan digests, or manifest digests for runs without a shard
record), two runs claiming the same shard, and an incident complete in two runs. It also
refuses, at the first one found and again before writing anything, a complete incident
whose bytes are not the ones collected: every file the collector summed into ``COMPLETE``
is hashed and compared (a changed, missing or added file), and a symbolic link or special
file anywhere in an incident is refused outright, so a merged run never carries corrupt
bytes or a file from outside the run. Only complete incidents are carried over, and only
their regular files (hidden leftovers such as a crashed write's temporary file stay
behind); the files are hard-linked when the file system allows (the raw store never
rewrites a file in place) and copied otherwise. Each incident lands under a hidden name
first and is renamed into place, so an interrupted merge never shows a half-copied incident
as complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from r2act.campaigns import plan_incidents
from r2act.campaigns.quotas import is_spare
from r2act.campaigns.shard import Shard, plan_sha256, select
from r2act.collector import layout, ledger, resume, store
from r2act.collector.campaign import CollectionPlan
from r2act.errors import DataError
from r2act.schema.rawstore import UNSUMMED

SHARD_RECORD = "shard.json"
"""``RUN/.r2act/shard.json``: the shard a run collects (absent for an unsharded run)."""
MERGE_RECORD = "merge.json"
"""``RUN/merge.json``: the runs a merged run was made from."""
_STAGING = ".merging"


class ShardRecord(BaseModel):
    """What one shard run owes: written before collection, read by resume and merge."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    campaign: str = Field(description="Campaign name.")
    shard: str = Field(pattern=r"^[1-9][0-9]*/[1-9][0-9]*$", description="I/N.")
    plan_sha256: str = Field(description="Digest of the whole plan (campaigns.shard.plan_sha256).")
    manifest_sha256: str = Field(description="SHA-256 of the manifest file this shard used.")
    incidents: list[str] = Field(description="Incident ids of this shard, in plan order.")
    spares: list[str] = Field(
        default_factory=list,
        description="Those of them that are spares: collected only while their cell is short.",
    )

    @property
    def index(self) -> int:
        """I of I/N."""
        return int(self.shard.split("/")[0])

    @property
    def count(self) -> int:
        """N of I/N."""
        return int(self.shard.split("/")[1])


def shard_record_path(run_dir: Path) -> Path:
    """Where a run keeps its shard record: beside its lock and ledger."""
    return ledger.state_dir(run_dir) / SHARD_RECORD


def read_shard_record(run_dir: Path) -> ShardRecord | None:
    """The run's shard record, None for an unsharded run; DataError when unreadable."""
    path = shard_record_path(run_dir)
    if not path.is_file():
        return None
    try:
        return ShardRecord.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as error:
        raise DataError(
            f"{path}: unreadable shard record ({type(error).__name__}); "
            "it is written by `r2act collect --shard` and must not be edited"
        ) from None


def claim_shard(run_dir: Path, record: ShardRecord) -> None:
    """Write the shard record, or check that the run already belongs to this very shard."""
    ledger.check_out_dir(run_dir)  # never into a directory r2act did not write
    existing = read_shard_record(run_dir)
    if existing is None:
        if resume.scan(layout.raw_dir(run_dir)).complete:
            raise DataError(
                f"{run_dir}: holds an unsharded run; collect shard {record.shard} into "
                "another --out"
            )
        path = shard_record_path(run_dir)
        with store.writing(path.parent):
            path.parent.mkdir(parents=True, exist_ok=True)
        store.write_json(path, record)
        return
    if existing.plan_sha256 != record.plan_sha256:
        raise DataError(
            f"{shard_record_path(run_dir)}: this run collects another plan (campaign "
            f"{existing.campaign!r}); collect into another --out"
        )
    if existing.shard != record.shard:
        raise DataError(
            f"{shard_record_path(run_dir)}: this run collects shard {existing.shard}, not "
            f"{record.shard}; give each shard its own --out"
        )


def refuse_shard_record(run_dir: Path) -> None:
    """An unsharded collect must not resume into a shard's run directory."""
    if (existing := read_shard_record(run_dir)) is not None:
        raise DataError(
            f"{run_dir}: holds shard {existing.shard} of campaign {existing.campaign!r}; "
            f"add --shard {existing.shard} to resume it, or choose another --out"
        )


@dataclass(frozen=True)
class SourceRun:
    """One run given to merge, as scanned."""

    path: Path
    shard: ShardRecord | None
    complete: frozenset[str]
    partial: frozenset[str]
    manifests: frozenset[str]
    """manifest_sha256 values found in its complete incidents."""


@dataclass
class MergeSummary:
    """What ``merge`` did."""

    out: Path
    incidents: int = 0
    linked: int = 0
    """Files hard-linked rather than copied."""
    skipped_partial: dict[str, list[str]] = field(default_factory=dict)
    """Run -> incidents left out because they were not complete there."""
    missing: list[str] = field(default_factory=list)
    """Quota incidents the shard records plan that no run holds complete."""
    spares_absent: int = 0
    """Spares of the shard records no run holds: not needed (their cell was full) or
    still to collect; the audit's shortfall report says whether a cell lacks any."""
    missing_shards: list[str] = field(default_factory=list)
    """``I/N`` of shards none of the runs is."""


def scan_source(run_dir: Path) -> SourceRun:
    """Scan a run for merge; DataError when it is not a run directory."""
    raw = layout.raw_dir(run_dir)
    if not raw.is_dir():
        raise DataError(f"{run_dir}: not a run directory (no {layout.RAW_DIR}/ inside)")
    found = resume.scan(raw)
    manifests = {_manifest_of(raw / incident) for incident in sorted(found.complete)}
    return SourceRun(
        run_dir, read_shard_record(run_dir), found.complete, found.partial, frozenset(manifests)
    )


def _manifest_of(incident_dir: Path) -> str:
    path = incident_dir / layout.INCIDENT_JSON
    try:
        document: Any = json.loads(path.read_bytes())
        value = document["manifest_sha256"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise DataError(f"{path}: unreadable incident record ({type(error).__name__})") from None
    return str(value)


def check_compatible(sources: Sequence[SourceRun]) -> None:
    """Refuse runs of different campaigns, a shard given twice and overlapping incidents."""
    if len({s.path.resolve() for s in sources}) != len(sources):
        raise DataError("merge: a run is given twice (give each run once)")
    records = [s.shard for s in sources if s.shard is not None]
    if records and len(records) == len(sources):
        _check_shards(sources)
    else:
        manifests = set().union(*(s.manifests for s in sources))
        if len(manifests) > 1:
            first = next(s for s in sources if s.manifests)
            other = next(s for s in sources if s.manifests - first.manifests)
            raise DataError(
                f"merge: {other.path} and {first.path} were collected from different "
                "manifests (merge only runs of one campaign; shards of a campaign on "
                "different targets need `collect --shard`)"
            )
    owner: dict[str, Path] = {}
    for source in sources:
        for incident in sorted(source.complete):
            if incident in owner:
                raise DataError(
                    f"merge: incident {incident} is complete in both {owner[incident]} and "
                    f"{source.path} (keep it in one run only)"
                )
            owner[incident] = source.path


def _check_shards(sources: Sequence[SourceRun]) -> None:
    first = sources[0]
    assert first.shard is not None
    seen: dict[str, Path] = {}
    for source in sources:
        record = source.shard
        assert record is not None
        if record.plan_sha256 != first.shard.plan_sha256:
            raise DataError(
                f"merge: {source.path} is a shard of another plan than {first.path} "
                f"(campaign {record.campaign!r} vs {first.shard.campaign!r}, or the same "
                "campaign with another manifest); merge shards of one campaign only"
            )
        if record.count != first.shard.count:
            raise DataError(
                f"merge: {source.path} is shard {record.shard} but {first.path} is "
                f"{first.shard.shard} (all shards must split the campaign the same way)"
            )
        if record.shard in seen:
            raise DataError(
                f"merge: {seen[record.shard]} and {source.path} are both shard {record.shard}"
            )
        seen[record.shard] = source.path
        if stray := sorted(source.complete - set(record.incidents)):
            raise DataError(
                f"merge: {source.path / layout.RAW_DIR / stray[0]} is not in shard "
                f"{record.shard} (the run directory was reused; remove that incident)"
            )
        if foreign := sorted(source.manifests - {record.manifest_sha256}):
            raise DataError(
                f"merge: {source.path} holds incidents from manifest {foreign[0][:12]}..., "
                f"not the shard's {record.manifest_sha256[:12]}... (collect them again)"
            )


def merge_runs(sources: Sequence[Path], out: Path) -> MergeSummary:
    """Merge the complete incidents of ``sources`` into the new run directory ``out``."""
    if not sources:
        raise DataError("merge: give at least one run directory")
    scanned = [scan_source(Path(s)) for s in sources]
    if any(out.resolve() == s.path.resolve() for s in scanned):
        raise DataError(f"--out {out}: is one of the runs to merge (choose a new directory)")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DataError(f"--out {out}: exists and is not empty (choose a new directory)")
    check_compatible(scanned)
    carried = {
        (source.path, incident): verified_files(layout.raw_dir(source.path) / incident)
        for source in scanned
        for incident in sorted(source.complete)
    }
    summary = MergeSummary(out)
    raw = layout.raw_dir(out)
    staging = raw / _STAGING
    with store.writing(out):
        staging.mkdir(parents=True, exist_ok=True)
    try:
        for source in scanned:
            for incident in sorted(source.complete):
                target = staging / incident
                files = carried[source.path, incident]
                summary.linked += _carry(layout.raw_dir(source.path) / incident, target, files)
                with store.writing(raw):
                    os.replace(target, raw / incident)
                summary.incidents += 1
            if source.partial:
                summary.skipped_partial[str(source.path)] = sorted(source.partial)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _account_for_shards(scanned, summary)
    store.write_json(out / MERGE_RECORD, _merge_record(scanned, summary))
    return summary


def verified_files(incident_dir: Path) -> list[str]:
    """The files merge carries for one complete incident, each checked against ``COMPLETE``.

    Returns their paths relative to ``incident_dir`` (sorted). Raises ``DataError`` naming
    the first offending file: a symbolic link or special file anywhere inside, a ``COMPLETE``
    without checksums, a summed file whose SHA-256 differs, or one missing or added since
    collection. The journal and ``COMPLETE`` itself carry no sum (``UNSUMMED``); hidden names
    are skipped, as the checksums skip them."""
    files = _regular_files(incident_dir)
    claimed = _claimed_digests(incident_dir)
    summed = [f for f in files if f.rpartition("/")[2] not in UNSUMMED]
    fix = (
        f"collect that incident again (remove {incident_dir} and rerun the shard's collect), "
        "then merge"
    )
    for relative in sorted(set(summed) | claimed.keys()):
        if relative not in claimed:
            raise DataError(
                f"merge: {incident_dir / relative}: not among the files collected (added "
                f"after collection); remove it, or {fix}"
            )
        if relative not in summed:
            raise DataError(
                f"merge: {incident_dir / relative}: missing (collected, then removed); {fix}"
            )
        if _sha256(incident_dir / relative) != claimed[relative]:
            raise DataError(
                f"merge: {incident_dir / relative}: its bytes differ from the SHA-256 written "
                f"at collection (changed or corrupted since); {fix}"
            )
    return files


def _regular_files(incident_dir: Path) -> list[str]:
    """Every regular file under ``incident_dir`` but hidden ones; refuses links and specials."""
    found: list[str] = []

    def walk(directory: Path, prefix: str) -> None:
        with os.scandir(directory) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                path = Path(entry.path)
                if entry.is_symlink():
                    raise DataError(
                        f"merge: {path}: is a symbolic link (to {os.readlink(path)}); merge "
                        "copies no links, and a raw store holds none: remove it, or collect "
                        "that incident again"
                    )
                if entry.is_dir(follow_symlinks=False):
                    walk(path, f"{prefix}{entry.name}/")
                elif entry.is_file(follow_symlinks=False):
                    if not entry.name.startswith("."):  # as file_digests skips them
                        found.append(f"{prefix}{entry.name}")
                else:
                    raise DataError(
                        f"merge: {path}: is not a regular file (a pipe, socket or device); "
                        "a raw store holds none: remove it"
                    )

    if incident_dir.is_symlink():
        raise DataError(
            f"merge: {incident_dir}: is a symbolic link (to {os.readlink(incident_dir)}); "
            "merge copies no links: give the run that holds the incident itself"
        )
    walk(incident_dir, "")
    return found


def _claimed_digests(incident_dir: Path) -> dict[str, str]:
    """The SHA-256 per file the collector wrote into ``COMPLETE``."""
    path = incident_dir / layout.COMPLETE
    try:
        claimed: Any = json.loads(path.read_bytes()).get("sha256")
    except (OSError, ValueError, AttributeError) as error:
        raise DataError(f"merge: {path}: unreadable ({type(error).__name__})") from None
    if not isinstance(claimed, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in claimed.items()
    ):
        raise DataError(
            f"merge: {path}: carries no checksums (written by an older r2act, or edited), so "
            "the incident's files cannot be verified; collect that incident again"
        )
    return claimed


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _carry(source: Path, target: Path, files: Sequence[str]) -> int:
    """Recreate ``files`` of ``source`` under ``target``, hard-linked where possible (never
    following a link); returns how many were linked."""
    linked = 0
    with store.writing(target):
        target.mkdir(parents=True)
        for relative in files:
            src, dst = source / relative, target / relative
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, dst, follow_symlinks=False)
                linked += 1
            except OSError:
                shutil.copy2(src, dst, follow_symlinks=False)
    return linked


def _account_for_shards(sources: Sequence[SourceRun], summary: MergeSummary) -> None:
    records = [s.shard for s in sources if s.shard is not None]
    if not records:
        return
    count = records[0].count
    present = {r.index for r in records}
    summary.missing_shards = [str(Shard(i, count)) for i in range(1, count + 1) if i not in present]
    held = set().union(*(s.complete for s in sources))
    spares = {i for r in records for i in r.spares}
    summary.missing = [i for r in records for i in r.incidents if i not in held | spares]
    summary.spares_absent = len(spares - held)


def _merge_record(sources: Sequence[SourceRun], summary: MergeSummary) -> dict[str, Any]:
    return {
        "sources": [
            {
                "run": str(s.path),
                "shard": s.shard.shard if s.shard else None,
                "incidents": len(s.complete),
            }
            for s in sources
        ],
        "plan_sha256": sources[0].shard.plan_sha256 if sources[0].shard else None,
        "incidents": summary.incidents,
        "missing_shards": summary.missing_shards,
        "missing_incidents": summary.missing,
        "spares_absent": summary.spares_absent,
    }


def shard_collection(plan: CollectionPlan, shard: Shard) -> tuple[CollectionPlan, ShardRecord]:
    """Restrict ``plan`` to ``shard`` and describe the shard for ``RUN/shard.json``.

    The record lists the shard's incidents of the *whole* campaign, so an ``--only``
    restriction collects part of the shard without changing what the shard owes. Its spares
    are listed apart: the shard collects one only while its share of the cell is short
    (``collector.rounds``), so a spare absent from every run is not missing."""
    manifest = plan.manifest
    every = plan_incidents(manifest)
    mine = select(every, shard)
    owed = [i.id for i in mine]
    record = ShardRecord(
        spares=[i.id for i in mine if is_spare(i)],
        campaign=manifest.name,
        shard=str(shard),
        plan_sha256=plan_sha256(manifest, every),
        manifest_sha256=plan.manifest_sha256,
        incidents=owed,
    )
    wanted = set(owed)
    items = [item for item in plan.items if item.incident.id in wanted]
    return replace(plan, items=items), record
