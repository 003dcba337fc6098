"""The log summary's narrowed scans give what scanning every line once per pattern gives.

``evidence._summarise`` scans the lines with one union pattern and finds latencies by a
literal on its own pass; the reference here scans every line with each pattern in turn,
so a line the union or the literal wrongly left out would change a count, an example or
a mean.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from r2act.quality_gate import evidence
from r2act.quality_gate.evidence import ERROR_LINE, LogSummary, WrittenLogs, summarise_written

LEAK = "(?i)chaos|r2act\\-pod\\-"

LINES = [
    "GET / 200",
    '{"http.resp.took_ms": 13, "msg": "request complete"}',
    '{\\"http.resp.took_ms\\": 7.5, "msg": "ERROR upstream"}',  # escaped quote, an error too
    "TOOK_MS: 99",  # the union is case-insensitive, TOOK_MS is not: no latency
    "took_ms without a value",
    "connection refused by r2act-pod-kill-x",  # error and leak
    "a ChAoS word",  # leak, any case
    "GET      /cart      10     2(20.00%) |      5     1.50    0.25",
    "POST     /checkout   4     0(0.00%) |      3     0.50    0.00",
    "         Aggregated  14     2(14.29%) |      4     2.00    0.25",
    "100%) but no stats cell",  # the fails literal without the cell
    "timed out after 5s",
    "",
    'ünïcode took_ms": 3 ✓',
]


def _plain(lines: list[str], leak: str, count_errors: bool) -> LogSummary:
    """Each pattern over every line: what the summary is defined as."""
    texts = pa.array(lines, pa.string())
    errors = int(pc.sum(pc.match_substring_regex(texts, ERROR_LINE)).as_py() or 0)
    hits = pc.match_substring_regex(texts, leak)
    leaks = int(pc.sum(hits).as_py() or 0)
    example = str(pc.filter(texts, hits)[0].as_py())[:200] if leaks else ""
    return LogSummary(
        records=len(lines),
        error_lines=errors if count_errors else 0,
        services=("svc",),
        leaks=leaks,
        leak_example=example,
        latency_ms=evidence._mean_latency(texts) if count_errors else None,
        user_failures_per_s=evidence._user_failures(texts) if count_errors else None,
    )


def _written(lines: list[str]) -> WrittenLogs:
    return WrittenLogs(pa.array(lines, pa.string()), ("svc",), ("pod-1",))


@pytest.mark.parametrize("count_errors", [True, False])
@pytest.mark.parametrize("start", range(0, len(LINES), 3))
def test_narrowed_scans_equal_one_scan_per_pattern(start: int, count_errors: bool) -> None:
    lines = LINES[start:] + LINES[:start]  # every line first once in a while (first example)
    got = summarise_written(_written(lines), LEAK, count_errors)
    assert got == _plain(lines, LEAK, count_errors)


def test_the_fixture_exercises_every_pattern() -> None:
    # the equality above would be vacuous if no line hit a pattern
    got = summarise_written(_written(LINES), LEAK, count_errors=True)
    assert got.error_lines == 3
    assert got.leaks == 2 and got.leak_example == "connection refused by r2act-pod-kill-x"
    assert got.latency_ms == pytest.approx((13 + 7.5 + 3) / 3)
    assert got.user_failures_per_s == pytest.approx(0.25)


def test_latency_lines_that_match_nothing_else_still_count() -> None:
    # only the literal pass finds these: the union does not include took_ms any more
    lines = ['{"took_ms": 4}', '{"took_ms": 6}', "plain"]
    got = summarise_written(_written(lines), LEAK, count_errors=True)
    assert got.latency_ms == 5.0
    assert got == _plain(lines, LEAK, count_errors=True)
