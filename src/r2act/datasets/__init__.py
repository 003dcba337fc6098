"""Dataset publication: build, card, folds, Croissant metadata, validation and load().

Reads audit output (and the raw observations of main incidents); never imports the
cluster package. ``build_dataset`` writes a directory a maintainer can publish as is,
``validate`` lists every reason not to trust one, ``load`` reads one view of it (keyed by
opaque case ids), ``load_records`` reads the answers, and ``cases.CaseReader`` reads a
view one case at a time, lazily (the one reader agents and baselines share). ``ids``
holds the case-id scheme and the resolver the scorers use (a prediction may name a case
id or an incident id).
"""

from r2act.datasets import ids
from r2act.datasets.build import DATASET_DIR, BuildResult, build_dataset
from r2act.datasets.composition import Composition, compose
from r2act.datasets.folds import Folds, make_folds
from r2act.datasets.layout import VIEWS
from r2act.datasets.load import Dataset, key, load, load_records, read_table
from r2act.datasets.validate import validate

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
