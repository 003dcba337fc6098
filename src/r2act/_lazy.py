"""Package attributes imported on first use (PEP 562), for packages whose ``__init__``
re-exports names from heavy modules.

A package such as ``r2act.datasets`` offers its public names at the top (``from
r2act.datasets import load``) while a process that needs one small module of it (the MCP
server reading one case) must not import the rest (the builder, the quality gate,
Croissant). The package keeps its names under ``if TYPE_CHECKING:`` for the type checker
and hands :func:`exports` a table of where each lives; the returned function is the
package's module ``__getattr__``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``name`` is imported from ``homes[name]``
    (a submodule of the same name is returned as the module itself) and kept in the
    package's namespace, so the next lookup is an ordinary attribute."""

    def attribute(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(home)
        value = module if home == f"{package}.{name}" else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    return attribute
