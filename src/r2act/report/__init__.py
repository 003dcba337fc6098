"""``r2act report``: the static results site and incident browser.

Reads files only (a dataset, prediction files, replay outputs, agent trajectories and the
audit); never imports the cluster package. ``find_inputs`` works out what a run or dataset
directory holds, ``build_report`` writes the site (see :mod:`r2act.report.site` for its
layout and how untrusted text is kept inert), ``serve`` previews it on loopback.
"""

from r2act.report.inputs import ReportInputs, find_inputs
from r2act.report.serve import serve
from r2act.report.site import BuildResult, build_report

__all__ = ["BuildResult", "ReportInputs", "build_report", "find_inputs", "serve"]
