"""What every report's figures share: saving, policy colours, markers and axes styling.

Figures are drawn on :class:`matplotlib.figure.Figure` objects (no pyplot, so no global state
and no display needed) and saved by :func:`save_figure` without the matplotlib version in the
PNG metadata, so the same data gives the same bytes whatever matplotlib wrote them. Inside
:func:`captured_figures`, every saved figure is also kept, so that a test can check its layout
(no overlapping labels) on the very figure that was written.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

DPI = 150
"""Resolution of every saved figure."""

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
"""Markers per policy, in policy order, where a figure tells policies apart by marker too."""

POLICY_COLOURS = {
    "point_estimate": "tab:blue",
    "draw_chance": "tab:orange",
    "knowledge_gradient": "tab:green",
}
"""Fixed colours of the paper's three policies, the same in every report."""

SPARE_COLOURS = ("tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")
"""Colours of any other policy, in order."""


def policy_colours(policies: Sequence[str]) -> dict[str, str]:
    """Return a colour per policy: fixed ones for the paper's three, then spare ones in order."""
    spare = iter(SPARE_COLOURS * (1 + len(policies) // len(SPARE_COLOURS)))
    return {name: POLICY_COLOURS.get(name) or next(spare) for name in policies}


def marker(index: int) -> str:
    """Return the marker of the policy at ``index`` (cycling through :data:`MARKERS`)."""
    return MARKERS[index % len(MARKERS)]


def new_axes(width: float = 8.0, height: float = 5.0) -> tuple[Figure, Axes]:
    """Return a new constrained-layout figure of this size (inches) and its one axes."""
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def new_panels(count: int, width: float, height: float) -> tuple[Figure, list[Axes]]:
    """Return a new constrained-layout figure of this size (inches) with ``count`` axes in a row."""
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, list(fig.subplots(1, count, squeeze=False)[0])


_captures: list[dict[str, Figure]] = []
"""The open :func:`captured_figures` blocks' figures, by file name."""


@contextmanager
def captured_figures() -> Iterator[dict[str, Figure]]:
    """Keep every figure :func:`save_figure` saves inside the block; yield them by file name.

    For tests of the figures' layout: ``with captured_figures() as figures: write_report(...)``
    gives the :class:`~matplotlib.figure.Figure` behind each PNG the report wrote.
    """
    figures: dict[str, Figure] = {}
    _captures.append(figures)
    try:
        yield figures
    finally:
        _captures.remove(figures)


def save_figure(fig: Figure, path: Path) -> Path:
    """Save ``fig`` as a PNG at :data:`DPI` (no software stamp in the metadata); return path."""
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    for figures in _captures:
        figures[Path(path).name] = fig
    return path


def laid_out(fig: Figure) -> RendererBase:
    """Lay ``fig`` out at the saved resolution (:data:`DPI`) and return its renderer, to
    measure its texts as the saved PNG draws them."""
    fig.set_dpi(DPI)
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    return canvas.get_renderer()


def _x_tick_labels(ax: Axes) -> list[Text]:
    """Return an axes' shown x tick labels at ticks inside the view, left to right."""
    low, high = sorted(ax.get_xlim())
    span = (high - low) * 1e-9
    return [
        tick.label1
        for loc, tick in zip(ax.xaxis.get_majorticklocs(), ax.xaxis.get_major_ticks(), strict=False)
        if low - span <= loc <= high + span and tick.label1.get_visible() and tick.label1.get_text()
    ]


def _crowded(labels: Sequence[Text], renderer: RendererBase) -> bool:
    """Return whether two neighbouring labels overlap by more than a pixel."""
    boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.x0)
    return any(
        min(a.x1, b.x1) - max(a.x0, b.x0) > 1.0 and min(a.y1, b.y1) - max(a.y0, b.y0) > 1.0
        for a, b in itertools.pairwise(boxes)
    )


def fit_tick_labels(fig: Figure) -> None:
    """Keep the x tick labels of each axes of ``fig`` apart, as measured at the saved
    resolution: where two overlap, turn that axes' labels 30 degrees (anchored at their right
    end, under their tick); where they still do, show every other one, then every third, and so
    on. One layout per round, whatever the number of axes."""
    renderer = laid_out(fig)
    crowded = [ax for ax in fig.axes if _crowded(_x_tick_labels(ax), renderer)]
    if not crowded:
        return
    labels = {id(ax): _x_tick_labels(ax) for ax in crowded}
    for ax in crowded:
        for label in labels[id(ax)]:
            label.set_rotation(30)
            label.set_horizontalalignment("right")
            label.set_rotation_mode("anchor")
    every = 1
    while crowded:
        renderer = laid_out(fig)
        crowded = [
            ax
            for ax in crowded
            if _crowded([t for t in labels[id(ax)] if t.get_visible()], renderer)
            and every < len(labels[id(ax)])
        ]
        every += 1
        for ax in crowded:
            for k, label in enumerate(labels[id(ax)]):
                label.set_visible(k % every == 0)


def titled(text: str, subtitle: str) -> str:
    """Return a figure title with a second line (e.g. the scenario) when there is one."""
    return f"{text}\n{subtitle}" if subtitle else text


def style_axes(
    ax: Axes,
    *,
    title: str,
    xlabel: str | None = None,
    ylabel: str | None = None,
    grid: Literal["both", "x", "y"] = "both",
) -> None:
    """Set an axes' title and labels and draw its light grid (``grid``: both, x or y)."""
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, axis=grid, alpha=0.3)
