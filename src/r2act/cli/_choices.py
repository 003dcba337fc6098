"""Names and defaults that help texts need, kept here so ``r2act --help`` stays cheap.

The stage packages that own these values import pandas, pyarrow or numpy; the CLI imports
them only inside a command. ``tests/unit/cli/test_cli_startup.py`` checks that every
constant below equals its source of truth.
"""

from __future__ import annotations

from typing import Final

BASELINE_NAMES: Final[tuple[str, ...]] = (
    "random",
    "majority",
    "keyword",
    "rule",
    "nb",
    "tracerank",
    "gold-mapper",
)
"""``r2act.baselines.BASELINES``, in its order."""

VIEW_NAMES: Final[tuple[str, ...]] = ("logs", "logs+events", "full", "full+traces")
"""``r2act.datasets.VIEWS``, in its order."""

DEFAULT_SEED: Final = 0
"""``r2act.evaluation.DEFAULT_SEED``."""

DEFAULT_REPLICATES: Final = 10_000
"""``r2act.evaluation.DEFAULT_REPLICATES``."""
