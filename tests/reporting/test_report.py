"""The experiment report: files, tables, verdicts, the HTML page, skipped figures, determinism."""

from __future__ import annotations

import base64
import dataclasses
import math
import struct
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lobbysim.experiments.replications import ExperimentResult, run_experiment
from lobbysim.reporting.answer import measure_flags, queue_seconds
from lobbysim.reporting.document import format_interval, format_number, format_p_value
from lobbysim.reporting.headline import Estimate, is_percent, shown_unit, value_text
from lobbysim.reporting.run import differences_table, write_report
from lobbysim.reporting.run_figures import FIGURE_FILES, FIGURE_SIZES
from lobbysim.reporting.run_frames import driver_on_skill_scale
from lobbysim.reporting.tables import FLAG_MARK, display_interval
from lobbysim.reporting.tradeoff_figure import TRADEOFF_FIGURE_FILE
from lobbysim.reporting.verdicts import (
    HIGHER_IS_BETTER,
    LOWER_IS_BETTER,
    NEUTRAL,
    NO_DATA,
    NO_DIFFERENCE,
    NO_INTERVAL,
    NO_VERDICT,
    better_direction,
    verdict,
)
from lobbysim.scenario import Scenario
from lobbysim.stats.intervals import mean_and_se

POLICIES = ["point_estimate", "draw_chance"]
COMMAND = "lobbysim compare small.yaml --policies point_estimate draw_chance"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _scenario(**changes: object) -> Scenario:
    data: dict[str, object] = {
        "name": "small <1v1> & co",
        "description": "A small 1v1 lobby for the report's tests.",
        "horizon": 120,
        "warmup": 20,
        "seed": 5,
        "arrivals": {"name": "poisson", "rate": 2.0},
        "game": {"mode": "1v1", "length": 10.0},
        "records": {"ratings_every": 10},
    }
    data.update(changes)
    return Scenario.from_dict(data)


@pytest.fixture(scope="module")
def result() -> ExperimentResult:
    return run_experiment(_scenario(), policies=POLICIES, replications=3, jobs=1)


@pytest.fixture(scope="module")
def single() -> ExperimentResult:
    return run_experiment(_scenario(), policies=["draw_chance"], replications=2, jobs=1)


@pytest.fixture(scope="module")
def report(result: ExperimentResult, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    written = write_report(result, out, command=COMMAND)
    assert written == [
        out / TRADEOFF_FIGURE_FILE,
        *(out / name for name in FIGURE_FILES),
        out / "report.md",
        out / "report.html",
    ]
    return out


def _section(markdown: str, heading: str) -> str:
    """Return the text under a ``## heading`` up to the next ``## `` heading."""
    start = markdown.index(f"## {heading}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end >= 0 else None]


def _table_rows(section: str) -> list[list[str]]:
    """Return the cells of the body rows of the first Markdown table in a section."""
    lines = [line for line in section.splitlines() if line.startswith("|")]
    assert len(lines) >= 2 and set(lines[1].replace("|", "").split()) == {"---"}
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[2:]]


# --------------------------------------------------------------------------------------------
# Files and figures


def test_every_file_is_written(report: Path) -> None:
    assert {p.name for p in report.iterdir()} == {
        TRADEOFF_FIGURE_FILE,
        *FIGURE_FILES,
        "report.md",
        "report.html",
    }


@pytest.mark.parametrize("name", FIGURE_FILES)
def test_figures_are_150_dpi_png_files(report: Path, name: str) -> None:
    data = (report / name).read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 20_000  # a drawn figure, not an empty canvas
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    assert (width, height) == tuple(round(150 * s) for s in FIGURE_SIZES[name])


# --------------------------------------------------------------------------------------------
# report.md


def test_markdown_has_title_description_and_set_up(report: Path, result: ExperimentResult) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    assert text.startswith("# Lobby report: small <1v1> & co\n")
    assert "A small 1v1 lobby for the report's tests." in text
    setup = _section(text, "Set-up")
    assert "**Horizon**: 120 minutes (2 hours)" in setup
    assert "**Warm-up**: 20 minutes" in setup
    assert "**Replications**: 3 per policy" in setup
    assert all(str(seed) in setup for seed in result.seeds)
    assert "point_estimate (baseline), draw_chance" in setup
    assert f"```\n{COMMAND}\n```" in setup


def test_metrics_table_has_a_row_per_metric_and_a_column_per_policy(
    report: Path, result: ExperimentResult
) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    section = _section(text, "Metrics")
    assert "| metric | unit | better | point_estimate | draw_chance |" in section
    rows = _table_rows(section)
    names = [row[0].removesuffix(f" {FLAG_MARK}") for row in rows]
    assert names == list(result.summary["metric"].unique())
    assert all(len(row) == 3 + len(POLICIES) for row in rows)
    summary = result.summary.set_index(["policy", "metric"])
    seconds = queue_seconds(result.metrics)
    scales = {"queue_time_p90": 60.0 if seconds else 1.0, "abandonment_rate": 100.0}
    for name, row in zip(names, rows, strict=True):
        for policy, cell in zip(POLICIES, row[3:], strict=True):
            s = summary.loc[(policy, name)]
            scale = scales.get(name, 1.0)
            if name in scales:  # queue times in the comparison's unit, abandonment in percent
                scaled = (scale * s[c] for c in ("mean", "ci_low", "ci_high"))
                assert cell == format_interval(*scaled)
            shown = display_interval(name, s["mean"], s["ci_low"], s["ci_high"], seconds=seconds)
            assert cell == shown
    by_metric = dict(zip(names, rows, strict=True))
    assert by_metric["queue_time_p90"][1] == ("s" if seconds else "min")
    assert by_metric["abandonment_rate"][1] == "%"
    assert by_metric["games_per_hour"][1:3] == ["games/h", HIGHER_IS_BETTER]
    assert by_metric["queue_time_p90"][2] == LOWER_IS_BETTER
    assert by_metric["sph_elo.rating_rmse"][3:] == ["n/a", "n/a"]  # not on the skill scale


def test_which_policy_is_better_has_one_row_per_metric(
    report: Path, result: ExperimentResult
) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    rows = _table_rows(_section(text, "Which policy is better"))
    metrics = list(result.summary["metric"].unique())
    # a flagged measure is marked as in the Metrics table, its footnote under the table
    flags = measure_flags(result.metrics, float(result.scenario.matchmaker.tick))
    names = [row[0].removesuffix(f" {FLAG_MARK}") for row in rows]
    assert names == metrics
    assert {n for row, n in zip(rows, names, strict=True) if row[0] != n} == set(flags)
    if flags:
        assert f"{FLAG_MARK} flagged, not used in the answer:" in _section(
            text, "Which policy is better"
        )
    differences = result.differences.set_index("metric")
    seconds = queue_seconds(result.metrics)
    for metric, (_, pair, cell, p, adjusted, said) in zip(names, rows, strict=True):
        d = differences.loc[metric]
        assert pair == "draw_chance - point_estimate"
        estimate = Estimate(d["mean"], d["ci_low"], d["ci_high"])
        assert cell == value_text(estimate, metric, signed=True, seconds=seconds)
        if metric.startswith("queue_time_"):  # in the comparison's one unit
            scale, unit = (60.0, "s") if seconds else (1.0, "min")
            centre = format_number(scale * d["mean"], signed=True)
            assert cell.startswith(f"{centre} {unit} [") or d["mean"] == 0
        assert (p, adjusted) == (format_p_value(d["p_value"]), format_p_value(d["p_adjusted"]))
        if is_percent(metric) or shown_unit(metric):
            continue  # the verdict's sizes carry the unit: checked on the hand-made frame
        expected = verdict(
            metric,
            d["mean"],
            bool(d["significant"]),
            policy="draw_chance",
            baseline="point_estimate",
            n=int(d["n"]),
            sd=float(d["sd"]),
        )
        assert said == expected
        if said.startswith(NO_DIFFERENCE) and d["sd"] > 0:  # what it could have detected
            assert f"(detectable: ±{format_number(d['detectable'])} at 80% power" in said
    assert dict((row[0], row[5]) for row in rows)["stronger_side_win_rate"] == NO_VERDICT
    assert any("(detectable: ±" in row[5] for row in rows)


def test_markdown_explains_the_intervals_and_embeds_the_figures(report: Path) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    intervals = _section(text, "How to read the intervals")
    for phrase in ("Student-t", "common random numbers", "excludes 0", "few replications"):
        assert phrase in intervals
    figures = _section(text, "Figures")
    for name in FIGURE_FILES:
        assert f"]({name})" in figures
    assert text.index("## Metrics") < text.index("## Which policy is better")
    assert text.index("## Which policy is better") < text.index("## How to read the intervals")


# --------------------------------------------------------------------------------------------
# report.html


class _TagChecker(HTMLParser):
    VOID = frozenset({"meta", "img", "br", "hr", "link", "input"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.images: list[str] = []
        self.sources: dict[str, str] = {}
        self.tags: set[str] = set()
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        values = dict(attrs)
        for key in ("src", "href"):
            value = values.get(key) or ""
            if "//" in value and not value.startswith("data:"):  # base64 may hold "//"
                self.external.append(value)
        if tag == "img":
            self.images.append(values.get("data-file") or "")
            self.sources[self.images[-1]] = values.get("src") or ""
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def _embedded(source: str) -> bytes:
    """Return the bytes of a ``data:image/png;base64,...`` image source."""
    prefix = "data:image/png;base64,"
    assert source.startswith(prefix)
    return base64.b64decode(source[len(prefix) :], validate=True)


def test_html_is_balanced_standalone_and_embeds_the_figures(report: Path) -> None:
    page = (report / "report.html").read_text(encoding="utf-8")
    checker = _TagChecker()
    checker.feed(page)
    checker.close()
    assert checker.errors == [] and checker.stack == []
    assert {"table", "style", "figure"} <= checker.tags
    assert "script" not in checker.tags and checker.external == []
    assert sorted(checker.images) == sorted([TRADEOFF_FIGURE_FILE, *FIGURE_FILES])
    # Every figure is in the page itself (it stands alone), the same bytes as its PNG file.
    for name, source in checker.sources.items():
        assert _embedded(source) == (report / name).read_bytes()
    assert page.count("<table>") == 2
    # The long tables are folded (the metrics and the paired differences), the answer is not.
    assert page.count("<details>") == page.count("</details>") >= 2
    assert page.index("<details>") > page.index(f'data-file="{TRADEOFF_FIGURE_FILE}"')
    # Text is escaped: the scenario name has <, > and &.
    assert "<title>Lobby report: small &lt;1v1&gt; &amp; co</title>" in page
    assert "<1v1>" not in page


# --------------------------------------------------------------------------------------------
# One policy, skipped figures, another driving rater, determinism


def test_single_policy_report_has_no_comparison(single: ExperimentResult, tmp_path: Path) -> None:
    written = write_report(single, tmp_path)
    assert {p.name for p in written} == {
        TRADEOFF_FIGURE_FILE,
        *FIGURE_FILES,
        "report.md",
        "report.html",
    }
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Which policy is better" not in text and "Which policy is better" not in page
    assert "## Metrics" in text and page.count("<table>") == 1
    assert "| metric | unit | better | draw_chance |" in text
    assert "Reproduce with" not in text  # no command given


def test_figures_without_data_are_skipped_and_noted(
    result: ExperimentResult, tmp_path: Path
) -> None:
    empty_waits = {
        policy: [dataclasses.replace(run, waits=run.waits.iloc[0:0]) for run in result.runs[policy]]
        for policy in result.policies
    }
    written = write_report(dataclasses.replace(result, runs=empty_waits), tmp_path)
    names = {p.name for p in written}
    assert "queue_times.png" not in names and "abandonment_over_time.png" not in names
    assert "draw_probability_over_time.png" in names
    assert not (tmp_path / "queue_times.png").exists()
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "**Queue time of matched players**: not drawn: no matched waits" in text
    assert "**Abandonment over time**: not drawn: no queueing spell was decided" in text
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert 'src="queue_times.png"' not in page and "not drawn: no matched waits" in page


@pytest.mark.slow
def test_a_driver_off_the_skill_scale_gets_kendalls_tau(tmp_path: Path) -> None:
    scenario = _scenario(
        raters={"driver": "sph_elo", "shadows": ["bayesian"]},
        matchmaker={"policy": "point_estimate"},  # DrawChance needs belief variances
    )
    elo = run_experiment(scenario, replications=1)
    assert not driver_on_skill_scale(elo)
    write_report(elo, tmp_path)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    figures = _section(text, "Figures")
    assert "![Rating accuracy of the driving rater sph_elo: Kendall's tau" in figures
    assert "not on the skill scale" in figures
    assert (tmp_path / "rating_error_over_time.png").read_bytes().startswith(PNG_MAGIC)


def test_driver_on_the_skill_scale(result: ExperimentResult) -> None:
    assert driver_on_skill_scale(result)


@pytest.mark.slow
def test_report_is_deterministic(result: ExperimentResult, tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    write_report(result, first, command=COMMAND)
    write_report(result, second, command=COMMAND)
    for name in ("report.md", "report.html"):
        assert (first / name).read_bytes() == (second / name).read_bytes()


# --------------------------------------------------------------------------------------------
# Verdicts, directions, formatting, statistics


@pytest.mark.parametrize(
    ("metric", "direction"),
    [
        ("queue_time_mean", LOWER_IS_BETTER),
        ("queue_time_p99", LOWER_IS_BETTER),
        ("abandonment_rate", LOWER_IS_BETTER),
        ("skill_gap_true_mean", LOWER_IS_BETTER),
        ("win_ratio_dispersion", LOWER_IS_BETTER),
        ("bayesian.rating_rmse", LOWER_IS_BETTER),
        ("games_per_hour", HIGHER_IS_BETTER),
        ("draw_prob_true_mean", HIGHER_IS_BETTER),
        ("sph_elo.kendall_tau", HIGHER_IS_BETTER),
        ("stronger_side_win_rate", NEUTRAL),
        ("something_else", NEUTRAL),
    ],
)
def test_better_direction(metric: str, direction: str) -> None:
    assert better_direction(metric) == direction


@pytest.mark.parametrize(
    ("metric", "difference", "significant", "expected"),
    [
        ("queue_time_p90", -0.5, True, "kg better"),
        ("queue_time_p90", 0.5, True, "pe better"),
        ("queue_time_p90", -0.5, False, NO_DIFFERENCE),
        ("bayesian.rating_rmse", -0.1, True, "kg better"),
        ("abandonment_rate", 0.01, True, "pe better"),
        ("draw_prob_true_mean", 0.02, True, "kg better"),
        ("draw_prob_true_mean", -0.02, True, "pe better"),
        ("games_per_hour", 3.0, False, NO_DIFFERENCE),
        ("bayesian.kendall_tau", -0.05, True, "pe better"),
        ("stronger_side_win_rate", 0.1, True, NO_VERDICT),
        ("queue_time_mean", math.nan, False, NO_DATA),
    ],
)
def test_verdict(metric: str, difference: float, significant: bool, expected: str) -> None:
    assert verdict(metric, difference, significant, policy="kg", baseline="pe") == expected


def test_verdict_needs_two_replications() -> None:
    assert verdict("queue_time_mean", -1.0, False, policy="a", baseline="b", n=1) == NO_INTERVAL


def test_no_significant_difference_says_what_could_have_been_detected() -> None:
    # sd 1 over 10 pairs: (t_.975,9 + t_.8,9) / sqrt(10) = (2.262 + 0.883) / 3.162 = 0.995; half
    # that, 0.497, needs 34 replications (MDD 0.494; 33 give 0.502)
    said = verdict("games_per_hour", 0.3, False, policy="kg", baseline="pe", n=10, sd=1.0)
    assert said == (
        "no significant difference (detectable: ±0.995 at 80% power with 10 replications; "
        "~34 replications would detect half that, ±0.497)"
    )
    # the same every replication: nothing to detect
    said = verdict("games_per_hour", 0.0, False, policy="kg", baseline="pe", n=5, sd=0.0)
    assert said == "no significant difference (identical in every replication)"
    # past 10,000 replications
    said = verdict("games_per_hour", 0.0, False, policy="kg", baseline="pe", n=5000, sd=1.0)
    assert said.endswith(
        "with 5,000 replications; over 10,000 replications would be needed for half that, ±0.0198)"
    )


def test_differences_table_on_a_hand_made_frame() -> None:
    frame = pd.DataFrame(
        {
            "policy": ["kg", "kg", "kg", "dc"],
            "baseline": ["pe"] * 4,
            "metric": [
                "queue_time_p90",
                "draw_prob_true_mean",
                "stronger_side_win_rate",
                "bayesian.rating_rmse",
            ],
            "mean": [-0.25, -0.01, 0.05, 0.002],
            "sd": [0.1, 0.002, 0.01, 0.01],
            "n": [5, 5, 5, 5],
            "ci_low": [-0.37, -0.0125, 0.038, -0.0104],
            "ci_high": [-0.13, -0.0075, 0.062, 0.0144],
            "p_value": [0.004, 0.0001, 0.0002, 0.6],
            "p_adjusted": [0.005, 0.0004, 0.0004, 0.6],
            "significant": [True, True, True, False],
        }
    )
    header, rows = differences_table(frame)
    assert header == [
        "metric",
        "policy vs baseline",
        "difference [95% CI]",
        "p",
        "adjusted p",
        "verdict",
    ]
    assert rows == [
        ["queue_time_p90", "kg - pe", "-15.0 s [-22.2, -7.80]", "0.004", "0.005", "kg better"],
        [
            "draw_prob_true_mean",
            "kg - pe",
            "-0.0100 [-0.0125, -0.00750]",
            "< 0.001",
            "< 0.001",
            "pe better",
        ],
        [
            "stronger_side_win_rate",
            "kg - pe",
            "+0.0500 [+0.0380, +0.0620]",
            "< 0.001",
            "< 0.001",
            NO_VERDICT,
        ],
        [
            "bayesian.rating_rmse",
            "dc - pe",
            "+0.00200 [-0.0104, +0.0144] skill points",
            "0.6",
            "0.6",
            # sd 0.01 over 5 pairs: (t_.975,4 + t_.8,4) 0.01 / sqrt(5) = 0.0166
            f"{NO_DIFFERENCE} (detectable: ±0.0166 skill points at 80% power with 5 "
            "replications; ~14 replications would detect half that, ±0.00831 skill points)",
        ],
    ]
    # a flagged measure is marked as in the Metrics table; the rest of its row is unchanged
    _, flagged = differences_table(frame, flags={"queue_time_p90": "on the pass grid"})
    assert flagged[0] == [f"queue_time_p90 {FLAG_MARK}", *rows[0][1:]]
    assert flagged[1:] == rows[1:]


@pytest.mark.parametrize(
    ("value", "signed", "text"),
    [
        (266.6, False, "267"),
        (0.044714, False, "0.0447"),
        (0.1, False, "0.100"),
        (1.5, False, "1.50"),
        (12345.0, False, "12,300"),
        (0.0, True, "0"),
        (0.0001234, True, "+0.000123"),
        (-2.5e-7, False, "-2.50e-07"),
        (math.nan, False, "n/a"),
    ],
)
def test_format_number(value: float, signed: bool, text: str) -> None:
    assert format_number(value, signed=signed) == text


def test_format_interval_without_an_interval() -> None:
    assert format_interval(0.5, math.nan, math.nan) == "0.500 [n/a]"
    assert format_interval(math.nan, math.nan, math.nan) == "n/a"


def test_mean_and_se_ignore_nan_without_warnings() -> None:
    values = np.array([[1.0, np.nan, np.nan], [3.0, 4.0, np.nan], [5.0, np.nan, np.nan]])
    mean, se = mean_and_se(values)
    np.testing.assert_allclose(mean[:2], [3.0, 4.0])
    assert math.isnan(mean[2])
    assert se[0] == pytest.approx(2.0 / math.sqrt(3.0))  # sd 2 over 3 values
    assert math.isnan(se[1]) and math.isnan(se[2])  # one value, none
