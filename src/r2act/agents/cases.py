"""The one boundary between a published dataset and what an agent may see of its cases.

Everything in :mod:`r2act.agents` reaches a dataset through :class:`CaseSource`, the
dataset's reader of method-visible case tables (:class:`r2act.datasets.cases.CaseReader`,
shared with the baselines): it opens ``cases.parquet`` and the view's
``observations/*.parquet``, all keyed by opaque case ids, lazily and one case at a time;
it never opens ``answers/``. A :data:`CaseInputs` (a :class:`~r2act.datasets.cases.Case`)
holds the case id the prediction carries, the system's topology, the action space and the
observations of the chosen view, nothing else.
"""

from __future__ import annotations

from r2act.datasets.cases import Case, CaseReader, CaseRows

CaseInputs = Case
"""What a method may see of one case (the view decides which tables are present)."""

__all__ = ["CaseInputs", "CaseRows", "CaseSource"]


class CaseSource(CaseReader):
    """The cases of one dataset view, by case id, read from method-visible tables only."""

    def inputs(self, case_id: str) -> CaseInputs:
        """The method-visible inputs of one case; KeyError for an unknown id."""
        return self.case(case_id)
