"""The sweep report: the Pareto front, the cell summary, the files, the tables and determinism."""

from __future__ import annotations

import base64
import itertools
import math
import struct
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure
from scipy import stats

from lobbysim.reporting.document import format_interval
from lobbysim.reporting.figures import captured_figures
from lobbysim.reporting.sweep import write_sweep_report
from lobbysim.reporting.sweep_headline import build_sweep_headline
from lobbysim.reporting.sweep_key_figures import to_scale
from lobbysim.reporting.sweep_summary import (
    by_key_files,
    by_key_summary,
    headline_metrics,
    pareto_front,
    slug,
    summarise_cells,
)
from lobbysim.stats.metrics import metric_names, metric_support
from tests.reporting.layout_helpers import layout_problems

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
KEYS = ["matchmaker.tick", "arrivals.rate"]
POLICIES = ["point_estimate", "draw_chance"]
TITLE = "Sweep <quickstart> & co"
DRIVER = "bayesian"


# --------------------------------------------------------------------------------------------
# Synthetic sweeps


def _results(
    grid: dict[str, Sequence[object]],
    policies: Sequence[str],
    replications: int,
    *,
    seed: int = 1,
) -> pd.DataFrame:
    """Return a results frame over the grid's Cartesian product, with a built-in trade-off.

    Waiting (a larger numeric grid value, a later policy) lengthens the p90 queue time and
    raises the draw probability; ``sph_elo`` has no RMSE (it is not on the skill scale).
    """
    rng = np.random.default_rng(seed)
    names = metric_names(["bayesian", "sph_elo"])
    rows = []
    keys = list(grid)
    for cell, values in enumerate(itertools.product(*grid.values()), start=1):
        push = sum(float(v) if isinstance(v, int | float) else len(str(v)) for v in values)
        for p, policy in enumerate(policies):
            for r in range(1, replications + 1):
                metrics = {name: float(rng.normal(1.0, 0.1)) for name in names}
                metrics["queue_time_p90"] = 2.0 + push + 1.5 * p + float(rng.normal(0, 0.3))
                metrics["draw_prob_true_mean"] = (
                    0.3 + 0.02 * push + 0.03 * p + float(rng.normal(0, 0.01))
                )
                # the headline's: the mean wait against the true skill gap, a trade-off with
                # some choices dominated (the second policy waits longer, not always fairer)
                metrics["queue_time_mean"] = 0.5 + 0.3 * push + 0.4 * p + float(rng.normal(0, 0.1))
                metrics["skill_gap_true_mean"] = (
                    2.0 - 0.1 * push + 0.05 * p * (-1) ** cell + float(rng.normal(0, 0.03))
                )
                metrics["bayesian.rating_rmse"] = (
                    1.0 - 0.05 * push + 0.1 * p * (-1) ** (cell + 1) + float(rng.normal(0, 0.03))
                )
                metrics["sph_elo.rating_rmse"] = math.nan
                rows.append(
                    {
                        "cell": cell,
                        **dict(zip(keys, values, strict=True)),
                        "policy": policy,
                        "replication": r,
                        "seed": 1000 + r,
                        **metrics,
                    }
                )
    return pd.DataFrame(rows)


def _failures(rows: Sequence[dict[str, object]]) -> pd.DataFrame:
    columns = ["cell", *KEYS, "policy", "replication", "seed", "error"]
    return pd.DataFrame(list(rows), columns=columns)


FAILURES = _failures(
    [
        {
            "cell": 5,
            "matchmaker.tick": 1.0,
            "arrivals.rate": 4.0,
            "policy": "draw_chance",
            "replication": 4,
            "seed": 77,
            "error": "Traceback (most recent call last):\n  File 'x.py'\nValueError: bad | rate",
        },
        {
            "cell": 2,
            "matchmaker.tick": 0.25,
            "arrivals.rate": 4.0,
            "policy": "point_estimate",
            "replication": 4,
            "seed": 78,
            "error": "worker died",
        },
    ]
)


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return _results({"matchmaker.tick": [0.25, 1.0], "arrivals.rate": [2.0, 4.0, 8.0]}, POLICIES, 3)


@pytest.fixture(scope="module")
def written_report(
    results: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Figure]]:
    out = tmp_path_factory.mktemp("sweep")
    with captured_figures() as figures:
        written = write_sweep_report(
            results, FAILURES, KEYS, out, title=TITLE, driver=DRIVER, scenario_line="quickstart"
        )
    assert written == [
        out / "cells.csv",
        out / "tradeoff_draw.png",
        out / "tradeoff_rating.png",
        out / "by_matchmaker_tick.png",
        out / "by_arrivals_rate.png",
        out / "report.md",
        out / "report.html",
    ]
    return out, figures


@pytest.fixture(scope="module")
def report(written_report: tuple[Path, dict[str, Figure]]) -> Path:
    return written_report[0]


@pytest.fixture(scope="module")
def figures(written_report: tuple[Path, dict[str, Figure]]) -> dict[str, Figure]:
    return written_report[1]


def _section(markdown: str, heading: str) -> str:
    """Return the text under a heading (any level) up to the next heading of that level or up."""
    marks = heading.split(" ", 1)[0]
    start = markdown.index(f"{heading}\n")
    ends = [markdown.find(f"\n{'#' * k} ", start + 1) for k in range(1, len(marks) + 1)]
    ends = [e for e in ends if e >= 0]
    return markdown[start : min(ends) if ends else None]


def _table_rows(section: str) -> list[list[str]]:
    """Return the cells of the body rows of the first Markdown table in a section."""
    lines = [line for line in section.splitlines() if line.startswith("|")]
    assert len(lines) >= 2 and set(lines[1].replace("|", "").split()) == {"---"}
    end = next((k for k, line in enumerate(lines[2:], 2) if set(line) <= {"|", " ", "-"}), None)
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in lines[2:end]]


def _t_interval(values: np.ndarray) -> tuple[float, float, float]:
    values = values[np.isfinite(values)]
    mean = float(values.mean())
    if values.size < 2:
        return mean, math.nan, math.nan
    low, high = stats.t.interval(0.95, values.size - 1, loc=mean, scale=stats.sem(values))
    return mean, float(low), float(high)


# --------------------------------------------------------------------------------------------
# pareto_front


def _brute_front(x: np.ndarray, y: np.ndarray, minimize_x: bool, minimize_y: bool) -> np.ndarray:
    def as_good(u: float, v: float, minimize: bool) -> bool:
        return u <= v if minimize else u >= v

    def better(u: float, v: float, minimize: bool) -> bool:
        return u < v if minimize else u > v

    valid = ~(np.isnan(x) | np.isnan(y))
    out = np.zeros(x.size, dtype=bool)
    for i in np.flatnonzero(valid):
        out[i] = not any(
            as_good(x[j], x[i], minimize_x)
            and as_good(y[j], y[i], minimize_y)
            and (better(x[j], x[i], minimize_x) or better(y[j], y[i], minimize_y))
            for j in np.flatnonzero(valid)
            if j != i
        )
    return out


_coordinate = st.one_of(
    st.sampled_from([0.0, 1.0, 2.0, 3.0, math.nan, math.inf, -math.inf]),  # ties and oddities
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
)


@settings(max_examples=300, deadline=None)
@given(
    points=st.lists(st.tuples(_coordinate, _coordinate), max_size=25),
    minimize_x=st.booleans(),
    minimize_y=st.booleans(),
)
def test_pareto_front_matches_the_brute_force_definition(
    points: list[tuple[float, float]], minimize_x: bool, minimize_y: bool
) -> None:
    x = np.array([p[0] for p in points], dtype=float)
    y = np.array([p[1] for p in points], dtype=float)
    got = pareto_front(x, y, minimize_x=minimize_x, minimize_y=minimize_y)
    assert got.dtype == bool and got.shape == x.shape
    np.testing.assert_array_equal(got, _brute_front(x, y, minimize_x, minimize_y))


@pytest.mark.parametrize(
    ("x", "y", "kwargs", "expected"),
    [
        # a plain trade-off: (3, 3) is dominated by (2, 2)
        ([1, 2, 3], [3, 2, 3], {}, [True, True, False]),
        # a tie in x: the lower y wins, the higher is dominated
        ([1, 1, 2], [5, 4, 1], {}, [False, True, True]),
        # a tie in y: the lower x wins
        ([1, 2, 0.5], [2, 2, 3], {}, [True, False, True]),
        # duplicates are on the front together ...
        ([1, 1, 2], [1, 1, 0], {}, [True, True, True]),
        # ... or off it together
        ([2, 2, 1], [2, 2, 1], {}, [False, False, True]),
        # NaN points are never on it and dominate nothing
        ([np.nan, 1, 0], [0, np.nan, 5], {}, [False, False, True]),
        ([np.nan, np.nan], [np.nan, np.nan], {}, [False, False]),
        # maximise y (queue time against draw probability)
        ([1, 2, 3], [0.3, 0.4, 0.35], {"minimize_y": False}, [True, True, False]),
        # maximise both
        ([1, 2, 2], [2, 1, 2], {"minimize_x": False, "minimize_y": False}, [False, False, True]),
        # maximise x, minimise y
        ([1, 2, 3], [1, 1, 2], {"minimize_x": False}, [False, True, True]),
        ([], [], {}, []),
        ([7.0], [-1.0], {}, [True]),
    ],
)
def test_pareto_front_hand_cases(
    x: list[float], y: list[float], kwargs: dict[str, bool], expected: list[bool]
) -> None:
    got = pareto_front(np.array(x, dtype=float), np.array(y, dtype=float), **kwargs)
    assert got.tolist() == expected


def test_pareto_front_rejects_mismatched_inputs() -> None:
    with pytest.raises(ValueError, match="1-d of one length"):
        pareto_front([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="1-d of one length"):
        pareto_front(np.zeros((2, 2)), np.zeros((2, 2)))


# --------------------------------------------------------------------------------------------
# summarise_cells and the per-key averages


def test_summarise_cells_matches_a_hand_computation() -> None:
    nan = math.nan
    frame = pd.DataFrame(
        {
            "cell": [2, 2, 2, 1, 1, 1, 2, 1],
            "mode": ["b", "b", "b", "a", "a", "a", "b", "a"],
            "policy": ["zeta", "zeta", "zeta", "zeta", "zeta", "zeta", "alpha", "alpha"],
            "replication": [1, 2, 3, 1, 2, 3, 1, 1],
            "seed": [11, 12, 13, 11, 12, 13, 11, 11],
            "wait": [1.0, 2.0, 4.0, 3.0, nan, 5.0, 7.0, 8.0],
            "draw": [nan, nan, nan, 0.5, 0.25, 0.75, 0.1, nan],
        }
    )
    summary = summarise_cells(frame, ["mode"])
    assert list(summary.columns) == [
        "cell",
        "mode",
        "policy",
        "metric",
        "mean",
        "sd",
        "n",
        "ci_low",
        "ci_high",
    ]
    # cell ascending, then policy in first-appearance order, then metric in column order
    assert list(zip(summary["cell"], summary["policy"], summary["metric"], strict=True)) == [
        (1, "zeta", "wait"),
        (1, "zeta", "draw"),
        (1, "alpha", "wait"),
        (1, "alpha", "draw"),
        (2, "zeta", "wait"),
        (2, "zeta", "draw"),
        (2, "alpha", "wait"),
        (2, "alpha", "draw"),
    ]
    assert summary["mode"].tolist() == ["a"] * 4 + ["b"] * 4
    rows = summary.set_index(["cell", "policy", "metric"])
    for (cell, policy), group in frame.groupby(["cell", "policy"]):
        for metric in ("wait", "draw"):
            values = group[metric].to_numpy(dtype=float)
            finite = values[np.isfinite(values)]
            row = rows.loc[(cell, policy, metric)]
            assert row["n"] == finite.size
            if finite.size == 0:
                assert all(math.isnan(row[c]) for c in ("mean", "sd", "ci_low", "ci_high"))
                continue
            mean, low, high = _t_interval(values)
            assert row["mean"] == pytest.approx(mean)
            if finite.size == 1:
                assert all(math.isnan(row[c]) for c in ("sd", "ci_low", "ci_high"))
            else:
                assert row["sd"] == pytest.approx(np.std(finite, ddof=1))
                assert row["ci_low"] == pytest.approx(low)
                assert row["ci_high"] == pytest.approx(high)
    # spot values: cell 1 zeta wait is 3 and 5 (NaN left out); cell 2 zeta wait 1, 2, 4
    assert rows.loc[(1, "zeta", "wait"), "mean"] == pytest.approx(4.0)
    assert rows.loc[(1, "zeta", "wait"), "n"] == 2
    half = stats.t.ppf(0.975, 2) * np.std([1.0, 2.0, 4.0], ddof=1) / math.sqrt(3)
    assert rows.loc[(2, "zeta", "wait"), "ci_high"] == pytest.approx(7 / 3 + half)


def test_summarise_cells_rejects_missing_and_clashing_columns(results: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="lacks the columns"):
        summarise_cells(results.drop(columns=["policy"]), KEYS)
    with pytest.raises(ValueError, match="lacks the columns"):
        summarise_cells(results, [*KEYS, "game.length"])
    with pytest.raises(ValueError, match="report column"):
        summarise_cells(results.assign(metric=1.0), [*KEYS, "metric"])


def test_by_key_summary_averages_other_keys_per_replication(results: pd.DataFrame) -> None:
    table = by_key_summary(results, "arrivals.rate", "queue_time_p90")
    assert table["policy"].tolist() == [p for p in POLICIES for _ in range(3)]
    assert table["value"].tolist() == [2.0, 4.0, 8.0] * 2
    row = table[(table["policy"] == "draw_chance") & (table["value"] == 4.0)].iloc[0]
    pooled = results[(results["policy"] == "draw_chance") & (results["arrivals.rate"] == 4.0)]
    per_replication = [
        pooled.loc[pooled["replication"] == r, "queue_time_p90"].mean() for r in (1, 2, 3)
    ]
    mean, low, high = _t_interval(np.array(per_replication))
    assert row["n"] == 3
    assert (row["mean"], row["ci_low"], row["ci_high"]) == pytest.approx((mean, low, high))


def test_slugs_and_by_key_file_names() -> None:
    assert slug("matchmaker.tick") == "matchmaker_tick"
    assert slug("Game.Team Size!") == "game_team_size"
    assert slug("...") == "key"
    assert by_key_files(["a.b", "a_b", "a-b", "c"]) == {
        "a.b": "by_a_b.png",
        "a_b": "by_a_b_2.png",
        "a-b": "by_a_b_3.png",
        "c": "by_c.png",
    }


# --------------------------------------------------------------------------------------------
# write_sweep_report: files


def _pngs(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.png"))


def _assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC), path.name
    assert len(data) > 20_000, path.name  # drawn, not an empty canvas
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 600 and height >= 400, path.name


def test_every_file_is_written_and_the_pngs_are_images(report: Path) -> None:
    assert {p.name for p in report.iterdir()} == {
        "cells.csv",
        "tradeoff_draw.png",
        "tradeoff_rating.png",
        "by_matchmaker_tick.png",
        "by_arrivals_rate.png",
        "report.md",
        "report.html",
    }
    for path in _pngs(report):
        _assert_png(path)


def test_cells_csv_is_the_cell_summary(report: Path, results: pd.DataFrame) -> None:
    written = pd.read_csv(report / "cells.csv")
    expected = summarise_cells(results, KEYS)
    pd.testing.assert_frame_equal(written, expected, check_dtype=False)
    assert len(written) == 6 * 2 * len(metric_names(["bayesian", "sph_elo"]))


@pytest.mark.slow
def test_writing_twice_gives_identical_bytes(
    report: Path, results: pd.DataFrame, tmp_path: Path
) -> None:
    write_sweep_report(
        results.copy(),
        FAILURES.copy(),
        list(KEYS),
        tmp_path,
        title=TITLE,
        driver=DRIVER,
        scenario_line="quickstart",
    )
    names = sorted(p.name for p in report.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    for name in names:
        assert (tmp_path / name).read_bytes() == (report / name).read_bytes(), name


# --------------------------------------------------------------------------------------------
# write_sweep_report: report.md


def _formatted(results: pd.DataFrame, cell: int, policy: str, metric: str) -> str:
    """Return the cell's interval as the report shows it: cut to the metric's support."""
    mine = results[(results["cell"] == cell) & (results["policy"] == policy)]
    mean, low, high = _t_interval(mine[metric].to_numpy(dtype=float))
    bottom, top = metric_support(metric)
    if math.isfinite(low):  # never past the mean (the synthetic values can leave the support)
        low, high = min(max(low, bottom), mean), max(min(high, top), mean)
    return format_interval(mean, low, high)


def _brute_frontiers(results: pd.DataFrame, y: str, *, maximise_y: bool) -> dict[str, set]:
    """Return per setting (arrivals.rate, the key the matchmaker does not choose) the (cell,
    policy) on the brute-force frontier of mean queue time against ``y``, by the means."""
    means = results.groupby(["cell", "policy"], sort=False)[["queue_time_mean", y]].mean()
    means = means.reset_index()
    rates = results.drop_duplicates("cell").set_index("cell")["arrivals.rate"]
    means["setting"] = [f"arrivals.rate={rates[c]:g}" for c in means["cell"]]
    out = {}
    for setting, group in means.groupby("setting", sort=False):
        mask = _brute_front(
            group["queue_time_mean"].to_numpy(dtype=float),
            group[y].to_numpy(dtype=float),
            True,
            not maximise_y,
        )
        out[str(setting)] = {
            (int(c), str(p))
            for c, p, on in zip(group["cell"], group["policy"], mask, strict=True)
            if on
        }
    return out


def _drawn_frontiers(fig: Figure) -> dict[str, set]:
    """Return per panel (its title: the setting) the (cell, policy) of its ringed points."""
    out = {}
    for ax in fig.axes:
        if not ax.get_visible() or not ax.get_title():
            continue
        choices = {
            tuple(line.get_xydata()[0]): tuple(line.get_gid().split(":")[1:])
            for line in ax.get_lines()
            if str(line.get_gid()).startswith("choice:")
        }
        (rings,) = [line for line in ax.get_lines() if line.get_gid() == "frontier"]
        out[ax.get_title()] = {
            (int(choices[tuple(xy)][0]), choices[tuple(xy)][1]) for xy in rings.get_xydata()
        }
    return out


def test_the_tradeoff_figure_draws_the_frontier_the_headline_states(
    figures: dict[str, Figure], results: pd.DataFrame
) -> None:
    """One panel per setting (arrivals.rate), its ringed points exactly the frontier the
    headline lists for that setting, which is the brute-force frontier of its choices on the
    headline's metrics (mean queue time against the true skill gap)."""
    headline = build_sweep_headline(results, KEYS)
    assert headline.fairness == "skill_gap_true_mean"
    stated = {
        ", ".join(f"{k}={v}" for k, v in s.values.items()): {
            (step.choice.cell, step.choice.policy) for step in s.frontier
        }
        for s in headline.settings
    }
    expected = _brute_frontiers(results, "skill_gap_true_mean", maximise_y=False)
    assert stated == expected
    drawn = _drawn_frontiers(figures["tradeoff_draw.png"])
    assert drawn == stated
    # the test can fail: some setting has a dominated choice, and some a frontier of several
    assert any(len(f) < 4 for f in expected.values())
    assert any(len(f) > 1 for f in expected.values())
    fig = figures["tradeoff_draw.png"]
    (ax, *_) = fig.axes
    # the mean waits reach 2 min: the sweep's one unit is minutes, in the headline and figure
    assert not headline.seconds and results["queue_time_mean"].max() >= 2.0
    assert ax.get_xlabel().startswith("mean queue time (min)")
    assert ax.get_ylabel().startswith("true skill gap")


def test_the_rating_figure_and_its_table_give_each_settings_frontier(
    report: Path, figures: dict[str, Figure], results: pd.DataFrame
) -> None:
    expected = _brute_frontiers(results, "bayesian.rating_rmse", maximise_y=False)
    assert _drawn_frontiers(figures["tradeoff_rating.png"]) == expected
    text = (report / "report.md").read_text(encoding="utf-8")
    rows = _table_rows(_section(text, "### Queue time against the rating error of bayesian"))
    listed: dict[str, set] = {}
    for row in rows:
        listed.setdefault(row[0], set()).add((int(row[1]), row[3]))
    assert listed == expected
    for row in rows:
        mine = results[(results["cell"] == int(row[1])) & (results["policy"] == row[3])]
        assert row[2] == f"{mine['matchmaker.tick'].iloc[0]:g}"


@pytest.mark.slow
def test_the_tradeoff_figures_have_no_overlapping_or_cut_labels(
    figures: dict[str, Figure],
) -> None:
    assert set(figures) == {
        "tradeoff_draw.png",
        "tradeoff_rating.png",
        "by_matchmaker_tick.png",
        "by_arrivals_rate.png",
    }
    for name, fig in figures.items():
        assert layout_problems(fig) == [], name


@pytest.mark.slow
def test_close_values_of_a_key_are_evenly_spaced_and_every_label_shows(tmp_path: Path) -> None:
    """Base sizes 100, 110, 1,000 and 1,010 to scale: the labels of 100 and 110 would overlap;
    the per-key figure spaces the values evenly (and says so), every label shown, none
    overlapping or cut at the edge. Well-spread values stay to scale."""
    frame = _results({"base.size": [100, 110, 1000, 1010]}, POLICIES, 2)
    with captured_figures() as drawn:
        write_sweep_report(frame, None, ["base.size"], tmp_path, title="sizes", driver=DRIVER)
    fig = drawn["by_base_size.png"]
    assert layout_problems(fig) == []
    for ax in fig.axes:
        if ax.get_visible() and ax.get_title():
            assert list(ax.get_xticks()) == [0.0, 1.0, 2.0, 3.0]
            shown = [t.get_text() for t in ax.get_xticklabels() if t.get_visible()]
            assert shown == ["100", "110", "1000", "1010"]
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "The values are evenly spaced, not to scale" in text
    assert to_scale([0.25, 0.5, 1.0], True) and to_scale([2, 4, 8], True)
    assert not to_scale([100, 110, 1000], True) and not to_scale(["a", "b"], False)


@pytest.mark.slow
def test_the_quickstarts_threshold_schedules_label_their_ticks_without_overlap(
    tmp_path: Path,
) -> None:
    """The quickstart's own sweep: three threshold schedules (long labels) by two base sizes.
    Each schedule's label is wrapped at its spaces, shown whole on its tick, none turned,
    overlapping or cut; the trade-off has a panel per base size."""
    schedules = ["[[0, 0.0]]", "[[0, 0.5], [1, 0.3], [2, 0.0]]", "[[0, 0.6], [2, 0.4], [4, 0.0]]"]
    grid = {"matchmaker.threshold": schedules, "base.size": [250, 500]}
    frame = _results(grid, ["uniform_random", "draw_chance", "oracle"], 2)
    with captured_figures() as drawn:
        write_sweep_report(frame, None, list(grid), tmp_path, title="thresholds", driver=DRIVER)
    for name, fig in drawn.items():
        assert layout_problems(fig) == [], name
    for ax in drawn["by_matchmaker_threshold.png"].axes:
        if ax.get_visible() and ax.get_title():
            labels = [t for t in ax.get_xticklabels() if t.get_visible()]
            assert [t.get_text().replace("\n", " ") for t in labels] == schedules
            assert all(t.get_rotation() == 0 for t in labels)
    titles = [ax.get_title() for ax in drawn["tradeoff_draw.png"].axes if ax.get_title()]
    assert titles == ["base.size=250", "base.size=500"]


def test_markdown_has_title_setup_sections_and_figures(report: Path) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    assert text.startswith(f"# {TITLE}\n")
    assert "6 cells" in text and "2 policies" in text and "3 replications" in text
    assert "36 runs succeeded and 2 failed" in text
    setup = _section(text, "## Set-up")
    assert "**Swept matchmaker.tick**: 0.25, 1" in setup
    assert "**Swept arrivals.rate**: 2, 4, 8" in setup
    assert "**Driving rater**: bayesian" in setup
    order = ["## Trade-offs", "## Per swept parameter", "## Cells", "## Failed runs"]
    positions = [text.index(f"{h}\n") for h in order]
    assert positions == sorted(positions)
    for name in ("tradeoff_draw.png", "tradeoff_rating.png"):
        assert f"]({name})" in _section(text, "## Trade-offs")
    per_key = _section(text, "## Per swept parameter")
    for name in ("by_matchmaker_tick.png", "by_arrivals_rate.png"):
        assert f"]({name})" in per_key
    assert "averag" in per_key


def test_cells_table_has_a_row_per_cell_and_policy(report: Path, results: pd.DataFrame) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    section = _section(text, "## Cells")
    headline = list(headline_metrics(DRIVER))
    header = ["cell", *KEYS, "policy", "runs", *headline]
    assert "| " + " | ".join(header) + " |" in section
    rows = _table_rows(section)
    assert [(int(r[0]), r[3]) for r in rows] == [(c, p) for c in range(1, 7) for p in POLICIES]
    for row in rows:
        cell, policy = int(row[0]), row[3]
        assert row[4] == "3"
        for metric, shown in zip(headline, row[5:], strict=True):
            assert shown == _formatted(results, cell, policy, metric), (cell, policy, metric)


def test_failed_runs_are_listed(report: Path) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    rows = _table_rows(_section(text, "## Failed runs"))
    assert rows == [
        ["2", "0.25", "4", "point_estimate", "4", "78", "worker died"],
        ["5", "1", "4", "draw_chance", "4", "77", "ValueError: bad \\| rate"],
    ]


# --------------------------------------------------------------------------------------------
# write_sweep_report: report.html


class _Page(HTMLParser):
    VOID = frozenset({"meta", "img", "br", "hr", "link", "input"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.images: list[str] = []
        self.sources: list[str] = []
        self.tags: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        if tag == "img":  # embedded: the data URI of the PNG file data-file names
            values = dict(attrs)
            self.images.append(str(values["data-file"]))
            self.sources.append(str(values["src"]))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _page(folder: Path) -> tuple[_Page, str]:
    source = (folder / "report.html").read_text(encoding="utf-8")
    page = _Page()
    page.feed(source)
    page.close()
    assert not page.errors and not page.stack
    return page, source


def test_html_embeds_every_png_and_escapes_text(report: Path) -> None:
    page, source = _page(report)
    assert sorted(page.images) == [p.name for p in _pngs(report)]
    for name, src in zip(page.images, page.sources, strict=True):
        prefix = "data:image/png;base64,"
        assert src.startswith(prefix)
        assert base64.b64decode(src[len(prefix) :]) == (report / name).read_bytes()
    assert "script" not in page.tags
    assert "<title>Sweep &lt;quickstart&gt; &amp; co</title>" in source
    assert "<quickstart>" not in source
    assert "ValueError: bad | rate" in "".join(page.text)


# --------------------------------------------------------------------------------------------
# Edge cases: one replication, a string key, one policy, no RMSE, all-NaN cells, no runs


def test_single_replication_string_key_single_policy(tmp_path: Path) -> None:
    frame = _results({"matchmaker.assignment": ["greedy", "blossom", "random"]}, ["kg"], 1)
    # a cell without games' fairness: no skill gap, no draw probability
    frame.loc[frame["cell"] == 2, ["skill_gap_true_mean", "draw_prob_true_mean"]] = math.nan
    frame.loc[:, "win_ratio_dispersion"] = math.nan  # a metric without any value
    written = write_sweep_report(
        frame, None, ["matchmaker.assignment"], tmp_path, title="one", driver="sph_elo"
    )
    names = [p.name for p in written]
    assert names == [
        "cells.csv",
        "tradeoff_draw.png",
        "by_matchmaker_assignment.png",
        "report.md",
        "report.html",
    ]
    for path in _pngs(tmp_path):
        _assert_png(path)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    # sph_elo has no RMSE: the figure is skipped, and the report says so
    assert "not drawn: the driving rater sph_elo has no rating_rmse" in text
    assert "tradeoff_rating.png" not in text
    # the cells keep their first-appearance order, and one replication gives no intervals
    rows = _table_rows(_section(text, "## Cells"))
    assert [r[1] for r in rows] == ["greedy", "blossom", "random"]
    assert all(r[3] == "1" for r in rows)
    assert rows[0][4].endswith(" [n/a]")
    assert rows[1][6] == "n/a"  # cell 2's draw probability
    assert "**Swept matchmaker.assignment**: greedy, blossom, random" in text
    # no choice keys: the trade-off is one panel of every cell, the cell without a skill gap
    # left out of it
    assert "Every cell is a choice of the matchmaker: one panel" in text
    assert "Left out for lack of data: sph_elo.rating_rmse, win_ratio_dispersion." in text
    assert "None: every run finished." in _section(text, "## Failed runs")
    page, _ = _page(tmp_path)
    assert sorted(page.images) == [p.name for p in _pngs(tmp_path)]


def test_no_successful_run_still_gives_a_report(tmp_path: Path, results: pd.DataFrame) -> None:
    written = write_sweep_report(
        results.iloc[0:0], FAILURES, KEYS, tmp_path, title="all failed", driver=DRIVER
    )
    assert [p.name for p in written] == ["cells.csv", "report.md", "report.html"]
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "0 runs succeeded and 2 failed" in text
    assert "No run succeeded" in text
    assert len(_table_rows(_section(text, "## Failed runs"))) == 2
    assert pd.read_csv(tmp_path / "cells.csv").empty
