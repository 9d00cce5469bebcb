"""The report's headline and trade-off figure, p-values with the Benjamini-Hochberg correction,
intervals cut to a metric's support, and what ``lobbysim run`` and ``compare`` print."""

from __future__ import annotations

import contextlib
import io
import math
import re
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lobbysim.cli.main import main
from lobbysim.commands import run as runs
from lobbysim.experiments.replications import (
    DIFFERENCE_COLUMNS,
    ExperimentResult,
    paired_differences,
    summarise,
)
from lobbysim.reporting.answer import queue_seconds
from lobbysim.reporting.document import format_interval, format_number, format_p_value
from lobbysim.reporting.headline import (
    BASELINE_BEST,
    BETTER,
    NO_DIFFERENCE,
    NO_INTERVAL,
    TERMINAL_WIDTH,
    Estimate,
    build_headline,
    constant_metrics,
    constant_note,
    experiment_headline,
    item_sentence,
    value_text,
)
from lobbysim.reporting.run import differences_table
from lobbysim.reporting.tradeoff_figure import TRADEOFF_FIGURE_FILE, TRADEOFF_SIZE
from lobbysim.reporting.verdicts import HIGHER_IS_BETTER, better_direction
from lobbysim.reporting.verdicts import NO_DIFFERENCE as NOT_SIGNIFICANT
from lobbysim.stats.intervals import (
    benjamini_hochberg,
    detectable_difference,
    interval,
    paired_p_value,
)
from lobbysim.stats.metrics import metric_support
from tests.reporting.page_helpers import PageOrder

SMALL = """\
name: headline
horizon: 90
warmup: 10
seed: 3
arrivals: {name: poisson, rate: 2.0}
population:
  patience_mean: 3.0
  session_games_mean: 4
  prior: informative     # beliefs near the truth: skill matching pays at once
  prior_var_low: 0.2
  prior_var_high: 0.4
game: {length: 8}
matchmaker:
  policy: draw_chance
  threshold: [[0, 0.5], [1, 0.0]]
records: {ratings_every: 30}
"""

# uniform_random first: the skill-matching policies beat it on fairness by far, so the headline
# has a best policy to check against differences.csv.
POLICIES = ["uniform_random", "point_estimate", "draw_chance"]
HEADLINE_METRICS = [
    "queue_time_mean",
    "abandonment_rate",
    "draw_prob_true_mean",
    "skill_gap_true_mean",
    "bayesian.kendall_tau",
]


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scenario") / "headline.yaml"
    path.write_text(SMALL)
    return path


@pytest.fixture(scope="module")
def printed(scenario_file: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A real small ``lobbysim compare`` of two policies, 2 replications, and what it printed."""
    out = tmp_path_factory.mktemp("printed") / "cmp"
    argv = ["compare", str(scenario_file), "--policies", ",".join(POLICIES[:2])]
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        assert main([*argv, "--replications", "2", "--out", str(out), "--jobs", "2"]) == 0
    return out, stdout.getvalue()


@pytest.fixture(scope="module")
def compared(
    scenario_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, ExperimentResult]:
    out = tmp_path_factory.mktemp("compare") / "out"
    return runs.run(scenario_file, policies=POLICIES, replications=3, out=out, jobs=2)


# --------------------------------------------------------------------------------------------
# The headline against differences.csv, on a real comparison


@pytest.mark.slow
def test_the_headlines_numbers_are_the_rows_of_differences_csv(
    compared: tuple[Path, ExperimentResult],
) -> None:
    out, result = compared
    csv = pd.read_csv(out / "differences.csv")
    assert list(csv.columns) == DIFFERENCE_COLUMNS
    headline = experiment_headline(result)
    # significant verdicts first, each group in headline order
    assert sorted(item.metric for item in headline.items) == sorted(HEADLINE_METRICS)
    significant = [item.outcome in (BETTER, BASELINE_BEST) for item in headline.items]
    assert significant == sorted(significant, reverse=True)
    for group in (True, False):
        order = [i.metric for i, s in zip(headline.items, significant, strict=True) if s == group]
        assert order == [m for m in HEADLINE_METRICS if m in order]
    items = {item.metric: item for item in headline.items}
    # the skill-matching policies are better than uniform_random on both fairness metrics
    for metric in ("draw_prob_true_mean", "skill_gap_true_mean"):
        assert items[metric].outcome == BETTER
    report = (out / "report.md").read_text(encoding="utf-8")
    for item in headline.items:
        rows = csv[csv["metric"] == item.metric]
        sign = 1.0 if better_direction(item.metric) == HIGHER_IS_BETTER else -1.0
        better = rows[rows["significant"] & (sign * rows["mean"] > 0)]
        if better.empty:
            assert item.outcome != BETTER
            if item.outcome == NO_DIFFERENCE:  # shows the difference closest to significance
                closest = rows.loc[rows["p_adjusted"].idxmin()]
                assert item.difference is not None
                assert item.difference.policy == closest["policy"]
                assert item.difference.estimate.mean == pytest.approx(closest["mean"], rel=1e-12)
                assert item.difference.p_adjusted == pytest.approx(closest["p_adjusted"])
                # and what it could have detected: its row's detectable, at 80% power
                # (the abandonment rate's in percentage points, as its differences are shown)
                scale = 100.0 if item.metric == "abandonment_rate" else 1.0
                detectable = f"detectable: ±{format_number(scale * closest['detectable'])}"
                assert detectable in item_sentence(item, "uniform_random")
            continue
        expected = better.loc[(sign * better["mean"]).idxmax()]  # the largest improvement
        assert item.outcome == BETTER and item.best == expected["policy"]
        difference = item.difference
        assert difference is not None and difference.policy == expected["policy"]
        estimate = difference.estimate
        assert (estimate.mean, estimate.low, estimate.high) == pytest.approx(
            (expected["mean"], expected["ci_low"], expected["ci_high"]), rel=1e-12
        )
        assert difference.p_adjusted == pytest.approx(expected["p_adjusted"], rel=1e-12)
        assert expected["p_adjusted"] < 0.05
        # and the report says those numbers, as formatted from the CSV row
        low, high = expected["ci_low"], expected["ci_high"]
        numbers = value_text(Estimate(expected["mean"], low, high), item.metric, signed=True)
        sentence = item_sentence(item, "uniform_random")
        assert numbers in sentence and format_p_value(expected["p_adjusted"]) in sentence
        assert f"{expected['policy']} is best" in sentence
        assert sentence in report


def test_the_report_opens_with_the_headline_and_the_tradeoff_figure(
    compared: tuple[Path, ExperimentResult],
) -> None:
    out, _ = compared
    report = (out / "report.md").read_text(encoding="utf-8")
    first_details = report.index("\n## ")
    assert report.index("Benjamini-Hochberg adjusted p") < first_details
    assert report.index(f"]({TRADEOFF_FIGURE_FILE})") < first_details
    assert report.index("- **mean queue time (lower is better)**") < first_details
    assert report.count(f"]({TRADEOFF_FIGURE_FILE})") == 1  # not again under Figures
    data = (out / TRADEOFF_FIGURE_FILE).read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == tuple(round(150 * s) for s in TRADEOFF_SIZE)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.index(f'data-file="{TRADEOFF_FIGURE_FILE}"') < page.index("<h2>")
    # the page stands alone, and the title and the answers (bold) come before the figure
    tags = PageOrder()
    tags.feed(page)
    assert tags.linked == []
    order = tags.order
    assert order.index("h1:") < order.index("strong:") < order.index(f"img:{TRADEOFF_FIGURE_FILE}")


def test_summary_csv_holds_the_intervals_shown(compared: tuple[Path, ExperimentResult]) -> None:
    out, _ = compared
    summary = pd.read_csv(out / "summary.csv")
    for _, row in summary.iterrows():
        low, high = metric_support(row["metric"])
        if row["n"] >= 2:
            assert low <= row["ci_low"] <= row["mean"] <= row["ci_high"] <= high
    report = (out / "report.md").read_text(encoding="utf-8")
    row = summary[(summary.policy == "uniform_random") & (summary.metric == "queue_time_p90")]
    scale = 60.0 if queue_seconds(pd.read_csv(out / "replications.csv")) else 1.0
    shown = format_interval(*(scale * float(row.iloc[0][c]) for c in ("mean", "ci_low", "ci_high")))
    assert shown in report


# --------------------------------------------------------------------------------------------
# The terminal


@pytest.mark.slow
def test_compare_prints_the_headline_units_and_the_report(printed: tuple[Path, str]) -> None:
    out, text = printed
    assert "Benjamini-Hochberg adjusted p < 0.05" in text
    assert "mean queue time (lower is better): " in text
    assert re.search(r"queue_time_p90 +(s|min) ", text) and "games/h" in text
    assert re.search(r"queue_time_tail_mean +(s|min) ", text)  # the answer's tail, in the table
    assert text.rstrip().endswith(f"Report: {out / 'report.html'}")
    assert "nan" not in text.lower()


def test_compare_prints_what_a_comparison_without_a_difference_could_have_detected(
    printed: tuple[Path, str],
) -> None:
    out, text = printed
    csv = pd.read_csv(out / "differences.csv").set_index("metric")
    headline = text[text.index("Headline:") : text.index("Metrics (")]
    # 2 replications of point_estimate against uniform_random: the Kendall's tau of the driving
    # rater does not differ significantly, and the terminal says how large a difference it could
    # have detected and what more replications would detect
    tau = csv.loc["bayesian.kendall_tau"]
    assert not tau["significant"]
    entry = headline[headline.index("bayesian's Kendall's tau") :]
    flat = " ".join(entry.split())
    assert flat.startswith(
        "bayesian's Kendall's tau (tau, higher is better): no policy differs significantly from "
        "uniform_random ("
    )
    detectable = format_number(tau["detectable"])
    assert f"detectable: ±{detectable} at 80% power with 2 replications; ~" in flat
    assert f"replications would detect half that, ±{format_number(tau['detectable'] / 2)})" in flat
    # never "no difference" alone
    for line in headline.splitlines():
        assert len(line) <= TERMINAL_WIDTH, line
    assert headline.count("differs significantly") == headline.count("detectable: ±")


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "compare"])
def test_one_replication_prints_no_nan_and_no_verdict(
    command: str, scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / command
    argv = [command, str(scenario_file), "--replications", "1", "--out", str(out)]
    if command == "compare":
        argv += ["--policies", "point_estimate,draw_chance"]
    assert main([*argv, "--jobs", "1"]) == 0
    text = capsys.readouterr().out
    assert "nan" not in text.lower()
    assert "better" not in text.replace("is better", "")  # no verdict, only directions
    assert "no interval" in text
    if command == "compare":
        assert "n/a (1 replication)" in text
    assert text.rstrip().endswith(f"Report: {out / 'report.html'}")
    assert (out / TRADEOFF_FIGURE_FILE).exists()


# --------------------------------------------------------------------------------------------
# Headline outcomes on hand-made frames


def _differences(rows: list[tuple[str, str, float, float, float, float]]) -> pd.DataFrame:
    """Return a differences frame from (policy, metric, mean, low, high, p_adjusted) rows."""
    frame = pd.DataFrame(rows, columns=["policy", "metric", "mean", "ci_low", "ci_high", "p"])
    return frame.assign(
        baseline="base",
        sd=0.1,
        n=5,
        p_value=frame["p"] / 2,
        p_adjusted=frame["p"],
        significant=frame["p"] < 0.05,
        detectable=detectable_difference(0.1, 5),
    )[DIFFERENCE_COLUMNS]


def _summary(policies: list[str], metrics: list[str]) -> pd.DataFrame:
    rows = [(p, m, 1.0, 0.1, 5, 0.9, 1.1) for p in policies for m in metrics]
    return pd.DataFrame(rows, columns=["policy", "metric", "mean", "sd", "n", "ci_low", "ci_high"])


def test_headline_outcomes() -> None:
    differences = _differences(
        [
            ("a", "queue_time_p90", -0.2, -0.3, -0.1, 0.01),  # better, not the best
            ("b", "queue_time_p90", -0.5, -0.7, -0.3, 0.02),  # better and the best
            ("a", "draw_prob_true_mean", -0.02, -0.03, -0.01, 0.001),  # worse
            ("b", "draw_prob_true_mean", 0.01, -0.01, 0.03, 0.4),
            ("a", "skill_gap_true_mean", 0.1, -0.1, 0.3, 0.3),
            ("b", "skill_gap_true_mean", -0.1, -0.3, 0.1, 0.3),
        ]
    )
    metrics = ["queue_time_p90", "draw_prob_true_mean", "skill_gap_true_mean"]
    policies = ["base", "a", "b"]
    headline = build_headline(differences, _summary(policies, metrics), policies, metrics, 5)
    queue, draw, gap = headline.items
    assert (queue.outcome, queue.best) == (BETTER, "b")
    assert queue.difference is not None and queue.difference.estimate.mean == -0.5
    assert item_sentence(queue, "base") == (
        "b is best: -30.0 s [-42.0, -18.0] against base (adjusted p 0.02)"
    )
    assert (draw.outcome, draw.best) == (BASELINE_BEST, "base")
    assert [d.policy for d in draw.worse] == ["a"]
    assert item_sentence(draw, "base").startswith("no policy beats base; worse: a -0.0200")
    assert gap.outcome == NO_DIFFERENCE
    # sd 0.1 over 5 pairs: (t_.975,4 + t_.8,4) 0.1 / sqrt(5) = (2.776 + 0.941) 0.0447 = 0.166
    assert item_sentence(gap, "base") == (
        "no policy differs significantly from base "
        "(closest: a +0.100 [-0.100, +0.300] skill points, adjusted p 0.3; "
        "detectable: ±0.166 skill points at 80% power with 5 replications; "
        "~14 replications would detect half that, ±0.0831 skill points)"
    )
    single = build_headline(differences, _summary(policies, metrics), policies, metrics, 1)
    assert {item.outcome for item in single.items} == {NO_INTERVAL}
    assert "n/a (1 replication)" in item_sentence(single.items[0], "base")


# --------------------------------------------------------------------------------------------
# p-values, the false discovery correction and intervals cut to the support


def test_benjamini_hochberg_equals_scipy_and_a_hand_worked_example() -> None:
    # by hand: sorted 0.01, 0.02, 0.03, 0.5 of m = 4 give 0.04, 0.04, 0.04, 0.5
    # (0.01 * 4 / 1 = 0.04, 0.02 * 4 / 2 = 0.04, 0.03 * 4 / 3 = 0.04, 0.5 * 4 / 4 = 0.5)
    np.testing.assert_allclose(
        benjamini_hochberg(np.array([0.03, 0.5, 0.01, 0.02])), [0.04, 0.5, 0.04, 0.04]
    )
    # a later smaller ratio carries down: 0.04 * 2 / 1 = 0.08 > 0.045 * 2 / 2 = 0.045
    np.testing.assert_allclose(benjamini_hochberg(np.array([0.04, 0.045])), [0.045, 0.045])
    rng = np.random.default_rng(7)
    p = np.r_[rng.uniform(0, 1, 40), rng.uniform(0, 0.01, 10), 1.0, 1.0]
    with_nan = np.r_[p, math.nan]
    adjusted = benjamini_hochberg(with_nan)
    assert math.isnan(adjusted[-1])
    np.testing.assert_allclose(adjusted[:-1], stats.false_discovery_control(p), rtol=1e-12)
    assert np.isnan(benjamini_hochberg(np.array([math.nan]))).all()


def test_paired_p_value() -> None:
    a = np.array([1.0, 2.5, 3.0, 4.5, 2.0])
    b = np.array([0.5, 2.0, 3.1, 3.0, 1.0])
    assert paired_p_value(a - b) == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)
    assert paired_p_value(np.zeros(4)) == 1.0  # identical: no difference
    assert paired_p_value(np.full(4, 0.3)) == 0.0  # the same non-zero difference every time
    assert math.isnan(paired_p_value(np.array([0.3])))
    assert math.isnan(paired_p_value(np.array([0.3, math.nan])))
    # below 0.05 exactly when the 95% interval excludes 0
    for diffs in (a - b, np.array([0.1, 0.2, 0.15, 0.12]), np.array([-0.1, 0.3, 0.05])):
        _, _, _, low, high = interval(diffs)
        assert (paired_p_value(diffs) < 0.05) == (low > 0 or high < 0)


def _metrics_frame(diffs: dict[str, np.ndarray]) -> pd.DataFrame:
    """Return a metrics frame of a baseline at 1.0 and a policy at 1.0 + diffs, per metric."""
    n = len(next(iter(diffs.values())))
    rows = []
    for policy in ("base", "new"):
        for r in range(n):
            values = {m: 1.0 + (d[r] if policy == "new" else 0.0) for m, d in diffs.items()}
            rows.append({"policy": policy, "replication": r + 1, "seed": r, **values})
    return pd.DataFrame(rows)


def test_the_verdict_follows_the_adjusted_p_value() -> None:
    rng = np.random.default_rng(3)
    diffs = {f"queue_time_p{k}": rng.normal(0.0, 1.0, 5) for k in range(19)}
    diffs["games_per_hour"] = np.array([0.9, 0.2, 1.4, 0.5, 1.1])  # p about 0.02
    differences = paired_differences(_metrics_frame(diffs), "base")
    np.testing.assert_allclose(
        differences["p_adjusted"], benjamini_hochberg(differences["p_value"])
    )
    assert (differences["significant"] == (differences["p_adjusted"] < 0.05)).all()
    row = differences.set_index("metric").loc["games_per_hour"]
    assert row["p_value"] < 0.05 and row["ci_low"] > 0  # the interval excludes 0 ...
    assert row["p_adjusted"] >= 0.05 and not row["significant"]  # ... but not after BH
    _, rows = differences_table(differences)
    said = dict((r[0], r[5]) for r in rows)["games_per_hour"]
    detectable = format_number(row["detectable"])
    assert said.startswith(
        f"{NOT_SIGNIFICANT} (detectable: ±{detectable} games/h at 80% power with 5 "
    )


@pytest.mark.parametrize(
    ("metric", "support"),
    [
        ("queue_time_p90", (0.0, math.inf)),
        ("newcomer_queue_time_mean", (0.0, math.inf)),
        ("abandonment_rate", (0.0, 1.0)),
        ("draw_prob_true_mean", (0.0, 1.0)),
        ("veteran_draw_prob_true_mean", (0.0, 1.0)),
        ("retained_decile_3", (0.0, 1.0)),
        ("win_ratio_dispersion", (0.0, 0.5)),
        ("bayesian.kendall_tau", (-1.0, 1.0)),
        ("sph_elo.rating_rmse", (0.0, math.inf)),
        ("churn_per_week", (0.0, math.inf)),
        ("something_else", (-math.inf, math.inf)),
    ],
)
def test_metric_support(metric: str, support: tuple[float, float]) -> None:
    assert metric_support(metric) == support


def test_intervals_are_cut_to_the_support() -> None:
    waits = np.array([0.0, 0.0, 0.3])  # the t interval reaches below 0
    mean, sd, n, raw_low, raw_high = interval(waits)
    assert raw_low < 0
    assert interval(waits, (0.0, math.inf)) == (mean, sd, n, 0.0, raw_high)
    shares = np.array([1.0, 1.0, 0.9])  # and above 1
    mean, sd, n, raw_low, raw_high = interval(shares)
    assert raw_high > 1
    assert interval(shares, (0.0, 1.0)) == (mean, sd, n, raw_low, 1.0)
    metrics = pd.DataFrame(
        {
            "policy": ["base"] * 3 + ["new"] * 3,
            "replication": [1, 2, 3] * 2,
            "seed": [1, 2, 3] * 2,
            "queue_time_p90": [0.5, 0.6, 0.7, *waits],
            "draw_prob_true_mean": [*shares, 0.0, 0.0, 0.1],
        }
    )
    summary = summarise(metrics).set_index(["policy", "metric"])
    new_waits, base_shares = (
        summary.loc[("new", "queue_time_p90")],
        summary.loc[("base", "draw_prob_true_mean")],
    )
    assert new_waits["ci_low"] == 0.0 and new_waits["ci_high"] == pytest.approx(interval(waits)[4])
    assert base_shares["ci_high"] == 1.0 and base_shares["ci_low"] == pytest.approx(raw_low)
    # a difference of two shares lies in [-1, 1]: new - base is -1, -1, -0.8
    differences = paired_differences(metrics, "base").set_index("metric")
    assert interval(np.array([-1.0, -1.0, -0.8]))[3] < -1.0
    assert differences.loc["draw_prob_true_mean", "ci_low"] == -1.0


def test_a_queue_time_without_a_difference_says_what_was_detectable_in_seconds() -> None:
    differences = _differences([("a", "queue_time_mean", 0.01, -0.1, 0.12, 0.6)])
    metrics, policies = ["queue_time_mean"], ["base", "a"]
    (item,) = build_headline(differences, _summary(policies, metrics), policies, metrics, 5).items
    # sd 0.1 min over 5 pairs: detectable 0.166 min, shown as 9.97 s like the difference itself
    assert item_sentence(item, "base") == (
        "no policy differs significantly from base "
        "(closest: a +0.600 s [-6.00, +7.20], adjusted p 0.6; "
        "detectable: ±9.97 s at 80% power with 5 replications; "
        "~14 replications would detect half that, ±4.99 s)"
    )


def test_a_measure_no_policy_moves_is_left_out_of_the_headline_with_a_note() -> None:
    runs = pd.DataFrame(
        {
            "policy": ["a", "a", "b", "b"],
            "replication": [0, 1, 0, 1],
            "abandonment_rate": [0.0, 0.0, 0.0, 0.0],
            "queue_time_mean": [0.5, 0.5, 0.5, 0.6],  # one run differs: kept
            "skill_gap_true_mean": [1.0, 1.0, 1.0, np.nan],  # a run without a value: kept
        }
    )
    metrics = ["abandonment_rate", "queue_time_mean", "skill_gap_true_mean", "absent"]
    assert constant_metrics(runs, metrics) == {"abandonment_rate": 0.0}
    assert constant_note("abandonment_rate", 0.0) == (
        "abandonment rate is 0% in every replication of every policy: left out of the headline "
        "(no policy moves it here)"
    )
    assert constant_note("queue_time_mean", 0.0).startswith("mean queue time is 0 s in every")


@pytest.mark.slow
def test_compare_without_patience_leaves_abandonment_out_of_the_headline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["compare", "one_visit", "--policies", "point_estimate,uniform_random"]
    sets = ["--set", "horizon=120", "--set", "warmup=20", "--set", "population.patience_mean=null"]
    out = tmp_path / "cmp"
    assert main([*argv, *sets, "--replications", "3", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert (pd.read_csv(out / "replications.csv")["abandonment_rate"] == 0).all()
    headline = text[text.index("Headline:") : text.index("Metrics (")]
    assert "abandonment rate (" not in headline and "mean queue time (" in headline
    flat = " ".join(headline.split())
    assert "Note: abandonment rate is 0% in every replication of every policy" in flat
