"""The load generator's console stats table (Locust 2.43, as Online Boutique ships it).

Headless Locust prints its stats table every 2 s (``stats_printer``, ``locust/stats.py``
L896-901): a header, one row per request entry sorted by (name, method), and an
``Aggregated`` row for all of them (L259). A row is ``StatsEntry.to_string`` (L562-579):
type (the method, empty on the Aggregated row), name, cumulative ``# reqs``,
cumulative ``# fails(pct%)`` | average, min, max and median response time | the current
req/s and failures/s, both averaged over about the last ten seconds (L436-455).

These are the only user-side request counts a method can read (Online Boutique exports no
request metrics), so the quality gate, the request series and the baselines read them, each
through the patterns here (pure text; RE2 and Python ``re`` accept both).
"""

from __future__ import annotations

from typing import Final

_COUNTS: Final = (
    r"\s+(?P<reqs>\d+)\s+(?P<fails>\d+)\([^)]*\)\s*\|"
    r"\s*(?P<avg>\d+)\s+(?P<min>\d+)\s+(?P<max>\d+)\s+(?P<med>\d+)\s*\|"
    r"\s*(?P<rps>[0-9.]+)\s+(?P<fps>[0-9.]+)\s*$"
)

STATS_ROW: Final = r"^(?P<method>[A-Z]+)?\s+(?P<name>\S+)" + _COUNTS
"""One stats row: ``method`` (absent on the Aggregated row), ``name``, the cumulative
``reqs`` and ``fails``, the response times, and the current ``rps`` and ``fps``."""

AGGREGATED: Final = "Aggregated"
"""The name of the row that sums every entry (``locust/stats.py`` L259)."""

FAILS_CELL: Final = r"\d+\([0-9.]+%\) +\|"
"""The ``# fails(pct%) |`` cell only stats rows have: a cheap first filter for them."""

REQUEST_ROW_START: Final = r"^[A-Z]+ "
"""How a request entry's row starts (its method); the Aggregated row starts blank."""

AGGREGATED_ROW_START: Final = r"^ +Aggregated "
"""How the Aggregated row starts (an empty type column, then its name)."""

LAST_RATE: Final = r"(?P<fps>[0-9.]+)\s*$"
"""The row's last column, the current failures/s (``STATS_ROW``'s ``fps``)."""
