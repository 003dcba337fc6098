"""Turn a pydantic validation error into a line number and a sentence a user can act on.

``locate`` walks the YAML node tree along the error's location; ``explain`` words the error
with a fix (closest valid key for typos, the valid choices for unknown names). Both are
separate from the loader so that they can be tested without files.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Sequence
from typing import Any, Union

import yaml
from pydantic import BaseModel
from pydantic_core import ErrorDetails

from r2act.campaigns.base import DNS_LABEL, DURATION, MEMORY_SIZE, format_loc
from r2act.campaigns.manifest import Manifest
from r2act.schema import FaultType

_DISCRIMINATORS = ("type", "kind")
_TAGS = {"type": [f.value for f in FaultType], "kind": ["sim", "kubernetes"]}
_WHAT = {"type": "fault type", "kind": "target kind"}
_TYPE_NAMES = {
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "int_parsing": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "string_type": "a string",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}
_FORMS = {
    DNS_LABEL: "use lowercase letters, digits and '-', starting and ending alphanumeric",
    DURATION: "write a duration such as '200ms' or '1.5s'",
    MEMORY_SIZE: "write a size such as '256MB' or '64MiB'",
}
_BOUNDS = {
    "greater_than": "greater than",
    "greater_than_equal": "at least",
    "less_than": "less than",
    "less_than_equal": "at most",
}


def locate(root: Any, loc: Sequence[str | int]) -> tuple[int, str]:
    """Line (1-based) of the node at ``loc`` and the location as users see it.

    Discriminator tags that pydantic inserts into locations (``target.kubernetes.namespace``)
    are dropped; a missing key points at its parent's line."""
    node, line, shown = root, (root.start_mark.line + 1 if root is not None else 1), []
    for part in loc:
        if part == "[key]":
            continue
        if isinstance(node, yaml.MappingNode):
            pair = _find_key(node, part)
            if pair is None:
                if _is_tag(node, part):
                    continue
                shown.append(part)
                break
            shown.append(part)
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                shown.append(part)
                break
            shown.append(part)
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            shown.append(part)
            break
    return line, format_loc(shown)


def error_loc(error: ErrorDetails) -> tuple[str | int, ...]:
    """Where to point for ``error``: an unknown tag points at its ``type:``/``kind:`` key."""
    loc = tuple(error["loc"])
    if error["type"] in {"union_tag_invalid", "union_tag_not_found"}:
        return (*loc, _discriminator(error))
    return loc


def explain(error: ErrorDetails, shown: str) -> str:
    """``field.path: what is wrong (how to fix it)`` for one pydantic error."""
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    last = shown.rsplit(".", 1)[-1]
    if kind == "missing":
        return f"{shown}: missing required key (add '{last}: ...')"
    if kind == "extra_forbidden":
        valid = _valid_keys(tuple(error["loc"])[:-1])
        return f"{shown}: unknown key {last!r} ({_suggest(last, valid)})"
    if kind in {"union_tag_invalid", "union_tag_not_found"}:
        disc = _discriminator(error)
        choices = ", ".join(_TAGS.get(disc, []))
        tag = ctx.get("tag")
        if tag is None:
            return f"{shown}: missing key (set {disc} to one of: {choices})"
        return f"{shown}: unknown {_WHAT.get(disc, disc)} {tag!r} (use one of: {choices})"
    if kind in _TYPE_NAMES:
        return f"{shown}: expected {_TYPE_NAMES[kind]}, got {value!r} (write {_TYPE_NAMES[kind]})"
    if kind in _BOUNDS:
        limit = next(iter(ctx.values()), "?")
        fix = "use a positive number of seconds" if last.endswith("_s") else "change the value"
        return f"{shown}: must be {_BOUNDS[kind]} {limit}, got {value!r} ({fix})"
    if kind in {"enum", "literal_error"}:
        return f"{shown}: {value!r} is not allowed (use {ctx.get('expected', 'a listed value')})"
    if kind == "too_short":
        return f"{shown}: must not be empty (list at least {ctx.get('min_length', 1)} item)"
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern"))
        return f"{shown}: {value!r} has the wrong form ({_FORMS.get(pattern, 'match ' + pattern)})"
    if kind == "value_error":
        return f"{shown}: {ctx.get('error', error['msg'])}"
    return f"{shown}: {error['msg']} (fix the value)"


def _find_key(node: yaml.MappingNode, name: str | int) -> tuple[Any, Any] | None:
    for key, value in node.value:
        if str(key.value) == str(name):
            return key, value
    return None


def _is_tag(node: yaml.MappingNode, part: str | int) -> bool:
    for disc in _DISCRIMINATORS:
        pair = _find_key(node, disc)
        if pair is not None and str(pair[1].value) == str(part):
            return True
    return False


def _discriminator(error: ErrorDetails) -> str:
    disc = str((error.get("ctx") or {}).get("discriminator", "type")).strip("'\"")
    return disc if disc in _DISCRIMINATORS else "type"


def _suggest(name: str, valid: list[str]) -> str:
    if not valid:
        return "remove it"
    close = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
    listing = ", ".join(valid)
    if close:
        return f"did you mean {close[0]!r}? valid keys: {listing}"
    return f"valid keys: {listing}"


def _valid_keys(loc: tuple[str | int, ...]) -> list[str]:
    """Field names of the model found at ``loc``, walking the Manifest's annotations."""
    candidates: list[Any] = [Manifest]
    for part in loc:
        candidates = [c for t in candidates for c in _step(t, part)]
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return list(candidate.model_fields)
    return []


def _step(annotation: Any, part: str | int) -> list[Any]:
    """Types reachable from ``annotation`` by one location step ``part``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _step(typing.get_args(annotation)[0], part)
    if origin in (Union, types.UnionType):
        members = list(typing.get_args(annotation))
        tagged = [m for m in members if _tag_of(m) == part]
        return tagged or [s for m in members for s in _step(m, part)]
    if origin is list and isinstance(part, int):
        return [typing.get_args(annotation)[0]]
    if origin is dict and isinstance(part, str):
        return [typing.get_args(annotation)[1]]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = annotation.model_fields.get(str(part))
        return [] if field is None else [field.annotation]
    return []


def _tag_of(member: Any) -> str | None:
    if isinstance(member, type) and issubclass(member, BaseModel):
        for disc in _DISCRIMINATORS:
            field = member.model_fields.get(disc)
            if field is not None and typing.get_origin(field.annotation) is typing.Literal:
                return str(typing.get_args(field.annotation)[0])
    return None
