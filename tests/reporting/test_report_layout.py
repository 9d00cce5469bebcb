"""Every report's figures are laid out cleanly: no two labels of an axes overlap, and no text
runs past the figure's edge (the checks of tests/reporting/layout_helpers.py), for the run,
compare, sweep, tune and calibrate reports; and the run report's page answers first.

Each figure is checked on the very :class:`~matplotlib.figure.Figure` the report saved
(:func:`~lobbysim.reporting.figures.captured_figures`). For the compare report, a small
comparison of four policies (with a long name, ``knowledge_gradient(gamma=0.95)``, and both
bounds, so that the headline has its answers) in two scenarios that between them draw every
figure of the report: a live game (a player base with a policy switch and a retention model:
the trade-off, the five figures, the convergence and retention figures), and a world with a rule
set (the region and rule figures); for the run report, one policy; for the others, each
command's report of a tiny study.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from matplotlib.figure import Figure

import lobbysim
from lobbysim.calibration.export import records_to_log, write_log
from lobbysim.cli.main import main
from lobbysim.experiments.replications import ExperimentResult, run_experiment
from lobbysim.reporting.figures import captured_figures
from lobbysim.reporting.region_figures import REGION_FIGURE_FILE
from lobbysim.reporting.retention_figures import RETENTION_FIGURE_FILE
from lobbysim.reporting.rule_figures import RULES_FIGURE_FILE
from lobbysim.reporting.run import write_report
from lobbysim.reporting.run_figures import FIGURE_FILES, clock_text, time_ticks
from lobbysim.reporting.tenure_figures import TENURE_FIGURE_FILE
from lobbysim.reporting.tradeoff_figure import TRADEOFF_FIGURE_FILE
from lobbysim.scenario import Scenario
from tests.reporting.layout_helpers import (
    covered_lines,
    cut_off,
    layout_problems,
    overlaps,
    renderer,
)
from tests.reporting.page_helpers import PageOrder

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


LIVE_GAME_FIGURES = [
    TRADEOFF_FIGURE_FILE,
    *FIGURE_FILES,
    TENURE_FIGURE_FILE,
    RETENTION_FIGURE_FILE,
]


@pytest.mark.slow
@pytest.mark.parametrize("name", LIVE_GAME_FIGURES)
def test_no_labels_overlap_or_are_cut_in_the_live_game_figures(
    live_game: dict[str, Figure], name: str
) -> None:
    assert name in live_game, f"{name} was not drawn"
    assert layout_problems(live_game[name]) == []
    if name != TRADEOFF_FIGURE_FILE:  # (the trade-off's names sit beside its points)
        assert covered_lines(live_game[name]) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", [TRADEOFF_FIGURE_FILE, REGION_FIGURE_FILE, RULES_FIGURE_FILE])
def test_no_labels_overlap_or_are_cut_in_the_world_and_rule_figures(
    world_rules: dict[str, Figure], name: str
) -> None:
    assert name in world_rules, f"{name} was not drawn"
    assert layout_problems(world_rules[name]) == []
    if name != TRADEOFF_FIGURE_FILE:
        assert covered_lines(world_rules[name]) == []


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


def test_the_checker_finds_a_legend_over_a_line() -> None:
    """A legend in the upper left over a line that runs there is found; below the axes, not."""
    fig = Figure(figsize=(6.0, 4.0), layout="constrained")
    ax = fig.add_subplot()
    ax.plot([0, 10], [10, 10], label="flat at the top")
    ax.plot([0, 10], [0, 1], label="low")
    ax.set_ylim(0, 11)
    ax.legend(loc="upper left")
    assert covered_lines(fig) == ["axes 0: the legend covers the line 'flat at the top'"]
    ax.get_legend().remove()
    fig.legend(loc="outside lower center")
    assert covered_lines(fig) == []


def test_the_checker_finds_text_cut_at_the_edge() -> None:
    """A long x label under a small figure runs past both edges; a title past the top; a
    figure legend placed outside the canvas; laid out with room, nothing is cut."""
    fig = Figure(figsize=(3.0, 2.0))
    ax = fig.add_subplot()
    ax.set_xlabel("simulated time the spell began (minutes since the start; shown from the end)")
    ax.set_title("a title\nof\nfive\nlines\nhigh")
    found = cut_off(fig)
    assert any(f.startswith("axes 0: axis label 'simulated time") and "left by" in f for f in found)
    assert any("right by" in f for f in found)
    assert any(f.startswith("axes 0: title") and "top by" in f for f in found)
    roomy = Figure(figsize=(9.0, 4.0), layout="constrained")
    ax = roomy.add_subplot()
    ax.set_xlabel("simulated time the spell began (minutes since the start)")
    ax.plot([0, 1], [0, 1], label="a line")
    roomy.legend(loc="outside lower center")
    assert cut_off(roomy) == []


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
        metrics=pd.DataFrame(
            [{"policy": p, "replication": r, X_METRIC: 0.5} for p in POLICIES for r in (1, 2)]
        ),
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


@pytest.mark.slow
@pytest.mark.parametrize("name", FIGURE_FILES[1:3] + FIGURE_FILES[4:])
def test_over_time_axes_start_at_the_switch_in_hours_with_the_legend_outside(
    live_game: dict[str, Figure], name: str
) -> None:
    fig = live_game[name]
    (ax,) = fig.axes
    assert ax.get_xlim() == (360.0, 720.0)  # the switch, the horizon: no burn-in shown
    label = ax.get_xlabel()
    assert "(hours since the start; from the policy switch)" in label and "minute" not in label
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"{h}" for h in range(6, 13)]
    # the legend is below the axes, where it covers no line
    assert ax.get_legend() is None and len(fig.legends) == 1
    drawn = renderer(fig)  # at the saved resolution, laid out
    legend = fig.legends[0].get_window_extent(drawn)
    assert legend.y1 <= ax.get_window_extent(drawn).y0


def test_over_time_axes_read_in_minutes_hours_or_days() -> None:
    ticks, labels, unit = time_ticks(1440.0, 2880.0)  # the second day
    assert unit == "day and time of day; day 1, 00:00 is the start"
    assert labels[0] == "day 2\n00:00" and labels[2] == "day 2\n06:00" and len(labels) <= 9
    assert ticks[0] == 1440.0 and ticks[-1] == 2880.0
    assert time_ticks(1440.0, 10080.0)[1] == [f"day {d}" for d in range(2, 9)]
    ticks, labels, unit = time_ticks(20.0, 150.0)
    assert unit == "minutes since the start" and labels == [
        "20",
        "40",
        "60",
        "80",
        "100",
        "120",
        "140",
    ]
    assert time_ticks(360.0, 720.0)[1:] == (
        ["6", "7", "8", "9", "10", "11", "12"],
        "hours since the start",
    )
    assert clock_text(1800.0) == "day 2, 06:00" and clock_text(20.0) == "minute 20"


@pytest.mark.slow  # the default run checks the page's order on test_headline's comparison
def test_the_page_answers_first_and_stands_alone(
    live_game_folder: tuple[Path, dict[str, Figure]],
) -> None:
    out, _ = live_game_folder
    page = PageOrder()
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


@pytest.mark.slow
def test_in_headless_chromium_the_answer_is_on_the_first_screen(
    request: pytest.FixtureRequest,
) -> None:
    """Measured in a real browser where one is installed (scripts/report_screenshot.py); the
    comparison is run only then."""
    script = _screenshot_script()
    browser = script._browser()
    if browser is None:
        pytest.skip("no headless Chromium (apt-get install chromium)")
    out, _ = request.getfixturevalue("live_game_folder")
    data = script.measure(out / "report.html", browser, 1000)
    assert data["headline"]["bottom"] <= 1000
    assert data["tradeoff"]["bottom"] <= 1000
    assert data["linked"] == [] and data["broken"] == 0
    assert data["embedded"] == len(LIVE_GAME_FIGURES)
    assert data["height"] < 6000


# --------------------------------------------------------------------------------------------
# The run, sweep, tune and calibrate reports: every figure each writes

SHORT = {"horizon": 90, "warmup": 10}


def _problems(figures: dict[str, Figure]) -> dict[str, list[str]]:
    """Return each figure's layout problems (overlapping labels, texts cut at the edge)."""
    return {name: layout_problems(fig) for name, fig in sorted(figures.items())}


@pytest.mark.slow
def test_the_run_reports_figures_are_laid_out_cleanly(tmp_path: Path) -> None:
    """``lobbysim run``'s report (one policy) of a tiny scenario: every figure it writes."""
    with captured_figures() as figures:
        lobbysim.compare(
            "one_visit",
            ["draw_chance"],
            replications=2,
            overrides=SHORT,
            out=tmp_path / "run",
            progress=False,
        )
    assert {TRADEOFF_FIGURE_FILE, *FIGURE_FILES} <= set(figures)
    assert _problems(figures) == {name: [] for name in sorted(figures)}


@pytest.mark.slow
def test_the_sweep_reports_figures_are_laid_out_cleanly(tmp_path: Path) -> None:
    """``lobbysim sweep``'s report of a real tiny sweep: a choice (the tick) within settings
    (the arrival rate), both bounds; every figure it writes (the synthetic sweeps of
    tests/reporting/test_sweep_report.py are checked there)."""
    with captured_figures() as figures:
        lobbysim.sweep(
            "one_visit",
            {"matchmaker.tick": [0.5, 1.0], "arrivals.rate": [2, 4]},
            ["uniform_random", "draw_chance", "oracle"],
            replications=2,
            out=tmp_path / "sweep",
            progress=False,
            overrides={"horizon": 60, "warmup": 10},
        )
    assert {"tradeoff_draw.png", "by_matchmaker_tick.png", "by_arrivals_rate.png"} <= set(figures)
    assert _problems(figures) == {name: [] for name in sorted(figures)}


@pytest.mark.slow
def test_the_tune_reports_figures_are_laid_out_cleanly(tmp_path: Path) -> None:
    study = {
        "objective": {"minimize": "skill_gap_true_mean"},
        "constraints": ["queue_time_mean <= 1.0"],
        "parameters": {"matchmaker.tick": [0.25, 1.0]},
        "trials": 4,
        "batch": 2,
        "replications": [2, 2],
        "evaluate": 2,
    }
    with captured_figures() as figures:
        lobbysim.tune(
            "one_visit",
            study,
            out=tmp_path / "tune",
            progress=False,
            overrides={"horizon": 60, "warmup": 10},
        )
    assert {"tune_trials.png", "tune_convergence.png"} <= set(figures)
    assert _problems(figures) == {name: [] for name in sorted(figures)}
    # the trial figure speaks the headline's unit (one_visit's waits are seconds long) and its
    # legend names every mark
    (ax,) = figures["tune_trials.png"].axes
    assert ax.get_xlabel().endswith("(s; bound 60 s)"), ax.get_xlabel()
    assert max(ax.get_xlim()) < 120  # the points were drawn in seconds too
    (legend,) = figures["tune_trials.png"].legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "feasible trial",
        "infeasible trial",
        "the constraint's bound",
        "Pareto front (promoted trials)",
        "best feasible",
    ]


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Figure]:
    """``lobbysim calibrate``'s report of a day of the quickstart's games, one refinement (so
    that it draws the log beside the calibrated scenario) and one rater."""
    out = tmp_path_factory.mktemp("calibrate")
    run = lobbysim.simulate("quickstart", seed=2, horizon=1440, warmup=0, progress=False)
    write_log(records_to_log(run.games, run.participants, run.players), out / "games.csv")
    argv = ["calibrate", str(out / "games.csv"), "--to", str(out / "fitted.yaml")]
    argv += ["--report", str(out / "report"), "--refine", "1", "--raters", "bayesian"]
    with captured_figures() as figures:
        assert main([*argv, "--template", "quickstart"]) == 0
    return figures


@pytest.mark.slow
def test_the_calibrate_reports_figures_are_laid_out_cleanly(
    calibrated: dict[str, Figure],
) -> None:
    assert "rater_calibration.png" in calibrated and len(calibrated) >= 3
    assert _problems(calibrated) == {name: [] for name in sorted(calibrated)}
    assert {name: covered_lines(fig) for name, fig in sorted(calibrated.items())} == {
        name: [] for name in sorted(calibrated)
    }


@pytest.mark.slow
def test_no_legend_covers_a_line_in_the_tune_figures(tmp_path: Path) -> None:
    """A tiny tune study's figures: no legend inside an axes over a line."""
    study = {
        "objective": {"minimize": "skill_gap_true_mean"},
        "parameters": {"matchmaker.tick": [0.25, 1.0]},
        "trials": 2,
        "batch": 2,
        "replications": [2, 2],
        "evaluate": 2,
    }
    with captured_figures() as figures:
        lobbysim.tune(
            "one_visit",
            study,
            out=tmp_path / "tune",
            progress=False,
            overrides={"horizon": 60, "warmup": 10},
        )
    assert figures and all(covered_lines(fig) == [] for fig in figures.values())
