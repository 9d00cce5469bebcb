"""The run report's layout: no two labels of a figure overlap, and the page answers first.

Every figure of a small comparison of four policies (with a long name,
``knowledge_gradient(gamma=0.95)``, and both bounds, so that the headline has its answers) is
checked on the very :class:`~matplotlib.figure.Figure` the report saved
(:func:`~lobbysim.reporting.figures.captured_figures`): within each axes, the window extents of
the tick labels, the texts and annotations (point names, bar labels), the axis labels and the
legend's frame overlap pairwise by no more than a pixel. Two scenarios between them draw every
figure of the run report: a live game (a player base with a policy switch and a retention
model: the trade-off, the five figures, the convergence and retention figures), and a world
with a rule set (the region and rule figures).
"""

from __future__ import annotations

import importlib.util
import itertools
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType

import pytest
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox

from lobbysim.experiments.replications import ExperimentResult, run_experiment
from lobbysim.reporting.figures import DPI, captured_figures
from lobbysim.reporting.region_figures import REGION_FIGURE_FILE
from lobbysim.reporting.retention_figures import RETENTION_FIGURE_FILE
from lobbysim.reporting.rule_figures import RULES_FIGURE_FILE
from lobbysim.reporting.run import write_report
from lobbysim.reporting.run_figures import FIGURE_FILES
from lobbysim.reporting.tenure_figures import TENURE_FIGURE_FILE
from lobbysim.reporting.tradeoff_figure import TRADEOFF_FIGURE_FILE
from lobbysim.scenario import Scenario

POLICIES = ["uniform_random", "draw_chance", "knowledge_gradient(gamma=0.95)", "oracle"]

LIVE_GAME = {
    "name": "layout <live game>",
    "horizon": 720.0,
    "warmup": 360.0,
    "seed": 4,
    "arrivals": {"name": "none"},
    "population": {"session_games_mean": 4, "patience_mean": 8},
    "game": {"length": 10},
    "matchmaker": {
        "policy": "draw_chance",
        "status_quo": "draw_chance",
        "switch_at": 360,
        "tick": 0.5,
    },
    "records": {"ratings_every": 60},
    "base": {
        "size": 150,
        "newcomer_games": 10,
        "newcomers_per_day": 40,
        "leave_per_day": 0.0,
        "visits": {"name": "daily", "per_day": 4},
        "retention": {"name": "experience", "intercept": -3.0},
    },
}

WORLD_RULES = {
    "name": "layout world and rules",
    "horizon": 150.0,
    "warmup": 20.0,
    "seed": 6,
    "arrivals": {"name": "poisson", "rate": 4.0},
    "game": {"mode": "1v1", "length": 10.0},
    "attributes": {"platform": {"type": "string", "values": {"pc": 0.6, "console": 0.4}}},
    "matchmaker": {
        "algorithm": "seed_greedy",
        "rules": [
            {
                "name": "skill",
                "kind": "skill_distance",
                "limit": 0.5,
                "expansions": [[1, 2.0], [2, 5.0]],
            },
            {"name": "platform", "kind": "equal", "attribute": "platform"},
        ],
    },
    "world": {
        "data_centres": ["us_east", "eu_west"],
        "regions": [
            {"name": "na", "share": 0.6, "utc_offset_hours": -5},
            {"name": "eu", "share": 0.4, "utc_offset_hours": 1},
        ],
        "latency": {"name": "matrix", "base_ms": {"na": [35, 95], "eu": [95, 25]}},
    },
}

TOLERANCE = 1.0
"""Pixels of overlap (at the saved resolution) still taken as touching, not overlapping."""


def _report(data: dict[str, object], out: Path) -> dict[str, Figure]:
    result: ExperimentResult = run_experiment(
        Scenario.from_dict(data), policies=POLICIES, replications=2, jobs=1
    )
    with captured_figures() as figures:
        written = write_report(result, out)
    assert {p.name for p in written if p.suffix == ".png"} == set(figures)
    return figures


@pytest.fixture(scope="module")
def live_game_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Figure]]:
    out = tmp_path_factory.mktemp("live_game")
    return out, _report(LIVE_GAME, out)


@pytest.fixture(scope="module")
def live_game(live_game_folder: tuple[Path, dict[str, Figure]]) -> dict[str, Figure]:
    return live_game_folder[1]


@pytest.fixture(scope="module")
def world_rules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Figure]:
    return _report(WORLD_RULES, tmp_path_factory.mktemp("world_rules"))


def _renderer(fig: Figure) -> RendererBase:
    """Return a renderer of ``fig`` at the saved resolution, with its layout done."""
    fig.set_dpi(DPI)
    canvas = FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    return canvas.get_renderer()


def _tick_labels(axis: Axis) -> list[Text]:
    """Return an axis' drawn tick labels: shown, not empty, at a tick inside the view."""
    low, high = sorted(axis.get_view_interval())
    span = (high - low) * 1e-9
    labels = []
    for locs, ticks in (
        (axis.get_majorticklocs(), axis.get_major_ticks()),
        (axis.get_minorticklocs(), axis.get_minor_ticks()),
    ):
        for loc, tick in zip(locs, ticks, strict=False):
            label = tick.label1
            if low - span <= loc <= high + span and label.get_visible() and label.get_text():
                labels.append(label)
    return labels


def _boxes(ax: Axes, renderer: RendererBase) -> list[tuple[str, Bbox]]:
    """Return the named window extents of an axes' labels that must not overlap."""
    boxes: list[tuple[str, Bbox]] = []
    for axis in (ax.xaxis, ax.yaxis):
        for label in _tick_labels(axis):
            boxes.append((f"tick label {label.get_text()!r}", label.get_window_extent(renderer)))
        if axis.label.get_visible() and axis.label.get_text():
            boxes.append((f"axis label {axis.label.get_text()!r}", axis.label.get_window_extent()))
    for text in ax.texts:
        if not (text.get_visible() and text.get_text()):
            continue
        if isinstance(text, Annotation):
            text.update_positions(renderer)
        # the text itself, not an annotation's line to its point
        boxes.append((f"text {text.get_text()!r}", Text.get_window_extent(text, renderer)))
    legend = ax.get_legend()
    if legend is not None and legend.get_visible():
        boxes.append(("legend", legend.get_frame().get_window_extent(renderer)))
    return boxes


def _overlap(a: Bbox, b: Bbox) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return min(width, height)


def overlaps(fig: Figure) -> list[str]:
    """Return the pairs of labels of one axes of ``fig`` that overlap (none, if laid out well)."""
    renderer = _renderer(fig)
    found = []
    for index, ax in enumerate(fig.axes):
        boxes = _boxes(ax, renderer)
        for (name_a, a), (name_b, b) in itertools.combinations(boxes, 2):
            if _overlap(a, b) > TOLERANCE:
                found.append(f"axes {index}: {name_a} and {name_b}")
    return found


LIVE_GAME_FIGURES = [
    TRADEOFF_FIGURE_FILE,
    *FIGURE_FILES,
    TENURE_FIGURE_FILE,
    RETENTION_FIGURE_FILE,
]


@pytest.mark.slow
@pytest.mark.parametrize("name", LIVE_GAME_FIGURES)
def test_no_labels_overlap_in_the_live_game_figures(
    live_game: dict[str, Figure], name: str
) -> None:
    assert name in live_game, f"{name} was not drawn"
    assert overlaps(live_game[name]) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", [TRADEOFF_FIGURE_FILE, REGION_FIGURE_FILE, RULES_FIGURE_FILE])
def test_no_labels_overlap_in_the_world_and_rule_figures(
    world_rules: dict[str, Figure], name: str
) -> None:
    assert name in world_rules, f"{name} was not drawn"
    assert overlaps(world_rules[name]) == []


def test_the_checker_finds_overlapping_labels() -> None:
    """The check itself: two names on the same spot, and crowded tick labels, are found."""
    fig = Figure(figsize=(2.0, 2.0))
    ax = fig.add_subplot()
    ax.annotate("oracle", (0.5, 0.5))
    ax.annotate("point_estimate", (0.5, 0.5), xytext=(2, 1), textcoords="offset points")
    ax.set_xticks(range(8), [f"knowledge_gradient {k}" for k in range(8)])
    found = overlaps(fig)
    assert any("'oracle' and text 'point_estimate'" in pair for pair in found)
    assert any("tick label 'knowledge_gradient 0'" in pair for pair in found)


def test_the_tradeoff_names_of_points_on_top_of_each_other_do_not_overlap(
    tmp_path: Path,
) -> None:
    """Four policies at the very same point (the live game's 'oracleestimate'): four spots."""
    import types

    import pandas as pd

    from lobbysim.reporting.figures import policy_colours
    from lobbysim.reporting.tradeoff_figure import X_METRIC, Y_METRICS, tradeoff_figure

    rows = [
        {"policy": p, "metric": m, "mean": 0.5, "ci_low": 0.49, "ci_high": 0.51}
        for p in POLICIES
        for m in (X_METRIC, *(metric for metric, _ in Y_METRICS))
    ]
    result = types.SimpleNamespace(
        policies=POLICIES,
        summary=pd.DataFrame(rows),
        seeds=[1, 2],
        scenario=types.SimpleNamespace(name="same point"),
    )
    with captured_figures() as figures:
        outcome = tradeoff_figure(result, tmp_path, policy_colours(POLICIES))  # type: ignore[arg-type]
    assert outcome.path is not None
    fig = figures[TRADEOFF_FIGURE_FILE]
    assert overlaps(fig) == []
    names = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert sorted(names) == sorted(POLICIES * 2)


# --------------------------------------------------------------------------------------------
# Over-time axes start at the switch; the page answers first and stands alone


@pytest.mark.parametrize("name", FIGURE_FILES[1:3] + FIGURE_FILES[4:])
def test_over_time_axes_start_at_the_switch(live_game: dict[str, Figure], name: str) -> None:
    (ax,) = live_game[name].axes
    assert ax.get_xlim() == (360.0, 720.0)  # the switch, the horizon: no burn-in shown
    assert "from minute 360, the policy switch" in ax.get_xlabel()


class _Page(HTMLParser):
    """The sequence of a page's start tags (with a data-file) and whether it links a file."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []
        self.linked: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.order.append(f"{tag}:{values.get('data-file') or ''}")
        for key in ("src", "href"):
            value = values.get(key)
            if value is not None and not value.startswith("data:"):
                self.linked.append(value)


def test_the_page_answers_first_and_stands_alone(
    live_game_folder: tuple[Path, dict[str, Figure]],
) -> None:
    out, _ = live_game_folder
    page = _Page()
    page.feed((out / "report.html").read_text(encoding="utf-8"))
    assert page.linked == []  # no figure or anything else as a separate file
    order = page.order
    first_section = order.index("h2:")
    # the title, what was run, the answers (bold), then the trade-off figure
    assert order.index("h1:") < order.index("strong:") < order.index(f"img:{TRADEOFF_FIGURE_FILE}")
    assert order.index(f"img:{TRADEOFF_FIGURE_FILE}") < first_section
    # then the share of the oracle's gain, its table before anything folded
    assert order.index("table:") < order.index("details:")
    # the long tables are folded: every table after the oracle share's is in a <details>
    text = (out / "report.html").read_text(encoding="utf-8")
    assert text.count("<table>") - 1 == sum(
        part.split("</details>")[0].count("<table>") for part in text.split("<details>")[1:]
    )


def _screenshot_script() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "scripts" / "report_screenshot.py"
    spec = importlib.util.spec_from_file_location("report_screenshot", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_in_headless_chromium_the_answer_is_on_the_first_screen(
    live_game_folder: tuple[Path, dict[str, Figure]],
) -> None:
    """Measured in a real browser where one is installed (scripts/report_screenshot.py)."""
    script = _screenshot_script()
    browser = script._browser()
    if browser is None:
        pytest.skip("no headless Chromium (apt-get install chromium)")
    out, _ = live_game_folder
    data = script.measure(out / "report.html", browser, 1000)
    assert data["headline"]["bottom"] <= 1000
    assert data["tradeoff"]["bottom"] <= 1000
    assert data["linked"] == [] and data["broken"] == 0
    assert data["embedded"] == len(LIVE_GAME_FIGURES)
    assert data["height"] < 6000
