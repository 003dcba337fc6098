"""Fewer garbage-collector passes while a campaign generates and writes telemetry.

Collection allocates millions of short-lived tuples (one per log line, one per metric
point). With CPython's default thresholds every 700 of them start a young-generation pass,
and every few of those a full pass walks every object alive, the imported modules and the
plan included: measured on 30 incidents of ``r2act-302``, 8 % of the collector's CPU went
to the collector of garbage. Freezing what exists when the campaign starts (it lives until
the end anyway) takes it out of every full pass, and a higher young threshold makes the
passes rarer; nothing the campaign writes depends on when memory is reclaimed. Both are
restored on the way out, so a caller's own settings are left as they were.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 10_000
"""Allocations (minus deallocations) of tracked objects between young passes (default 700):
about ten log batches, a few megabytes at most."""


@contextmanager
def fewer_gc_passes() -> Iterator[None]:
    """Freeze the objects alive now and raise the young threshold, for the ``with`` body."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
