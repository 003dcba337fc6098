"""Text templates with their upstream sources: the type every system's texts use.

A method trained on simulated telemetry learns its strings, so no string may be invented:
each message, error fragment, banner and event the simulator prints is a :class:`Text`
naming the file (under ``shared/reference``) and line it comes from. ``{}`` marks a value
the simulator fills in; ``{err}`` marks a nested error text that must itself be one of the
templates. Texts of software that is not in the reference folder carry an ``ext:`` source
(the repository path they come from), listed in ``docs/simulator.md`` ("Texts and their
sources"), which the conformance test checks them against.

An application's own texts live in its package (``systems/<name>/texts.py``, the
``System.texts`` field); the runtimes' that a system's renderers compose and the engine
prints too (grpc-go, Go's net package) in ``systems/runtime_texts.py``; the engine's own
(Kubernetes, Chaos Mesh, Locust, Redis) in ``cluster/sim/texts.py``, which joins them all
into one table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

EXT = "ext:"
"""Prefix of a source outside ``shared/reference`` (checked against docs/simulator.md)."""


@dataclass(frozen=True)
class Text:
    """One template: fixed text with ``{}`` values and ``{err}`` nested error texts."""

    key: str
    text: str
    source: str
    """Path under shared/reference (``online-boutique/src-v0.10.6/frontend/handlers.go``),
    or ``ext:<repository>:<path>`` for software that is not in the reference folder."""
    line: int
    """The line of ``source`` that holds the text (1-based); 0 for ``ext:`` sources."""
    pattern: str | None = field(default=None)
    """A regular expression the rendered text matches, for shapes that are not one string
    (the Locust stats rows); by default it is derived from ``text``."""
    wrap: bool = False
    """Rendered as ``<text>: <err>``: a Go ``errors.Wrap`` (github.com/pkg/errors joins the
    message and the cause with ``": "``), so the cited line holds only the message."""

    @cached_property
    def fmt(self) -> str:
        """A ``%`` format of the text: each hole becomes ``%s``, literal ``%`` doubled."""
        return self.text.replace("%", "%%").replace("{err}", "%s").replace("{}", "%s")

    def __call__(self, *values: object) -> str:
        """The text with its holes filled, in order (a wrap takes its cause last)."""
        if self.wrap:
            *own, cause = values
            return f"{self.fmt % tuple(own) if own else self.text}: {cause}"
        return self.fmt % values if values else self.text

    def fixed(self) -> list[str]:
        """The fixed fragments between holes (what must occur in the cited source)."""
        return [p for p in re.split(r"\{err\}|\{\}", self.text) if p.strip()]

    @property
    def external(self) -> bool:
        return self.source.startswith(EXT)


def text(key: str, text: str, source: str, line: int = 0, pattern: str | None = None) -> Text:
    return Text(key, text, source, line, pattern)


def wrap(key: str, text: str, source: str, line: int) -> Text:
    return Text(key, text, source, line, None, wrap=True)
