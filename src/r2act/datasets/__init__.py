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

if TYPE_CHECKING:
    from r2act.datasets import ids
    from r2act.datasets.build import DATASET_DIR, BuildResult, build_dataset
    from r2act.datasets.composition import Composition, compose
    from r2act.datasets.folds import Folds, make_folds
    from r2act.datasets.layout import VIEWS
    from r2act.datasets.loading import Dataset, key, load, load_records, read_table
    from r2act.datasets.validation import validate

__getattr__ = exports(
    __name__,
    {
        "ids": "r2act.datasets.ids",
        **dict.fromkeys(("DATASET_DIR", "BuildResult", "build_dataset"), "r2act.datasets.build"),
        **dict.fromkeys(("Composition", "compose"), "r2act.datasets.composition"),
        **dict.fromkeys(("Folds", "make_folds"), "r2act.datasets.folds"),
        "VIEWS": "r2act.datasets.layout",
        **dict.fromkeys(
            ("Dataset", "key", "load", "load_records", "read_table"), "r2act.datasets.loading"
        ),
        "validate": "r2act.datasets.validation",
    },
)
"""Names are imported on first use: a reader of one case (``datasets.cases``) does not pay
for the builder, nor for the validator's readers, card and figures, and a process that
only checks a dataset's digests (the MCP server's start) not even for Arrow. The modules
behind ``load`` and ``validate`` are named ``loading`` and ``validation``: a submodule of
the function's own name would shadow it once imported."""

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
