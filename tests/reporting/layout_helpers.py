"""The layout checks of every report's figures, shared by the layout tests (a test module does
not import another): no two labels of one axes overlap (:func:`overlaps`), no text runs past
the figure's edge, where the saved PNG would cut it (:func:`cut_off`), and no legend inside an
axes covers one of its lines (:func:`covered_lines`).

Both measure the very :class:`~matplotlib.figure.Figure` a report saved
(:func:`lobbysim.reporting.figures.captured_figures`), laid out at the saved resolution: the
window extents of its tick labels, texts and annotations, axis labels, titles and legends.
"""

from __future__ import annotations

import itertools

import numpy as np
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox

from lobbysim.reporting.figures import DPI

TOLERANCE = 1.0
"""Pixels of overlap (at the saved resolution) still taken as touching, not overlapping; and
pixels a text may reach past the figure's edge."""


def renderer(fig: Figure) -> RendererBase:
    """Return a renderer of ``fig`` at the saved resolution, with its layout done."""
    fig.set_dpi(DPI)
    canvas = FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    return canvas.get_renderer()


def tick_labels(axis: Axis) -> list[Text]:
    """Return an axis' drawn tick labels: shown, not empty, at a tick inside the view."""
    low, high = sorted(axis.get_view_interval())
    span = (high - low) * 1e-9
    labels = []
    for locs, ticks in (
        (axis.get_majorticklocs(), axis.get_major_ticks()),
        (axis.get_minorticklocs(), axis.get_minor_ticks()),
    ):
        for loc, tick in zip(locs, ticks, strict=False):
            for label in (tick.label1, tick.label2):
                if low - span <= loc <= high + span and label.get_visible() and label.get_text():
                    labels.append(label)
    return labels


def _shown(text: Text) -> bool:
    return bool(text.get_visible() and text.get_text())


def _text_box(text: Text, render: RendererBase) -> Bbox:
    """Return a text's own window extent (for an annotation, the text, not its arrow)."""
    if isinstance(text, Annotation):
        text.update_positions(render)
    return Text.get_window_extent(text, render)


def label_boxes(ax: Axes, render: RendererBase) -> list[tuple[str, Bbox]]:
    """Return the named window extents of an axes' labels that must not overlap."""
    boxes: list[tuple[str, Bbox]] = []
    for axis in (ax.xaxis, ax.yaxis):
        for label in tick_labels(axis):
            boxes.append((f"tick label {label.get_text()!r}", label.get_window_extent(render)))
        if _shown(axis.label):
            boxes.append((f"axis label {axis.label.get_text()!r}", axis.label.get_window_extent()))
    for text in ax.texts:
        if _shown(text):
            boxes.append((f"text {text.get_text()!r}", _text_box(text, render)))
    legend = ax.get_legend()
    if legend is not None and legend.get_visible():
        boxes.append(("legend", legend.get_frame().get_window_extent(render)))
    return boxes


def overlap(a: Bbox, b: Bbox) -> float:
    """Return how far two boxes overlap (the lesser of the two sides; <= 0: apart)."""
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return min(width, height)


def overlaps(fig: Figure) -> list[str]:
    """Return the pairs of labels of one axes of ``fig`` that overlap (none, if laid out well)."""
    render = renderer(fig)
    found = []
    for index, ax in enumerate(fig.axes):
        boxes = label_boxes(ax, render)
        for (name_a, a), (name_b, b) in itertools.combinations(boxes, 2):
            if overlap(a, b) > TOLERANCE:
                found.append(f"axes {index}: {name_a} and {name_b}")
    return found


def _legend_texts(legend: Legend | None) -> list[Text]:
    if legend is None or not legend.get_visible():
        return []
    return [legend.get_title(), *legend.get_texts()]


def figure_texts(fig: Figure, render: RendererBase) -> list[tuple[str, Bbox]]:
    """Return the named window extents of every text a figure draws: per axes its tick labels,
    axis labels, titles, texts and annotations and its legend's; the figure's own texts,
    titles and legends."""
    boxes: list[tuple[str, Bbox]] = []
    for index, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        where = f"axes {index}"
        for name, box in label_boxes(ax, render):
            if name != "legend":
                boxes.append((f"{where}: {name}", box))
        for title in (ax.title, ax._left_title, ax._right_title):
            if _shown(title):
                boxes.append(
                    (f"{where}: title {title.get_text()!r}", title.get_window_extent(render))
                )
        for text in _legend_texts(ax.get_legend()):
            if _shown(text):
                boxes.append(
                    (f"{where}: legend {text.get_text()!r}", text.get_window_extent(render))
                )
    own = [fig._suptitle, fig._supxlabel, fig._supylabel, *fig.texts]
    for text in own:
        if text is not None and _shown(text):
            boxes.append((f"figure text {text.get_text()!r}", _text_box(text, render)))
    for legend in fig.legends:
        for text in _legend_texts(legend):
            if _shown(text):
                boxes.append((f"figure legend {text.get_text()!r}", text.get_window_extent(render)))
    return boxes


def cut_off(fig: Figure) -> list[str]:
    """Return the texts of ``fig`` that run past its edge, where the saved PNG cuts them (none,
    if laid out well), each with the pixels cut on each side."""
    render = renderer(fig)
    width, height = fig.bbox.width, fig.bbox.height
    found = []
    for name, box in figure_texts(fig, render):
        past = {
            "left": -box.x0,
            "right": box.x1 - width,
            "bottom": -box.y0,
            "top": box.y1 - height,
        }
        cut = {side: round(px, 1) for side, px in past.items() if px > TOLERANCE}
        if cut:
            found.append(
                f"{name} cut at the {', '.join(f'{s} by {px} px' for s, px in cut.items())}"
            )
    return found


def layout_problems(fig: Figure) -> list[str]:
    """Return every layout problem of ``fig``: overlapping labels, then texts cut off."""
    return overlaps(fig) + cut_off(fig)


def _inside(points: np.ndarray, box: Bbox) -> np.ndarray:
    """Return which display points lie inside a box."""
    x, y = points[:, 0], points[:, 1]
    return (x >= box.x0) & (x <= box.x1) & (y >= box.y0) & (y <= box.y1)


def covered_lines(fig: Figure, samples: int = 24) -> list[str]:
    """Return the lines of ``fig`` that a legend drawn inside their axes covers: a drawn point
    of the line (its vertices and ``samples`` points along each segment, at the saved
    resolution) inside the legend's frame, a pixel in from its edge."""
    render = renderer(fig)
    found = []
    for index, ax in enumerate(fig.axes):
        legend = ax.get_legend()
        if legend is None or not legend.get_visible():
            continue
        frame = legend.get_frame().get_window_extent(render).padded(-TOLERANCE)
        clip = ax.get_window_extent(render)
        for line in ax.get_lines():
            xy = line.get_xydata()
            if not line.get_visible() or len(xy) == 0:
                continue
            points = line.get_transform().transform(xy)
            if len(points) > 1:
                steps = np.linspace(0.0, 1.0, samples)[:, None, None]
                points = (points[:-1] + steps * (points[1:] - points[:-1])).reshape(-1, 2)
            points = points[np.isfinite(points).all(axis=1)]
            shown = points[_inside(points, clip)]
            if len(shown) and _inside(shown, frame).any():
                found.append(f"axes {index}: the legend covers the line {line.get_label()!r}")
    return found
