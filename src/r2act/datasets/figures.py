"""The card's figures (paper Fig. 5-6): composition bars and the service x fault heatmap.

Drawn on an explicit Agg canvas (no pyplot, no global backend switch) with fixed sizes,
DPI and style, and saved without the PNG 'Software' text chunk, so the same composition
always gives the same bytes with the same matplotlib version (``validate`` re-renders and
compares when the versions match). matplotlib is imported only when a figure is drawn; the
dataset build draws them in a process of their own, beside the tables (``write_async``).
"""

from __future__ import annotations

import io
import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from r2act.datasets.composition import Composition

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COMPOSITION_PNG: Final = "figures/composition.png"
HEATMAP_PNG: Final = "figures/cells.png"
LOGSCALE_PNG: Final = "figures/log_records.png"
FIGURES: Final = (COMPOSITION_PNG, HEATMAP_PNG, LOGSCALE_PNG)
_RC: Final[dict[Any, Any]] = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "svg.hashsalt": "r2act",
    "path.simplify": True,
}


def matplotlib_version() -> str:
    """The renderer version recorded next to the figures (read without importing it)."""
    return metadata.version("matplotlib")


def _new_figure(**kwargs: Any) -> Figure:
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def _png(figure: Figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


def _composition(comp: Composition) -> bytes:
    import matplotlib

    with matplotlib.rc_context(_RC):
        figure = _new_figure(figsize=(10, 4), layout="constrained")
        for axis, (title, counts) in zip(
            figure.subplots(1, 2),
            (("Root-cause service", comp.services), ("Fault type", comp.fault_types)),
            strict=True,
        ):
            names = list(counts)[::-1]
            values = [counts[n] for n in names]
            axis.barh(names, values, color="#4c72b0")
            total = max(sum(values), 1)
            for y, value in enumerate(values):
                axis.text(value, y, f" {value} ({100 * value / total:.1f}%)", va="center")
            axis.set_title(f"{title} ({comp.incidents} incidents)")
            axis.set_xlim(0, max(values or [1]) * 1.35)
        return _png(figure)


def _heatmap(comp: Composition) -> bytes:
    services = list(comp.services)
    faults = list(comp.fault_types)
    grid = [[comp.cells.get(f"{s}/{f}", 0) for f in faults] for s in services]
    import matplotlib

    with matplotlib.rc_context(_RC):
        figure = _new_figure(
            figsize=(1.2 * len(faults) + 3, 0.5 * len(services) + 2), layout="constrained"
        )
        axis = figure.subplots()
        image = axis.imshow(grid or [[0]], cmap="Blues", aspect="auto", vmin=0)
        axis.set_xticks(range(len(faults)), faults, rotation=30, ha="right")
        axis.set_yticks(range(len(services)), services)
        for y, row in enumerate(grid):
            for x, value in enumerate(row):
                dark = value > max(max(r) for r in grid) / 2
                label = str(value) if value else ""  # an empty cell stays blank, as in Fig. 6c
                axis.text(x, y, label, ha="center", va="center", color="white" if dark else "black")
        axis.set_title(f"Main incidents per service x fault cell ({len(comp.cells)} cells)")
        figure.colorbar(image, ax=axis)
        return _png(figure)


def _log_scale(comp: Composition) -> bytes:
    scale = comp.log_records
    import matplotlib

    with matplotlib.rc_context(_RC):
        figure = _new_figure(figsize=(6, 2.2), layout="constrained")
        axis = figure.subplots()
        axis.bxp(
            [
                {
                    "med": scale.median / 1000,
                    "q1": scale.q1 / 1000,
                    "q3": scale.q3 / 1000,
                    "whislo": scale.min / 1000,
                    "whishi": scale.max / 1000,
                    "mean": scale.mean / 1000,
                    "label": "",
                }
            ],
            orientation="horizontal",
            showmeans=True,
            showfliers=False,
        )
        axis.set_xlabel("Log records per incident (thousands)")
        axis.set_title(f"Observation scale: {scale.total:,} log records")
        return _png(figure)


def render(comp: Composition) -> dict[str, bytes]:
    """Every figure as PNG bytes by its path inside the dataset."""
    return {
        COMPOSITION_PNG: _composition(comp),
        HEATMAP_PNG: _heatmap(comp),
        LOGSCALE_PNG: _log_scale(comp),
    }


def write_async(comp: Composition, out: Path) -> Future[list[str]]:
    """``write`` in a process of its own, so the figures are drawn while the caller writes
    the tables (and the caller never imports matplotlib). Result: the paths written."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    pool = ProcessPoolExecutor(max_workers=1, mp_context=context)
    try:
        return pool.submit(write, comp, out)
    finally:
        pool.shutdown(wait=False)  # the worker exits once the figures are written


def write(comp: Composition, out: Path) -> list[str]:
    """Render and write the figures under ``out``; returns their relative paths."""
    rendered = render(comp)
    for name, data in rendered.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return list(rendered)
