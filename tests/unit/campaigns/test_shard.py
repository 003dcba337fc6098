"""Shards: a partition of the plan, balanced per cell, stable when cells grow."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from r2act.campaigns import load_manifest, plan_incidents
from r2act.campaigns.shard import Shard, parse_shard, plan_sha256, select, shard_of
from r2act.errors import DataError

REPO = Path(__file__).resolve().parents[3]
PAPER = REPO / "campaigns" / "r2act-302.yaml"


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 10])
def test_shards_partition_the_plan_in_plan_order(count: int) -> None:
    incidents = plan_incidents(load_manifest(PAPER))
    shards = [select(incidents, Shard(i, count)) for i in range(1, count + 1)]
    ids = [i.id for shard in shards for i in shard]
    assert sorted(ids) == sorted(i.id for i in incidents)  # every incident exactly once
    order = {i.id: n for n, i in enumerate(incidents)}
    for shard in shards:
        positions = [order[i.id] for i in shard]
        assert positions == sorted(positions)


def test_each_cell_is_split_evenly_up_to_one_incident() -> None:
    incidents = plan_incidents(load_manifest(PAPER))
    cells = Counter((i.service, i.fault.type, i.fault.intensity) for i in incidents)
    for count in (2, 3, 4):
        for cell, size in cells.items():
            per_shard = Counter(
                shard_of(i, count)
                for i in incidents
                if (i.service, i.fault.type, i.fault.intensity) == cell
            )
            shares = [per_shard.get(s, 0) for s in range(1, count + 1)]
            assert max(shares) - min(shares) <= 1, (cell, shares)
            assert sum(shares) == size


def test_more_repetitions_move_no_incident_to_another_shard(
    write_manifest: Callable[[str], Path],
) -> None:
    text = PAPER.read_text()
    small = plan_incidents(load_manifest(PAPER))
    grown = plan_incidents(
        load_manifest(write_manifest(text.replace("repetitions: 5}", "repetitions: 9}")))
    )
    assert len(grown) > len(small)
    before = {i.id: shard_of(i, 3) for i in small}
    after = {i.id: shard_of(i, 3) for i in grown}
    assert all(after[k] == v for k, v in before.items())


def test_the_split_is_the_same_in_every_process() -> None:
    # fixed values: SHA-256 of the cell, never Python's per-process salted hash
    incidents = plan_incidents(load_manifest(PAPER))
    sizes = [len(select(incidents, Shard(i, 3))) for i in (1, 2, 3)]
    assert sizes == [155, 153, 155]  # 463 planned: 302 quota + 161 spares


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("0/3", "expected I/N"),
        ("4/3", "does not exist"),
        ("1/0", "expected I/N"),
        ("a/3", "expected I/N"),
        ("1-3", "expected I/N"),
        ("1/100000", "at most"),
    ],
)
def test_bad_shard_options_are_one_line_errors(text: str, problem: str) -> None:
    with pytest.raises(DataError, match=problem) as caught:
        parse_shard(text)
    assert "\n" not in str(caught.value)
    assert parse_shard(" 2/3 ") == Shard(2, 3)


def test_plan_digest_ignores_the_target_but_not_the_plan(
    write_manifest: Callable[[str], Path],
) -> None:
    def digest(text: str) -> str:
        manifest = load_manifest(write_manifest(text))
        return plan_sha256(manifest, plan_incidents(manifest))

    text = PAPER.read_text()
    base = digest(text)
    assert digest(text.replace("seed: 302\nservices", "seed: 9\nservices")) == base  # sim seed
    kube = "  kind: kubernetes\n  context: kind-r2act\n  namespace: lane-{}\n"
    on_a = text.replace("  kind: sim\n  seed: 302\n", kube.format("a"))
    on_b = text.replace("  kind: sim\n  seed: 302\n", kube.format("b"))
    assert digest(on_a) == digest(on_b) == base
    assert digest(text.replace("\nseed: 302\n", "\nseed: 303\n")) != base  # incident seeds
    assert digest(text.replace("pre_s: 300", "pre_s: 240")) != base
