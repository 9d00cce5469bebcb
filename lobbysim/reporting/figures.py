"""What every report's figures share: saving, policy colours, markers and axes styling.

Figures are drawn on :class:`matplotlib.figure.Figure` objects (no pyplot, so no global state
and no display needed) and saved by :func:`save_figure` without the matplotlib version in the
PNG metadata, so the same data gives the same bytes whatever matplotlib wrote them. Inside
:func:`captured_figures`, every saved figure is also kept, so that a test can check its layout
(no overlapping labels) on the very figure that was written.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from matplotlib.axes import Axes
from matplotlib.figure import Figure

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
