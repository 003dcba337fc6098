"""Small pure helpers the pages share: names safe as file names, numbers, plans as text."""

from __future__ import annotations

import re
from collections.abc import Mapping

from r2act.evaluation.metrics import Estimate

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def slug(name: str, taken: set[str] | None = None) -> str:
    """``name`` as a file name (only letters, digits, '.', '_', '-'), unique within ``taken``.

    Names come from datasets and prediction files, so they are untrusted: a '/' or '..' must
    never become a path. The result is added to ``taken``.
    """
    base = _UNSAFE.sub("_", name).strip(".") or "_"
    base = base[:120]
    out, n = base, 1
    while taken is not None and out in taken:
        n += 1
        out = f"{base}-{n}"
    if taken is not None:
        taken.add(out)
    return out


def value(estimate: Estimate | None) -> str:
    """A point estimate to three decimals, or 'n/a' when the metric is undefined or missing.

    Never 0 for a missing number: a blank cell read as zero is exactly the error that makes
    a method look worse (or a floor look better) than it is.
    """
    if estimate is None or estimate.value is None:
        return "n/a"
    return f"{estimate.value:.3f}"


def interval(estimate: Estimate | None) -> str:
    """'[0.427, 0.540]' (with '†' for a score interval), or '' when there is none."""
    if estimate is None or estimate.ci_low is None or estimate.ci_high is None:
        return ""
    mark = "" if estimate.interval == "bootstrap" else "†"
    return f"[{estimate.ci_low:.3f}, {estimate.ci_high:.3f}]{mark}"


def sort_key(estimate: Estimate | None) -> str:
    """The value the sortable tables sort by ('' sorts missing values last)."""
    if estimate is None or estimate.value is None:
        return ""
    return f"{estimate.value:.6f}"


def plan_text(plan: Mapping[str, object] | None) -> str:
    """``restart_service(target=cartservice)``; 'no plan' for None."""
    if plan is None:
        return "no plan"
    operation = str(plan.get("operation", "?"))
    fields = ", ".join(f"{k}={v}" for k, v in plan.items() if k != "operation" and v is not None)
    return f"{operation}({fields})"


def seconds(value: float | None) -> str:
    """'12.3 s', or 'n/a'."""
    return "n/a" if value is None else f"{value:.1f} s"
