"""Shard records, and merging the raw stores of shard runs into one run.

``r2act collect --shard I/N`` writes ``RUN/.r2act/shard.json`` before its first incident: which
shard, of which plan (``plan_sha256``, target-independent) and which incidents it owes. A
run directory holds one shard for good: collecting another shard (or another campaign)
into it is refused, so a resume can never mix two shards' incidents.

``merge`` combines runs into a new run directory. It refuses, before writing anything,
runs of different campaigns (plan digests, or manifest digests for runs without a shard
record), two runs claiming the same shard, and an incident complete in two runs. Only
complete incidents are carried over; their files are hard-linked when the file system
allows (the raw store never rewrites a file in place) and copied otherwise. Each incident
lands under a hidden name first and is renamed into place, so an interrupted merge never
shows a half-copied incident as complete.
"""

from __future__ import annotations

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
    summary = MergeSummary(out)
    raw = layout.raw_dir(out)
    staging = raw / _STAGING
    with store.writing(out):
        staging.mkdir(parents=True, exist_ok=True)
    try:
        for source in scanned:
            for incident in sorted(source.complete):
                target = staging / incident
                summary.linked += _link_tree(layout.raw_dir(source.path) / incident, target)
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


def _link_tree(source: Path, target: Path) -> int:
    """Recreate ``source`` at ``target``, hard-linking files where possible; links made."""
    linked = 0

    def link_or_copy(src: str, dst: str) -> None:
        nonlocal linked
        try:
            os.link(src, dst)
            linked += 1
        except OSError:
            shutil.copy2(src, dst)

    with store.writing(target):
        shutil.copytree(source, target, copy_function=link_or_copy)
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
