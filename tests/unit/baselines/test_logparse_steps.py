"""The handler steps a log reader blames come from the system (``System.error_steps``).

Issue 20: which phrase a handler wraps a failed call with, and which service that step
calls, is a fact of one application's code, so ``baselines/logparse.py`` reads it from the
system of the topology it is given instead of spelling any service itself.
"""

from __future__ import annotations

import dataclasses
import re

import pandas as pd
import pytest

from r2act.baselines.logparse import blame
from r2act.systems import INSTALLED, ONLINE_BOUTIQUE, get_system
from r2act.systems.steps import ErrorStep

UNAVAILABLE = "rpc error: code = Unavailable desc = connection refused"
TOY = ONLINE_BOUTIQUE.model_copy(update={"system": "toyshop"})


def test_a_systems_own_steps_name_the_failed_callee(monkeypatch: pytest.MonkeyPatch) -> None:
    steps = (ErrorStep(re.compile(r"could not fetch basket"), "cartservice", "toy handler"),)
    toy = dataclasses.replace(
        get_system(ONLINE_BOUTIQUE.system), name="toyshop", topology=TOY, error_steps=steps
    )
    monkeypatch.setitem(INSTALLED, "toyshop", toy)
    line = pd.Series([f"could not fetch basket: {UNAVAILABLE}"])
    assert blame(line, TOY) == {("refused", "cartservice"): 1.0}
    # Online Boutique's handlers never write that phrase: no step, no address, no vote
    assert blame(line, ONLINE_BOUTIQUE) == {}


def test_online_boutiques_innermost_step_wins() -> None:
    # the frontend's wrap of the cart call holds cart's own error about its Redis store
    line = (
        "could not retrieve cart: rpc error: code = FailedPrecondition desc = Can't access "
        "cart storage. StackExchange.Redis.RedisConnectionException: UnableToConnect"
    )
    assert blame(pd.Series([line]), ONLINE_BOUTIQUE) == {("refused", "redis-cart"): 1.0}
    outer = f"could not retrieve cart: {UNAVAILABLE}"
    assert blame(pd.Series([outer]), ONLINE_BOUTIQUE) == {("refused", "cartservice"): 1.0}
    steps = get_system(ONLINE_BOUTIQUE.system).error_steps
    assert {s.service for s in steps} <= set(ONLINE_BOUTIQUE.names)
    assert all(s.source for s in steps)
