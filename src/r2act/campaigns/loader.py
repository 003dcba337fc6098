"""Read a manifest file into a ``Manifest``, or fail with one line that says where and why.

The YAML is composed into a node tree first so that every error can name the line of the
offending key or value: ``FILE:LINE: field.path: what is wrong (how to fix it)``. A user
fixing a 100-line campaign should never have to bisect it.

The loader is bounded: a manifest is a small hand-written file, so more than a few aliases
(``*name``) or nesting deeper than any real manifest needs is refused while composing,
before an alias bomb can expand or deep nesting can exhaust the stack. Every message is
cut to one short line.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from r2act.campaigns.base import ManifestFieldError
from r2act.campaigns.diagnostics import error_loc, explain, locate
from r2act.campaigns.manifest import Manifest
from r2act.errors import ManifestError

MAX_ALIASES = 16
"""Aliases a manifest may use (real ones use none; a bomb needs dozens)."""
MAX_DEPTH = 32
"""Nesting depth a manifest may use (real ones need 5)."""
MAX_MESSAGE = 300
"""Characters of a value shown in an error message."""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with an alias budget and a nesting limit."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        """Count aliases and depth while composing; refuse beyond the bounds."""
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"more than {MAX_ALIASES} aliases (*name); write the values out",
                    self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                )
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"nested deeper than {MAX_DEPTH} levels; a manifest needs far fewer",
                    self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _short(text: str) -> str:
    """One line of at most a few hundred characters."""
    line = " ".join(text.split())
    return line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 3] + "..."


def load_manifest(path: Path | str) -> Manifest:
    """Parse and validate the campaign manifest at ``path``.

    Raises ``ManifestError`` with a one-line ``FILE:LINE: field: problem (fix)`` message.
    """
    path = Path(path)
    text = _read(path)
    root, data = _parse(path, text)
    if not isinstance(data, dict):
        line = 1 if root is None else root.start_mark.line + 1
        raise ManifestError(
            f"{path}:{line}: (manifest): expected a mapping of manifest keys "
            "(start with 'name:', 'system:', 'target:', 'services:', 'faults:')"
        )
    try:
        return Manifest.model_validate(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        line, shown = locate(root, error_loc(first))
        raise ManifestError(f"{path}:{line}: {_short(explain(first, shown))}") from None
    except ManifestFieldError as error:
        line, shown = locate(root, error.loc)
        raise ManifestError(
            f"{path}:{line}: {_short(f'{shown}: {error.problem} ({error.fix})')}"
        ) from None


def manifest_sha256(path: Path | str) -> str:
    """SHA-256 of the manifest file's bytes; records carry it to trace them to their campaign."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ManifestError(f"{path}:0: (file): no such file (check the path)") from None
    except IsADirectoryError:
        raise ManifestError(f"{path}:0: (file): is a directory (pass a .yaml file)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ManifestError(f"{path}:0: (file): cannot read it: {error} (check it)") from None


def _parse(path: Path, text: str) -> tuple[Any, Any]:
    """The YAML node tree (with line marks) and the data it holds; duplicate keys rejected."""
    try:
        root = yaml.compose(text, Loader=_BoundedLoader)
        data = yaml.load(text, Loader=_BoundedLoader) if root is not None else None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = _short(error.problem or error.context or "malformed YAML")
        raise ManifestError(f"{path}:{line}: (yaml): {problem} (fix the YAML syntax)") from None
    except yaml.YAMLError as error:
        raise ManifestError(
            f"{path}:1: (yaml): {_short(str(error))} (fix the YAML syntax)"
        ) from None
    except RecursionError:
        raise ManifestError(
            f"{path}:1: (yaml): nested too deeply to read (flatten the manifest)"
        ) from None
    except (ValueError, TypeError) as error:  # a scalar YAML reads as an impossible value
        raise ManifestError(
            f"{path}:1: (yaml): cannot read a value: {error} (quote it to keep it a string)"
        ) from None
    _reject_duplicate_keys(path, root)
    return root, data


def _reject_duplicate_keys(path: Path, node: Any) -> None:
    """YAML silently keeps the last of two equal keys; a manifest should not."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            if name in seen:
                raise ManifestError(
                    f"{path}:{key.start_mark.line + 1}: {name}: key appears twice in one mapping "
                    "(keep one)"
                )
            seen.add(name)
            _reject_duplicate_keys(path, value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _reject_duplicate_keys(path, item)
