"""Supervised naive Bayes over log and event tokens, trained and predicted out-of-fold.

Features are the tokens that *appeared or rose* when the fault hit: for each token, its
count in the during window minus its pre-window count scaled to the during length (never
below zero). Only error lines are tokenised (access lines carry no words a fault changes,
and skipping them keeps a paper-scale pass quick), plus every event's reason and message
and a "reason@app" token that ties an event to its deployment. Tokens with digits (ids,
addresses, timestamps) are dropped; names of services survive, which is what lets the
model learn where a symptom points.

Two multinomial naive Bayes models (service, fault type) are fit per fold on the other
folds of ``folds.json`` and predict the held-out fold; the RCA goes through the mapper.
scikit-learn is an optional extra (``pip install 'r2act[baselines]'``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

from r2act.baselines.base import Baseline, RunContext, abstain, mapped, policy_of
from r2act.baselines.folds import system_splits
from r2act.baselines.reader import Case
from r2act.baselines.signals import app_of, error_lines, span_s, window
from r2act.datasets.folds import key_of
from r2act.errors import R2actError
from r2act.schema import FaultType, Prediction

_WORD = re.compile(r"[a-z0-9_.-]+")
_DIGIT = re.compile(r"[0-9]")
ALPHA = 0.1
"""Additive smoothing; small, because the informative tokens are rare and specific."""


def _tokens(lines: pd.Series) -> Counter[str]:
    out: Counter[str] = Counter()
    for text in lines.astype(str):
        words = (w.strip(".-_") for w in _WORD.findall(text.lower()))
        out.update(w for w in words if 1 < len(w) <= 40 and not _DIGIT.search(w))
    return out


def _event_tokens(case: Case, phase: str) -> Counter[str]:
    rows = window(case.events, phase)
    out: Counter[str] = Counter()
    if rows.empty:
        return out
    for reason, message, name in zip(
        rows["reason"], rows["message"], rows["object_name"], strict=True
    ):
        app = app_of(str(name), case.topology) or "?"
        out.update([f"reason={reason}", f"{reason}@{app}"])
        out.update(_tokens(pd.Series([message])))
    return out


def features(case: Case) -> dict[str, float]:
    """Token rises of one incident: during counts minus length-scaled pre counts."""
    scale = span_s(case.logs, "during") / span_s(case.logs, "pre")
    during = _tokens(error_lines(case.logs, "during")["line"]) + _event_tokens(case, "during")
    before = _tokens(error_lines(case.logs, "pre")["line"]) + _event_tokens(case, "pre")
    rise: dict[str, float] = {}
    for token, n in during.items():
        value = n - scale * before.get(token, 0)
        if value > 0:
            rise[token] = value
    return rise


def _sklearn() -> tuple[Any, Any]:
    try:
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.naive_bayes import MultinomialNB
    except ImportError as exc:
        raise R2actError(
            "the nb baseline needs scikit-learn: pip install 'r2act[baselines]'"
        ) from exc
    return DictVectorizer, MultinomialNB


def _fit(ids: list[str], feats: Mapping[str, Mapping[str, float]], labels: list[str]) -> Any:
    """A (vectorizer, model) pair trained on ``ids`` only."""
    vectorizer_cls, model_cls = _sklearn()
    vectorizer = vectorizer_cls()
    x = vectorizer.fit_transform([dict(feats[i]) or {"<none>": 1.0} for i in ids])
    return vectorizer, model_cls(alpha=ALPHA).fit(x, labels)


def _predict(fitted: Any, ids: list[str], feats: Mapping[str, Mapping[str, float]]) -> list[str]:
    vectorizer, model = fitted
    x = vectorizer.transform([dict(feats[i]) or {"<none>": 1.0} for i in ids])
    return [str(v) for v in model.predict(x)]


def _nb(ctx: RunContext) -> Iterator[Prediction]:
    _sklearn()  # fail before the long feature pass, not after it
    reader = ctx.reader
    feats = {case.case_id: features(case) for case in reader.cases()}
    answers: dict[str, Prediction] = {}
    for split in system_splits(reader.records, reader.folds):
        train_ids = [key_of(r) for r in split.train]
        if not train_ids:
            answers.update((key_of(r), abstain(key_of(r), ctx.method)) for r in split.test)
            continue
        test_ids = [key_of(r) for r in split.test]
        services = _fit(train_ids, feats, [r.labels.service for r in split.train])
        faults = _fit(train_ids, feats, [r.labels.fault_type.value for r in split.train])
        predicted = zip(
            _predict(services, test_ids, feats), _predict(faults, test_ids, feats), strict=True
        )
        for record, (service, fault) in zip(split.test, predicted, strict=True):
            iid = key_of(record)
            answers[iid] = mapped(
                iid,
                record.action_space,
                reader.topology(record),
                service,
                FaultType(fault),
                method=ctx.method,
                policy=policy_of(record),
                evidence={
                    "fold": split.fold,
                    "trained_on": len(train_ids),
                    "tokens": len(feats[iid]),
                },
            )
    for record in reader.records:
        yield answers[key_of(record)]


NB = Baseline(
    "nb",
    "Naive Bayes over during-window log/event token rises, out-of-fold (folds.json).",
    _nb,
    trained=True,
)
