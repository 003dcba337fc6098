"""For the same manifest and seed, every stage's output stays what the fixture recorded.

The fixture (``digests.json``) holds content digests of the raw store, the audit, the
dataset, each baseline's predictions and each baseline's ``evaluate --json``, for the smoke
campaign and a fixed 60-incident sample of ``r2act-302`` (``pipeline.sample_ids``). A
restructuring (issue 20: Online Boutique out of the simulator's core) must leave all of it
unchanged. A change that is meant to change outputs re-records the fixture in its own
commit that says why: ``PYTHONPATH=src python tests/identity/pipeline.py record``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pipeline import CAMPAIGNS, FIXTURE, Campaign, differences, digests, run_pipeline

EXPECTED = json.loads(FIXTURE.read_text())["campaigns"]
RECORD = "re-record with `PYTHONPATH=src python tests/identity/pipeline.py record` (say why)"


@pytest.mark.slow
@pytest.mark.parametrize("campaign", CAMPAIGNS, ids=lambda c: c.name)
def test_every_stage_output_is_byte_identical_to_the_fixture(
    campaign: Campaign, tmp_path: Path
) -> None:
    actual = digests(run_pipeline(campaign, tmp_path))
    lines = differences(EXPECTED[campaign.name], actual)
    shown = "\n".join(lines[:40]) + (f"\n... {len(lines) - 40} more" if len(lines) > 40 else "")
    assert not lines, f"{campaign.name}: {len(lines)} files differ; {RECORD}\n{shown}"


def test_the_digest_ignores_the_codec_and_wall_clock_but_not_content(tmp_path: Path) -> None:
    """A gzip and a zstd copy of one log digest alike; a changed line or journal step not."""
    import gzip

    import zstandard

    lines = b'{"ts": 1.0, "line": "request started"}\n'
    journal = '{"step": "pre", "start": 1.0, "end": 2.0, "wall_s": %s}\n'
    runs = []
    for name, codec, wall in (("a", "gz", "0.01"), ("b", "zst", "0.73")):
        run = tmp_path / name / "raw" / "x" / "pre"
        run.mkdir(parents=True)
        data = gzip.compress(lines) if codec == "gz" else zstandard.compress(lines)
        (run / f"logs.jsonl.{codec}").write_bytes(data)
        (run.parent / "journal.jsonl").write_text(journal % wall)
        runs.append(digests(tmp_path / name))
    assert runs[0] == runs[1] and "raw/x/pre/logs.jsonl" in runs[0]
    (tmp_path / "b" / "raw" / "x" / "journal.jsonl").write_text(
        journal.replace("2.0", "3.0") % "0.73"
    )
    assert differences(runs[0], digests(tmp_path / "b")) == ["changed: raw/x/journal.jsonl"]
