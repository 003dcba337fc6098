"""The byte-identity fixture: digests of every stage's output for two fixed campaigns.

Issue 20 moves Online Boutique out of the simulator's core under one hard rule: for the same
manifest and seed, the raw store, the audit, the dataset, every baseline's predictions and
every ``evaluate --json`` stay byte-identical. This module runs the whole pipeline through
the CLI (collect -> audit -> dataset build -> every baseline -> evaluate --json) and digests
what each stage wrote; ``test_byte_identity.py`` compares the digests with ``digests.json``,
recorded on main before the move.

What a digest covers, and what it deliberately does not:

- a file's *content*: compressed files (gzip, zstd, recognised by their magic bytes) are
  digested after decompression, and the codec's suffix is dropped from the name, so a change
  of the raw store's codec is not a change of the data;
- ``journal.jsonl`` without ``wall_s`` (the wall-clock time a step took) and ``COMPLETE``
  with its ``sha256`` map reduced to the names it covers (those hash the compressed bytes;
  the content digests here stand for them);
- ``judged.json`` (the audit's stored verdict) without its cache keys: ``files`` digests the
  journal with its wall-clock times, ``code`` the gate's source, so neither is an output;
- every path of the work directory written into a file is replaced by ``RUN``;
- ``RUN/.r2act`` (lock, owner, ledger) and ``RUN/.sim`` (the simulator's own persisted
  state) are the run's machinery, not its outputs, and are left out.

Re-record (after a change that is *meant* to change outputs, with the reason in the commit):

    PYTHONPATH=src python tests/identity/pipeline.py record

``python tests/identity/pipeline.py diff`` prints what differs from the fixture.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "digests.json"
DIGEST_CHARS = 16
"""Hex digits kept per digest (64 bits): ample to detect a change, small to commit."""

SAMPLE_STRIDE = 5
SAMPLE_SIZE = 60
BASELINES = ("random", "majority", "keyword", "rule", "nb", "gold-mapper")
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_CODEC_SUFFIXES = (".gz", ".zst", ".zstd")
_MACHINERY = (".r2act", ".sim")


@dataclass(frozen=True)
class Campaign:
    """One fixture campaign: a manifest and, for a sample, the incident ids collected."""

    name: str
    manifest: Path
    sample: bool


CAMPAIGNS = (
    Campaign("smoke", REPO / "campaigns" / "smoke.yaml", sample=False),
    Campaign("r2act-302-sample60", REPO / "campaigns" / "r2act-302.yaml", sample=True),
)


def sample_ids(manifest: Path) -> list[str]:
    """The 60-incident sample of a campaign: every fifth quota incident in plan order.

    The planner's collection order, spares left out, indices 0, 5, 10, ...: for
    r2act-302 that is 60 incidents over all eight fault types, both intensities and all six
    root-cause services (the rule is fixed, so the sample is the same on every machine).
    """
    from r2act.campaigns import load_manifest, plan_incidents
    from r2act.campaigns.quotas import is_spare

    planned = [i for i in plan_incidents(load_manifest(manifest)) if not is_spare(i)]
    return [i.id for i in planned[::SAMPLE_STRIDE][:SAMPLE_SIZE]]


def _cli(*args: str) -> None:
    from typer.testing import CliRunner

    from r2act.cli import _register_commands, app

    _register_commands()
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    if result.exit_code != 0:
        raise RuntimeError(f"r2act {' '.join(args)} exited {result.exit_code}:\n{result.output}")


def run_pipeline(campaign: Campaign, work: Path) -> Path:
    """Run every stage of ``campaign`` into ``work/<name>``; return that run directory."""
    run = work / campaign.name
    only: list[str] = []
    if campaign.sample:
        for incident_id in sample_ids(campaign.manifest):
            only += ["--only", incident_id]
    _cli("collect", str(campaign.manifest), "--out", str(run), "-q", *only)
    _cli("audit", str(run), "-q", "--workers", "1")
    _cli("dataset", "build", str(run), "-q")
    dataset = run / "dataset"
    for name in BASELINES:
        predictions = run / "predictions" / f"{name}.jsonl"
        _cli("baseline", name, "--dataset", str(dataset), "--out", str(predictions), "-q")
        report = run / "evaluation" / f"{name}.json"
        _cli("evaluate", str(predictions), "--dataset", str(dataset), "--json", str(report))
    return run


def _content(path: Path) -> bytes:
    data = path.read_bytes()
    if data.startswith(_GZIP_MAGIC):
        return gzip.decompress(data)
    if data.startswith(_ZSTD_MAGIC):
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return data


def _logical_name(relative: str) -> str:
    for suffix in _CODEC_SUFFIXES:
        if relative.endswith(suffix):
            return relative.removesuffix(suffix)
    return relative


def _normalised(relative: str, data: bytes, run: Path) -> bytes:
    name = relative.rsplit("/", 1)[-1]
    if name == "journal.jsonl":
        rows = [json.loads(line) for line in data.decode().splitlines()]
        for row in rows:
            row.pop("wall_s", None)
        data = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode()
    elif name == "COMPLETE":
        complete = json.loads(data)
        complete["sha256"] = sorted(_logical_name(k) for k in complete.get("sha256", {}))
        data = json.dumps(complete, sort_keys=True).encode()
    elif name == "judged.json":
        judged = json.loads(data)
        judged.pop("files", None)  # a digest over the journal, wall-clock times included
        judged.pop("code", None)  # the gate's source digest: any edit, output or not
        data = json.dumps(judged, sort_keys=True).encode()
    for prefix in (str(run.resolve()), str(run)):
        data = data.replace(prefix.encode(), b"RUN")
    return data


def _files(run: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(run.rglob("*")):
        relative = path.relative_to(run).as_posix()
        if path.is_file() and not relative.startswith(_MACHINERY):
            yield relative, path


def digests(run: Path) -> dict[str, str]:
    """Logical path -> content digest for every output file of a run directory."""
    out: dict[str, str] = {}
    for relative, path in _files(run):
        data = _normalised(relative, _content(path), run)
        out[_logical_name(relative)] = hashlib.sha256(data).hexdigest()[:DIGEST_CHARS]
    return out


def record_all(work: Path) -> dict[str, Any]:
    """Run every fixture campaign and return the fixture document."""
    return {
        "about": "tests/identity/pipeline.py: content digests of every stage's output",
        "sample": {"stride": SAMPLE_STRIDE, "size": SAMPLE_SIZE},
        "campaigns": {c.name: digests(run_pipeline(c, work)) for c in CAMPAIGNS},
    }


def differences(expected: dict[str, str], actual: dict[str, str]) -> list[str]:
    """Human-readable lines: files missing, added or with other content."""
    lines = [f"missing: {k}" for k in sorted(expected.keys() - actual.keys())]
    lines += [f"added:   {k}" for k in sorted(actual.keys() - expected.keys())]
    lines += [
        f"changed: {k}" for k in sorted(expected.keys() & actual.keys()) if expected[k] != actual[k]
    ]
    return lines


def main(argv: list[str]) -> int:
    import tempfile

    if not argv or argv[0] not in {"record", "diff"}:
        print("usage: PYTHONPATH=src python tests/identity/pipeline.py record|diff")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        document = record_all(Path(tmp))
    if argv[0] == "record":
        FIXTURE.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
        print(f"wrote {FIXTURE}")
        return 0
    expected = json.loads(FIXTURE.read_text())["campaigns"]
    found = 0
    for name, actual in document["campaigns"].items():
        for line in differences(expected.get(name, {}), actual):
            print(f"{name}: {line}")
            found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
