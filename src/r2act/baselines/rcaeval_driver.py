"""Run one of RCAEval's methods, unchanged, over an r2act RCAEval export (a standalone script).

``r2act baseline rcaeval`` runs this file with the interpreter of an RCAEval environment
(``--python``), since RCAEval pins its own stack (Python 3.12 or 3.8, 2023-era packages)
that cannot share r2act's. It imports nothing from r2act, only the standard library,
numpy, pandas and RCAEval, and keeps to syntax Python 3.8 reads.

For each case of ``EXPORT/cases.csv`` it prepares the data the way RCAEval's own runner
(``main.py``'s ``process``) does: drop ``_latency-50`` columns, infinities to NaN,
forward-fill, zeros for what is still missing, the last ``length*30`` rows before the
injection time and the first ``length*30`` from it, ``_latency-90`` renamed ``_latency``.
The SLI is ``frontend_latency`` (Online Boutique's, as RCAEval chooses it) when the case
has that column; unlike RCAEval's runner the driver never reads the labelled service to
pick it, so nothing of the answer reaches the method. It then calls the method with
RCAEval's arguments and writes one JSON line per case to ``--out``::

    {"folder": ..., "case_id": ..., "ranks": [...], "seconds": ..., "error": null}

Randomised methods (random walks) get ``numpy.random.seed(SEED)`` before each case, so a
rerun gives the same ranks. A method that raises gives the case an ``error`` and no
ranks; so does one that RCAEval's ``@rca`` wrapper caught, which then hands back the
*unranked column order* and says so on stderr (``... returning the unranked column
order``): that order is no answer. The run goes on. Progress goes to stderr, one line per
case.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib
import io
import json
import pkgutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

# Where RCAEval keeps a method whose module is not named after it (RCAEval.e2e's own
# table of modules, for the methods its runner offers).
MODULES = {
    "nsigma": "RCAEval.e2e",
    "e_diagnosis": "RCAEval.e2e",
    "dummy": "RCAEval.e2e",
    "mmbaro": "RCAEval.e2e.baro",
    "mmnsigma": "RCAEval.e2e.baro",
    "mmcirca": "RCAEval.e2e.circa",
    "micro_diag": "RCAEval.e2e.lingam_pagerank",
    "cmlp_pagerank": "RCAEval.e2e.pc_pagerank",
    "ntlr_pagerank": "RCAEval.e2e.pc_pagerank",
    "fci_randomwalk": "RCAEval.e2e.pc_randomwalk",
    "granger_randomwalk": "RCAEval.e2e.pc_randomwalk",
    "lingam_randomwalk": "RCAEval.e2e.pc_randomwalk",
    "ntlr_randomwalk": "RCAEval.e2e.pc_randomwalk",
}
SLI = "frontend_latency"
FALLBACK = "returning the unranked column order"
"""What RCAEval's ``@rca`` wrapper prints when it swallowed a method's exception."""


def method_function(name: str) -> Callable[..., Any]:
    """RCAEval's function ``name`` (``RCAEval.e2e.<name>`` or the module that holds it)."""
    candidates = [MODULES.get(name, ""), f"RCAEval.e2e.{name}", "RCAEval.e2e"]
    errors = []
    for module_name in [c for c in candidates if c]:
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            errors.append(f"{module_name}: {error}")
            continue
        function = getattr(module, name, None)
        if callable(function):
            return function  # type: ignore[no-any-return]
    known = _known_methods()
    hint = f" (RCAEval's methods here: {', '.join(known)})" if known else ""
    detail = f"; {'; '.join(errors)}" if errors else ""
    raise SystemExit(f"rcaeval driver: no RCAEval method {name!r}{hint}{detail}")


def _known_methods() -> list[str]:
    try:
        e2e: ModuleType = importlib.import_module("RCAEval.e2e")
    except ImportError:
        return []
    names = [m.name for m in pkgutil.iter_modules(e2e.__path__)]
    return sorted({*names, *MODULES} - {"run"})


def prepare(data: Any, inject_time: int, length: int) -> Any:
    """The frame RCAEval's runner hands a method, from a case's ``data.csv``."""
    import numpy as np
    import pandas as pd

    data = data.loc[:, ~data.columns.str.endswith("_latency-50")]
    data = data.replace([np.inf, -np.inf], np.nan).ffill().fillna(0)
    rows = length * 60 // 2
    normal = data[data["time"] < inject_time].tail(rows)
    anomal = data[data["time"] >= inject_time].head(rows)
    data = pd.concat([normal, anomal], ignore_index=True)
    renamed = {c: c.replace("_latency-90", "_latency") for c in data.columns}
    return data.rename(columns=renamed)


def run_case(
    function: Callable[..., Any], folder: Path, dataset: str, length: int, seed: int
) -> list[str]:
    """The ranks one method gives one case."""
    import numpy as np
    import pandas as pd

    inject_time = int((folder / "inject_time.txt").read_text().split()[0])
    data = prepare(pd.read_csv(folder / "data.csv"), inject_time, length)
    sli = SLI if SLI in data.columns else None
    np.random.seed(seed)
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        out = function(
            data,
            inject_time,
            dataset=dataset,
            anomalies=None,
            dk_select_useful=False,
            sli=sli,
            verbose=False,
            n_iter=len(data.columns) - 1,
            args=argparse.Namespace(root_path=str(folder), data_path=str(folder / "data.csv")),
        )
    fallback = [line for line in said.getvalue().splitlines() if FALLBACK in line]
    if fallback:
        raise RuntimeError(fallback[-1].strip())
    ranks = out.get("ranks") if isinstance(out, dict) else None
    if not isinstance(ranks, list):
        raise ValueError(f"the method returned no 'ranks' list ({type(out).__name__})")
    return [str(r) for r in ranks]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", required=True, help="RCAEval method, e.g. baro.")
    parser.add_argument("--export", required=True, type=Path, help="r2act RCAEval export.")
    parser.add_argument("--out", required=True, type=Path, help="Ranks, JSON Lines.")
    parser.add_argument("--length", type=int, default=20, help="RCAEval's --length (min).")
    parser.add_argument("--dataset", default="online-boutique", help="RCAEval dataset name.")
    parser.add_argument("--seed", type=int, default=0, help="numpy seed before each case.")
    args = parser.parse_args(argv)
    function = method_function(args.method)
    with (args.export / "cases.csv").open(encoding="utf-8", newline="") as handle:
        cases = list(csv.DictReader(handle))
    with args.out.open("w", encoding="utf-8") as out:
        for n, case in enumerate(cases, 1):
            started = time.perf_counter()
            ranks: list[str] = []
            error = None
            try:
                ranks = run_case(
                    function, args.export / case["folder"], args.dataset, args.length, args.seed
                )
            except Exception as failure:
                error = f"{type(failure).__name__}: {failure}"
            seconds = round(time.perf_counter() - started, 3)
            line = {
                "folder": case["folder"],
                "case_id": case["case_id"],
                "ranks": ranks,
                "seconds": seconds,
                "error": error,
            }
            out.write(json.dumps(line) + "\n")
            out.flush()
            status = f"failed: {error}" if error else f"{len(ranks)} ranked"
            print(f"case {n}/{len(cases)} {case['case_id']} {status}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
