"""What the tool catalogue and the environment behind it share: the shape of an answer, the
error a question gets and the largest row limit a question may ask for.

They live apart from :mod:`r2act.agents.env` so that the catalogue (argument models and
their schemas, which an MCP server advertises before its first answer) is importable
without the environment's Arrow, NumPy and RE2 machinery.
"""

from __future__ import annotations

from typing import Any

MAX_LIMIT = 200
"""The most lines, events or spans one question returns."""

Answer = dict[str, Any]


class ToolError(ValueError):
    """A question the environment cannot answer as asked; the message says how to ask."""
