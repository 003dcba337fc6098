"""Error steps: the phrase a handler wraps a failed call's error with, and the callee it names.

A gRPC error names at most the address a client dialled, but the handlers of many
applications wrap it with the step that failed ("could not retrieve cart: ..."), and that
step says which service the call went to. Which phrases a system's handlers write is a fact
of that system's code, so each system lists its own (``System.error_steps``); the rule-based
baseline (``r2act.baselines.logparse``) reads them to blame the callee of the innermost step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorStep:
    """One step a handler names when it wraps an error, and the service that step calls."""

    pattern: re.Pattern[str]
    """The wrap's phrase (one pattern may cover several spellings of the same step)."""
    service: str
    """The service the step calls (the one that failed when the step is innermost)."""
    source: str = ""
    """Where the phrases are in the system's upstream sources."""
