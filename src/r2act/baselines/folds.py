"""Out-of-fold splits: a learning baseline never sees the labels of the fold it predicts.

The paper evaluates learning-based methods under 5-fold cross-validation; the dataset
ships its folds (``folds.json``, stratified by service x fault type), so every learning
baseline uses those exact folds and results stay comparable across methods. Records that
no fold lists (a hand-edited dataset) form one extra test group trained on all folds.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from r2act.datasets.folds import key_of
from r2act.schema import BenchmarkRecord


@dataclass(frozen=True)
class Split:
    """One cross-validation round: train on ``train``, predict ``test``."""

    fold: int
    train: list[BenchmarkRecord]
    test: list[BenchmarkRecord]


def splits(records: list[BenchmarkRecord], folds: list[list[str]]) -> Iterator[Split]:
    """One split per non-empty fold (plus the unfolded rest), in fold order.

    ``folds`` lists case ids (a published dataset) or incident ids (records without case
    ids)."""
    by_id = {key_of(r): r for r in records}
    fold_of = {iid: k for k, ids in enumerate(folds) for iid in ids if iid in by_id}
    for k in range(len(folds)):
        test = [r for r in records if fold_of.get(key_of(r)) == k]
        if test:
            train = [r for r in records if fold_of.get(key_of(r), k) != k]
            yield Split(k, train, test)
    rest = [r for r in records if key_of(r) not in fold_of]
    if rest:
        yield Split(len(folds), [r for r in records if key_of(r) in fold_of], rest)


def system_splits(records: list[BenchmarkRecord], folds: list[list[str]]) -> Iterator[Split]:
    """``splits``, each cut by system: a learning baseline trains on the records of the
    system it predicts, never on another system's (whose services and logs are not this
    one's). A one-system dataset's splits are ``splits``' own, unchanged."""
    for split in splits(records, folds):
        for system in sorted({r.metadata.system for r in split.test}):
            yield Split(
                split.fold,
                [r for r in split.train if r.metadata.system == system],
                [r for r in split.test if r.metadata.system == system],
            )
