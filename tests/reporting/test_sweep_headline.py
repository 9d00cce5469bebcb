"""The sweep's headline: per setting the fairest and quickest choice with paired intervals, the
Pareto-efficient choices, the answer per cell with both bounds, the terminal's lines, and
``lobbysim sweep`` printing it before the report's path and putting it first in the report."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lobbysim.cli.main import main
from lobbysim.reporting.answer import answer_sentence, duration_text, runs_answers
from lobbysim.reporting.document import format_interval, format_p_value, render_markdown
from lobbysim.reporting.headline import TERMINAL_WIDTH
from lobbysim.reporting.sweep import write_sweep_report
from lobbysim.reporting.sweep_headline import Pick, build_sweep_headline, split_keys
from lobbysim.reporting.sweep_headline_wording import (
    MAX_TERMINAL_LINES,
    sweep_headline_blocks,
    sweep_headline_text,
)

KEYS = ["matchmaker.tick", "arrivals.rate"]
GAP, QUEUE = "skill_gap_true_mean", "queue_time_mean"

# Common random numbers: replication r moves every choice alike, so the paired differences are
# far tighter than the levels' intervals; each choice adds its own small pattern (mean 0).
SHARED_GAP = np.array([0.0, 0.3, -0.2, 0.1, -0.2])
SHARED_QUEUE = np.array([0.0, 0.05, -0.03, 0.02, -0.04])
PATTERNS = {
    "A": np.array([0.0, 0.01, -0.01, 0.02, -0.02]),
    "B": np.array([0.02, -0.01, 0.0, -0.02, 0.01]),
    "C": np.array([-0.01, 0.02, 0.01, -0.01, -0.01]),
    "D": np.array([0.01, 0.0, -0.02, 0.0, 0.01]),
}

# (tick, rate) -> cell, as the grid's product numbers them
CELLS = {values: cell for cell, values in enumerate(itertools.product([0.25, 1.0], [2.0, 4.0]), 1)}
# (cell, policy) -> (true skill gap, mean queue time in minutes, noise pattern)
MEANS = {
    # arrivals.rate=2: cells 1 (tick 0.25) and 3 (tick 1)
    (1, "point_estimate"): (2.00, 0.30, "A"),
    (1, "draw_chance"): (1.90, 0.31, "B"),  # as quick as cell 1 point_estimate
    (3, "point_estimate"): (1.50, 0.60, "C"),
    (3, "draw_chance"): (1.52, 0.62, "D"),  # as fair as cell 3 point_estimate; dominated
    # arrivals.rate=4: cells 2 and 4
    (2, "point_estimate"): (1.80, 0.20, "A"),
    (2, "draw_chance"): (1.70, 0.40, "B"),
    (4, "point_estimate"): (1.40, 0.50, "C"),  # dominated by cell 4 draw_chance
    (4, "draw_chance"): (1.20, 0.45, "D"),
}


def _results(means: dict[tuple[int, str], tuple[float, float, str]] = MEANS) -> pd.DataFrame:
    """Return a sweep's results frame (the shape ``write_sweep_report`` takes) from ``means``."""
    values = {cell: values for values, cell in CELLS.items()}
    rows = []
    for (cell, policy), (gap, queue, pattern) in means.items():
        tick, rate = values[cell]
        for r in range(5):
            rows.append(
                {
                    "cell": cell,
                    "matchmaker.tick": tick,
                    "arrivals.rate": rate,
                    "policy": policy,
                    "replication": r + 1,
                    "seed": 100 + r,
                    QUEUE: queue + SHARED_QUEUE[r] + PATTERNS[pattern][r],
                    "abandonment_rate": 0.1,
                    GAP: gap + SHARED_GAP[r] + PATTERNS[pattern][r],
                }
            )
    return pd.DataFrame(rows).sort_values(["cell", "replication"], kind="stable")


def _values(results: pd.DataFrame, cell: int, policy: str, metric: str) -> np.ndarray:
    rows = results[(results["cell"] == cell) & (results["policy"] == policy)]
    return rows.sort_values("replication")[metric].to_numpy(dtype=float)


def _t(values: np.ndarray) -> tuple[float, float, float]:
    low, high = stats.t.interval(0.95, values.size - 1, loc=values.mean(), scale=stats.sem(values))
    return float(values.mean()), float(low), float(high)


def _adjusted(
    results: pd.DataFrame, metric: str, best: tuple[int, str], others: list[tuple[int, str]]
) -> dict[tuple[int, str], float]:
    """Return the Benjamini-Hochberg adjusted p-values of paired t-tests of ``others`` against
    ``best``, computed here with scipy."""
    p = [
        stats.ttest_rel(_values(results, *o, metric), _values(results, *best, metric)).pvalue
        for o in others
    ]
    return dict(zip(others, stats.false_discovery_control(p, method="bh"), strict=True))


def _difference(results: pd.DataFrame, metric: str, rival: tuple[int, str], best: tuple[int, str]):
    return _t(_values(results, *rival, metric) - _values(results, *best, metric))


def _one_line(text: str) -> str:
    """Return terminal text unwrapped: continued lines joined to the line before."""
    return re.sub(r"\n +", " ", text)


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return _results()


@pytest.fixture(scope="module")
def markdown(results: pd.DataFrame) -> str:
    return render_markdown(sweep_headline_blocks(build_sweep_headline(results, KEYS)))


def _pick(results: pd.DataFrame, setting: int, metric: str) -> Pick:
    headline = build_sweep_headline(results, KEYS)
    return next(p for p in headline.settings[setting].picks if p.metric == metric)


# --------------------------------------------------------------------------------------------
# The numbers


def test_choices_are_compared_per_setting_of_what_the_matchmaker_does_not_choose(
    results: pd.DataFrame,
) -> None:
    assert split_keys(["arrivals.rate", "matchmaker.tick", "raters.driver", "base.size"]) == (
        ["matchmaker.tick", "raters.driver"],
        ["arrivals.rate", "base.size"],
    )
    headline = build_sweep_headline(results, KEYS)
    assert [dict(s.values) for s in headline.settings] == [
        {"arrivals.rate": "2"},
        {"arrivals.rate": "4"},
    ]
    assert [s.cells for s in headline.settings] == [(1, 3), (2, 4)]
    assert headline.replications == (5, 5)
    assert headline.fairness == GAP


def test_the_fairest_choice_with_its_interval_and_the_ties_with_their_paired_differences(
    results: pd.DataFrame,
) -> None:
    pick = _pick(results, 0, GAP)
    assert (pick.best.cell, pick.best.policy) == (3, "point_estimate")
    assert pick.best.levels[GAP].mean == pytest.approx(1.50)
    _, low, high = _t(_values(results, 3, "point_estimate", GAP))
    assert (pick.best.levels[GAP].low, pick.best.levels[GAP].high) == pytest.approx((low, high))
    # the tie: cell 3 draw_chance, +0.02 on the same seeds, which 5 replications cannot resolve
    assert [(r.choice.cell, r.choice.policy) for r in pick.tied] == [(3, "draw_chance")]
    others = [(3, "draw_chance"), (1, "draw_chance"), (1, "point_estimate")]
    assert [(r.choice.cell, r.choice.policy) for r in pick.rivals] == others  # closest first
    adjusted = _adjusted(results, GAP, (3, "point_estimate"), others)
    for rival in pick.rivals:
        key = (rival.choice.cell, rival.choice.policy)
        d_mean, d_low, d_high = _difference(results, GAP, key, (3, "point_estimate"))
        estimate = rival.difference
        assert (estimate.mean, estimate.low, estimate.high) == pytest.approx(
            (d_mean, d_low, d_high)
        )
        assert rival.p_adjusted == pytest.approx(adjusted[key])
    assert pick.tied[0].difference.mean == pytest.approx(0.02)
    assert adjusted[(3, "draw_chance")] > 0.05 > max(adjusted[(1, "draw_chance")], 1e-12)


def test_the_report_states_the_fairest_and_the_quickest_with_intervals(
    results: pd.DataFrame, markdown: str
) -> None:
    mean, low, high = _t(_values(results, 3, "point_estimate", GAP))
    d = _difference(results, GAP, (3, "draw_chance"), (3, "point_estimate"))
    others = [(3, "draw_chance"), (1, "draw_chance"), (1, "point_estimate")]
    p = _adjusted(results, GAP, (3, "point_estimate"), others)[(3, "draw_chance")]
    assert (
        "- **fairest (true skill gap, lower is better)**: cell 3 point_estimate "
        f"{format_interval(mean, low, high)} skill points; not significantly different: "
        f"cell 3 draw_chance {format_interval(*d, signed=True)} skill points "
        f"(adjusted p {format_p_value(p)})\n"
    ) in markdown
    # the quickest: 0.30 minutes is 18 s, its tie +0.6 s
    q = _t(_values(results, 1, "point_estimate", QUEUE))
    dq = _difference(results, QUEUE, (1, "draw_chance"), (1, "point_estimate"))
    others = [(1, "draw_chance"), (3, "point_estimate"), (3, "draw_chance")]
    pq = _adjusted(results, QUEUE, (1, "point_estimate"), others)[(1, "draw_chance")]
    assert duration_text(*q, signed=False).startswith("18.0 s [")
    assert (
        f"- **shortest mean wait**: cell 1 point_estimate {duration_text(*q, signed=False)}; "
        f"not significantly different: cell 1 draw_chance {duration_text(*dq)} "
        f"(adjusted p {format_p_value(pq)})\n"
    ) in markdown


def test_a_significantly_best_choice_is_shown_against_the_next(
    results: pd.DataFrame, markdown: str
) -> None:
    pick = _pick(results, 1, GAP)
    assert (pick.best.cell, pick.best.policy) == (4, "draw_chance")
    assert pick.tied == ()
    assert all(r.significant for r in pick.rivals)
    d = _difference(results, GAP, (4, "point_estimate"), (4, "draw_chance"))
    assert d[0] == pytest.approx(0.2)
    others = [(4, "point_estimate"), (2, "draw_chance"), (2, "point_estimate")]
    p = _adjusted(results, GAP, (4, "draw_chance"), others)[(4, "point_estimate")]
    assert (
        f"; next: cell 4 point_estimate {format_interval(*d, signed=True)} skill points "
        f"(adjusted p {format_p_value(p)})\n"
    ) in markdown
    quickest = _pick(results, 1, QUEUE)
    assert (quickest.best.cell, quickest.best.policy) == (2, "point_estimate")
    assert "- **shortest mean wait**: cell 2 point_estimate 12.0 s [" in markdown


def test_the_pareto_efficient_choices_with_their_paired_steps(
    results: pd.DataFrame, markdown: str
) -> None:
    headline = build_sweep_headline(results, KEYS)
    fronts = [
        [(s.choice.cell, s.choice.policy) for s in setting.frontier]
        for setting in headline.settings
    ]
    assert fronts == [
        [(1, "point_estimate"), (1, "draw_chance"), (3, "point_estimate")],
        [(2, "point_estimate"), (2, "draw_chance"), (4, "draw_chance")],
    ]
    step = headline.settings[0].frontier[2]
    expected = _t(
        _values(results, 3, "point_estimate", GAP) - _values(results, 1, "draw_chance", GAP)
    )
    assert (step.fairness.mean, step.fairness.low, step.fairness.high) == pytest.approx(expected)
    assert step.fairness.mean == pytest.approx(-0.4)
    assert step.queue is not None and step.queue.mean == pytest.approx(0.29)
    assert headline.settings[0].frontier[0].queue is None
    # the report's table: one row per frontier point, the dominated ones left out
    table = markdown.split("### arrivals.rate=2 (cells 1, 3)")[1].split("###")[0]
    rows = [line.split(" | ")[:3] for line in table.splitlines() if re.match(r"\| \d", line)]
    assert rows == [
        ["| 1", "0.25", "point_estimate"],
        ["| 1", "0.25", "draw_chance"],
        ["| 3", "1", "point_estimate"],
    ]
    assert "| 3 | 1 | point_estimate | 36.0 s [" in table
    assert f"| {format_interval(*expected, signed=True)} skill points |" in table


def test_the_terminal_headline_is_short_and_says_the_same(results: pd.DataFrame) -> None:
    text = sweep_headline_text(build_sweep_headline(results, KEYS))
    lines = text.splitlines()
    assert len(lines) <= MAX_TERMINAL_LINES
    assert all(len(line) <= TERMINAL_WIDTH for line in lines)
    assert lines[0] == (
        "Sweep headline per arrivals.rate (mean [95% CI] of 5 replications, paired differences, "
        "adjusted p):"
    )
    assert lines[1] == "matchmaker.tick: 0.25 in cells 1, 2; 1 in cells 3, 4"
    flat = _one_line(text)
    mean, low, high = _t(_values(results, 3, "point_estimate", GAP))
    others = [(3, "draw_chance"), (1, "draw_chance"), (1, "point_estimate")]
    p = _adjusted(results, GAP, (3, "point_estimate"), others)[(3, "draw_chance")]
    assert (
        "arrivals.rate=2: fairest (true skill gap): cell 3 point_estimate "
        f"{format_interval(mean, low, high)} skill points, no significant difference from "
        f"cell 3 draw_chance (adjusted p {format_p_value(p)}); shortest mean wait: "
        "cell 1 point_estimate 18.0 s ["
    ) in flat
    assert (
        "Pareto-efficient: point_estimate in cells 1, 3; draw_chance in cell 1\n"
        "arrivals.rate=4: fairest (true skill gap): cell 4 draw_chance 1.20 ["
    ) in flat
    assert "; next: cell 4 point_estimate +0.200 [" in flat
    assert lines[-1] == "In the report: the frontier's numbers."
    # with room, the frontier's means
    flat = _one_line(sweep_headline_text(build_sweep_headline(results, KEYS), max_lines=100))
    assert (
        "Pareto-efficient (mean wait, true skill gap): cell 1 point_estimate 18.0 s, 2.00 skill "
        "points; cell 1 draw_chance 18.6 s, 1.90 skill points; cell 3 point_estimate 36.0 s, "
        "1.50 skill points\narrivals.rate=4: "
    ) in flat
    assert "In the report" not in flat


def test_the_bounds_are_never_best_and_each_cell_gets_its_answer() -> None:
    means = {}
    for cell in (1, 2, 3, 4):
        means[(cell, "uniform_random")] = (2.0, 0.05, "A")  # the quickest, the least fair
        means[(cell, "draw_chance")] = (1.5 + 0.1 * cell, 0.30, "A")
        means[(cell, "oracle")] = (1.0, 0.40, "A")  # the fairest
    results = _results(means)
    headline = build_sweep_headline(results, KEYS)
    for setting in headline.settings:
        assert {c.policy for c in setting.choices} == {"draw_chance"}
        assert {p.best.policy for p in setting.picks} == {"draw_chance"}
        assert all(s.choice.policy == "draw_chance" for s in setting.frontier)
    # the answer of answer.py per cell: the same shared noise, so exact shares, and a mean
    # wait's difference of zero width, which no sentence quotes (issue 45, item 1)
    sentences = {(c, p): s for setting in headline.settings for c, p, s in setting.answers}
    assert set(sentences) == {(c, "draw_chance") for c in (1, 2, 3, 4)}
    for cell, share in ((1, 40), (2, 30), (3, 20), (4, 10)):
        runs = results[results["cell"] == cell]
        policies = ["uniform_random", "draw_chance", "oracle"]
        assert sentences[(cell, "draw_chance")] == answer_sentence(runs_answers(runs, policies)[0])
        assert sentences[(cell, "draw_chance")] == (
            f"draw_chance captures {share}% [{share}%, {share}%] of the fairness the oracle adds "
            "over random pairing (true skill gap)."
        )
    markdown = render_markdown(sweep_headline_blocks(headline))
    assert "uniform_random and oracle are bounds, never ranked" in markdown
    assert "**Cell 3:** draw_chance captures 20% [20%, 20%]" in markdown
    text = sweep_headline_text(headline, max_lines=100)
    assert "  cell 1: draw_chance captures 40% [40%, 40%] of the fairness" in text
    assert all(len(line) <= TERMINAL_WIDTH for line in text.splitlines())
    short = sweep_headline_text(headline)
    assert len(short.splitlines()) <= MAX_TERMINAL_LINES
    assert short.splitlines()[-1].startswith("In the report: the answer per cell and policy")


def test_what_does_not_fit_the_terminal_is_left_to_the_report() -> None:
    rates = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    rows = []
    for cell, (tick, rate) in enumerate(itertools.product([0.25, 1.0], rates), 1):
        for r in range(3):
            rows.append(
                {
                    "cell": cell,
                    "matchmaker.tick": tick,
                    "arrivals.rate": rate,
                    "policy": "draw_chance",
                    "replication": r + 1,
                    QUEUE: 0.1 * tick * rate + 0.01 * r,
                    GAP: 2.0 - tick + 0.05 * r * rate,
                }
            )
    headline = build_sweep_headline(pd.DataFrame(rows), KEYS)
    assert len(headline.settings) == 6
    lines = sweep_headline_text(headline).splitlines()
    assert len(lines) <= MAX_TERMINAL_LINES
    assert lines[-1].startswith("In the report:") and "more settings." in lines[-1]
    # one policy: the choices are named by their cells alone
    assert "arrivals.rate=1: fairest (true skill gap): cell 7 1.05 [" in _one_line("\n".join(lines))


def test_a_grid_of_choices_only_is_one_setting() -> None:
    results = _results()
    results = results[results["arrivals.rate"] == 2.0].drop(columns=["arrivals.rate"])
    headline = build_sweep_headline(results, ["matchmaker.tick"])
    assert len(headline.settings) == 1 and headline.settings[0].cells == (1, 3)
    text = sweep_headline_text(headline)
    assert text.splitlines()[0].startswith("Sweep headline (mean [95% CI] of 5 replications")
    assert "\nAll 2 cells: fairest (true skill gap): cell 3 point_estimate" in text


def test_no_successful_run_and_one_replication(results: pd.DataFrame) -> None:
    empty = build_sweep_headline(results.iloc[:0], KEYS)
    assert sweep_headline_text(empty) == (
        "Sweep headline: no run succeeded, so there is nothing to compare."
    )
    one = build_sweep_headline(results[results["replication"] == 1], KEYS)
    text = _one_line(sweep_headline_text(one))
    assert (
        "fairest (true skill gap): cell 3 point_estimate 1.49 skill points (1 replication: no "
        in text
    )


# --------------------------------------------------------------------------------------------
# lobbysim sweep

TINY = """\
name: tiny
horizon: 40
warmup: 5
seed: 4
replications: 2
arrivals: {name: poisson, rate: 1.5}
population: {patience_mean: 3.0, session_games_mean: 4}
game: {length: 8}
matchmaker: {policy: draw_chance, threshold: [[0, 0.5], [1, 0.0]]}
records: {ratings_every: 20}
"""


def test_lobbysim_sweep_prints_the_headline_before_the_report_and_puts_it_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(TINY)
    out = tmp_path / "out"
    argv = ["sweep", str(scenario), "--grid", "matchmaker.tick=0.25,1", "--grid"]
    argv += ["arrivals.rate=1,2", "--policies", "point_estimate,draw_chance", "--jobs", "1"]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("sweep: 4 cells x 2 policies x 2 replications = 16 runs")
    assert lines[1].startswith("Sweep headline per arrivals.rate (mean [95% CI] of 2 replications")
    assert lines[2] == "matchmaker.tick: 0.25 in cells 1, 2; 1 in cells 3, 4"
    assert lines[3].startswith("arrivals.rate=1: fairest (true skill gap): ")
    assert lines[-2:] == [f"wrote {out}", f"Report: {out / 'report.html'}"]
    assert len(lines) - 3 <= MAX_TERMINAL_LINES
    assert all(len(line) <= TERMINAL_WIDTH for line in lines[1:-2])
    # the report: the headline right after the title and what was run, the long table folded
    markdown = (out / "report.md").read_text()
    headings = re.findall(r"^#+ .*$", markdown, flags=re.MULTILINE)
    assert headings[:3] == ["# Sweep: tiny", "## Headline", "### arrivals.rate=1 (cells 1, 3)"]
    assert markdown.index("## Headline") < markdown.index("## Set-up")
    headline = build_sweep_headline(pd.read_csv(out / "results.csv"), KEYS)
    assert render_markdown(sweep_headline_blocks(headline)) in markdown
    page = (out / "report.html").read_text()
    assert page.index("<h2>Headline</h2>") < page.index("<h2>Set-up</h2>")
    assert "<summary>Every cell&#x27;s headline metrics (8 rows)</summary>" in page


def test_the_report_written_from_a_frame_has_the_headline_first(
    results: pd.DataFrame, tmp_path: Path
) -> None:
    write_sweep_report(results, None, KEYS, tmp_path, title="Sweep: synthetic", driver="bayesian")
    markdown = (tmp_path / "report.md").read_text()
    first = markdown.split("\n## ")[1]
    assert first.startswith("Headline\n")
    assert "cell 3 point_estimate" in first
