"""Dataset publication: build, card, folds, Croissant metadata, validation and load().

Reads audit output (and the raw observations of main incidents); never imports the
cluster package. ``build_dataset`` writes a directory a maintainer can publish as is,
``validate`` lists every reason not to trust one, ``load`` reads one view of it (keyed by
opaque case ids), ``load_records`` reads the answers, and ``cases.CaseReader`` reads a
view one case at a time, lazily (the one reader agents and baselines share). ``ids``
holds the case-id scheme and the resolver the scorers use (a prediction may name a case
id or an incident id).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from r2act._lazy import exports

# ``load`` and ``validate`` are also submodules: importing ``r2act.datasets.load`` anywhere
# binds the package's ``load`` to the module, which a lookup on first use could not undo,
# so these two functions are bound here, after their modules, as an eager package does.
from r2act.datasets.load import Dataset, key, load, load_records, read_table
from r2act.datasets.validate import validate

if TYPE_CHECKING:
    from r2act.datasets import ids
    from r2act.datasets.build import DATASET_DIR, BuildResult, build_dataset
    from r2act.datasets.composition import Composition, compose
    from r2act.datasets.folds import Folds, make_folds
    from r2act.datasets.layout import VIEWS

__getattr__ = exports(
    __name__,
    {
        "ids": "r2act.datasets.ids",
        **dict.fromkeys(("DATASET_DIR", "BuildResult", "build_dataset"), "r2act.datasets.build"),
        **dict.fromkeys(("Composition", "compose"), "r2act.datasets.composition"),
        **dict.fromkeys(("Folds", "make_folds"), "r2act.datasets.folds"),
        "VIEWS": "r2act.datasets.layout",
    },
)
"""Names are imported on first use: a reader of one case (``datasets.cases``, the MCP
server's start) does not pay for the builder and its imports."""

__all__ = [
    "DATASET_DIR",
    "VIEWS",
    "BuildResult",
    "Composition",
    "Dataset",
    "Folds",
    "build_dataset",
    "compose",
    "ids",
    "key",
    "load",
    "load_records",
    "make_folds",
    "read_table",
    "validate",
]
