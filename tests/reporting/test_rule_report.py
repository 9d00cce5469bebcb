"""The run report's section and figure "Which rule holds your matches back" (a rule set)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from lobbysim.experiments.replications import ExperimentResult, run_experiment
from lobbysim.reporting.document import format_interval
from lobbysim.reporting.figures import policy_colours
from lobbysim.reporting.rule_figures import (
    GAMES,
    QUEUE,
    REJECTED,
    RULES_FIGURE_FILE,
    rule_panel_data,
    rule_steps,
    rules_figure,
    step_label,
)
from lobbysim.reporting.run import write_report
from lobbysim.scenario import Scenario

POLICIES = ["point_estimate", "draw_chance"]
HEADING = "## Which rule holds your matches back"
RULES = [
    {
        "name": "skill",
        "kind": "skill_distance",
        "limit": 0.5,
        "expansions": [[1, 2.0], [2, 5.0]],
        "read_from": {"property": "maxDistance", "factor": 0.5},
    },
    {"name": "platform", "kind": "equal", "attribute": "platform"},
]
T_975_2 = 4.302652729911275
"""The 0.975 quantile of Student's t with 2 degrees of freedom (3 replications)."""


def _scenario_data(*, rules: bool) -> dict[str, object]:
    data: dict[str, object] = {
        "name": "rules small",
        "horizon": 200,
        "warmup": 20,
        "seed": 3,
        "arrivals": {"name": "poisson", "rate": 6.0},
        "game": {"mode": "1v1", "length": 10.0},
    }
    if rules:
        data["attributes"] = {"platform": {"type": "string", "values": {"pc": 0.6, "console": 0.4}}}
        data["matchmaker"] = {"algorithm": "seed_greedy", "rules": RULES}
    return data


Run = tuple[ExperimentResult, Path, list[tuple[int, int]]]


def _run(tmp: Path, *, rules: bool, horizon: int = 200) -> Run:
    """Run the scenario (2 policies, 2 replications) and write its report; return the result,
    the report's folder and the progress calls."""
    data = _scenario_data(rules=rules) | {"horizon": horizon}
    path = tmp / "scenario.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = run_experiment(path, policies=POLICIES, replications=2)
    out = tmp / "report"
    out.mkdir()
    calls: list[tuple[int, int]] = []
    write_report(result, out, progress=lambda done, total: calls.append((done, total)))
    return result, out, calls


@pytest.fixture(scope="module")
def with_rules(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return _run(tmp_path_factory.mktemp("rules"), rules=True)


@pytest.fixture(scope="module")
def without_rules(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return _run(tmp_path_factory.mktemp("plain"), rules=False, horizon=100)


def _section(markdown: str) -> str:
    start = markdown.index(HEADING)
    end = markdown.index("\n## ", start + len(HEADING))
    return markdown[start:end]


def _table_rows(section: str) -> list[list[str]]:
    lines = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


@pytest.mark.slow
def test_section_table_equals_the_summary(with_rules: Run) -> None:
    result, out, _ = with_rules
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert markdown.count(HEADING) == 1
    section = _section(markdown)
    header = section.splitlines()[4]
    assert header == (
        "| rule | policy | rejected share | past first step | needed relaxing | mean step |"
    )
    summary = result.summary.set_index(["policy", "metric"])

    def cell(policy: str, metric: str) -> str:
        row = summary.loc[(policy, metric)]
        return format_interval(float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]))

    expected = [
        [
            rule,
            policy,
            cell(policy, f"rule_rejected_share@{rule}"),
            cell(policy, f"rule_relaxed_share@{rule}"),
            cell(policy, f"rule_needed_share@{rule}"),
            cell(policy, f"rule_step_mean@{rule}"),
        ]
        for rule in ("skill", "platform")
        for policy in POLICIES
    ]
    assert _table_rows(section) == expected
    # the numbers are real: the rejections split between the two rules
    total = sum(
        float(summary.loc[(POLICIES[0], f"rule_rejected_share@{rule}"), "mean"])
        for rule in ("skill", "platform")
    )
    assert total == pytest.approx(1.0)
    # the rules' steps are listed, then the reading guide and the figure in the section
    assert (
        "- **skill**: skill_distance (clock oldest): first limit 0.5; expansion 1 from 1 min: 2; "
        "expansion 2 from 2 min: 5; in its FlexMatch file: maxDistance 1, expansions [60 s: 4, "
        "120 s: 10]" in section
    )
    assert "- **platform**: equal (clock oldest): no limit, one step" in section
    assert "How to read it:" in section
    assert f"![Which rule holds your matches back]({RULES_FIGURE_FILE})" in section
    # placed in its section, so not again in the Figures list
    assert markdown.count(f"]({RULES_FIGURE_FILE})") == 1
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>Which rule holds your matches back</h2>" in page
    assert page.count(f'data-file="{RULES_FIGURE_FILE}"') == 1  # embedded, named


@pytest.mark.slow
def test_figure_is_written(with_rules: Run) -> None:
    _, out, calls = with_rules
    png = out / RULES_FIGURE_FILE
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000
    # the progress counted the figure: it ends at its total, which never changed
    totals = {total for _, total in calls}
    assert len(totals) == 1
    assert calls[-1][0] == calls[-1][1]


def test_without_rules_no_section_and_figure_skipped(without_rules: Run, tmp_path: Path) -> None:
    result, out, _ = without_rules
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert HEADING not in markdown
    assert RULES_FIGURE_FILE not in markdown
    assert not (out / RULES_FIGURE_FILE).exists()
    assert rule_steps(result.scenario) == []
    outcome = rules_figure(result, tmp_path, policy_colours(result.policies))
    assert outcome.path is None
    assert outcome.skipped == "the scenario has no rule set (matchmaker.rules)"
    assert not (tmp_path / RULES_FIGURE_FILE).exists()


@pytest.mark.slow  # the with_rules run and its report: 30 s in the default run's setup
def test_figure_skipped_without_telemetry(with_rules: Run, tmp_path: Path) -> None:
    result, _, _ = with_rules
    colours = policy_colours(result.policies)
    rule_columns = [c for c in result.metrics.columns if c.startswith("rule_")]
    gone = dataclasses.replace(result, metrics=result.metrics.drop(columns=rule_columns))
    outcome = rules_figure(gone, tmp_path, colours)
    assert outcome.skipped == "the metrics have no rule telemetry (rule_... columns)"
    empty = result.metrics.copy()
    empty[rule_columns] = math.nan
    nothing = dataclasses.replace(result, metrics=empty)
    outcome = rules_figure(nothing, tmp_path, colours)
    assert outcome.skipped == (
        "no candidate was turned down and no game formed after the metrics' start"
    )
    assert not (tmp_path / RULES_FIGURE_FILE).exists()


def test_rule_steps_and_labels() -> None:
    scenario = Scenario.from_dict(_scenario_data(rules=True))  # no run needed
    assert rule_steps(scenario) == [("skill", 3), ("platform", 1)]
    assert [step_label(k) for k in range(3)] == ["first limit", "expansion 1", "expansion 2"]


def _hand_metrics() -> pd.DataFrame:
    """Two policies, three replications each; rule a with 2 steps, rule b with 1; policy q
    formed no game under rule a in its last replication (NaN), and has no games at all for
    rule b's queue time column (missing column is tested separately)."""
    rows = [
        # policy, a rejected, a step0, a step1, a queue0, a queue1, b rejected, b step0, b queue0
        ("p", 0.5, 0.8, 0.2, 4.0, 10.0, 0.5, 1.0, 1.0),
        ("p", 0.6, 0.7, 0.3, 5.0, 11.0, 0.4, 1.0, 2.0),
        ("p", 0.7, 0.6, 0.4, 6.0, 12.0, 0.3, 1.0, 3.0),
        ("q", 0.2, 1.0, 0.0, 2.0, math.nan, 0.8, 1.0, 2.0),
        ("q", 0.4, 0.5, 0.5, 4.0, 8.0, 0.6, 1.0, 2.0),
        ("q", 0.3, math.nan, math.nan, math.nan, math.nan, 0.7, 1.0, 2.0),
    ]
    columns = [
        "policy",
        "rule_rejected_share@a",
        "rule_games_share@a@step0",
        "rule_games_share@a@step1",
        "rule_queue_time@a@step0",
        "rule_queue_time@a@step1",
        "rule_rejected_share@b",
        "rule_games_share@b@step0",
        "rule_queue_time@b@step0",
    ]
    frame = pd.DataFrame(rows, columns=columns)
    frame.insert(1, "replication", [0, 1, 2, 0, 1, 2])
    return frame


def test_rule_panel_data_by_hand() -> None:
    data = rule_panel_data(_hand_metrics(), ["p", "q"], [("a", 2), ("b", 1)])
    data = data.set_index(["quantity", "rule", "policy", "step"])
    # 3 quantities: rejected (2 rules x 2 policies), games and queue (3 steps x 2 policies)
    assert len(data) == 4 + 6 + 6

    def row(*key: object) -> pd.Series:
        return data.loc[key]

    # p's rejected share of a: 0.5, 0.6, 0.7: mean 0.6, sd 0.1, half t(0.975, 2) 0.1 / sqrt(3)
    half = T_975_2 * 0.1 / math.sqrt(3)
    found = row(REJECTED, "a", "p", -1)
    assert found["metric"] == "rule_rejected_share@a"
    assert found["n"] == 3
    assert found["mean"] == pytest.approx(0.6)
    assert found["ci_low"] == pytest.approx(0.6 - half)
    assert found["ci_high"] == pytest.approx(0.6 + half)
    # the rejected shares' means sum to 1 over the rules
    for policy in ("p", "q"):
        means = [row(REJECTED, rule, policy, -1)["mean"] for rule in ("a", "b")]
        assert sum(means) == pytest.approx(1.0)
    # p's games shares of a: steps 0.7 and 0.3, summing to 1; b has one step, always 1
    assert row(GAMES, "a", "p", 0)["mean"] == pytest.approx(0.7)
    assert row(GAMES, "a", "p", 1)["mean"] == pytest.approx(0.3)
    assert row(GAMES, "a", "p", 1)["ci_low"] == pytest.approx(0.3 - half)
    assert row(GAMES, "b", "p", 0)["mean"] == 1.0
    # q formed no game of rule a in replication 2: left out, means of 2 still summing to 1
    assert row(GAMES, "a", "q", 0)["n"] == 2
    assert row(GAMES, "a", "q", 0)["mean"] == pytest.approx(0.75)
    assert row(GAMES, "a", "q", 1)["mean"] == pytest.approx(0.25)
    # queue times: p's step 0 of a 4, 5, 6; step 1 10, 11, 12 (the same spread)
    assert row(QUEUE, "a", "p", 0)["mean"] == pytest.approx(5.0)
    assert row(QUEUE, "a", "p", 0)["ci_high"] == pytest.approx(5.0 + T_975_2 / math.sqrt(3))
    assert row(QUEUE, "a", "p", 1)["mean"] == pytest.approx(11.0)
    # q's step 1 of a has one replication with games: a mean without an interval
    single = row(QUEUE, "a", "q", 1)
    assert (single["n"], single["mean"]) == (1, 8.0)
    assert math.isnan(single["ci_low"]) and math.isnan(single["ci_high"])
    # every replication alike: a zero-width interval
    same = row(QUEUE, "b", "q", 0)
    assert (same["mean"], same["ci_low"], same["ci_high"]) == (2.0, 2.0, 2.0)


def test_rule_panel_data_missing_columns() -> None:
    metrics = _hand_metrics().drop(columns=["rule_queue_time@b@step0"])
    data = rule_panel_data(metrics, ["p"], [("a", 2), ("b", 1), ("c", 2)])
    missing = data[data["metric"].isin(["rule_queue_time@b@step0", "rule_games_share@c@step1"])]
    assert len(missing) == 2
    assert (missing["n"] == 0).all()
    assert np.isnan(missing["mean"].to_numpy(dtype=float)).all()
    # the order: rejected shares, then games shares, then queue times, rule by rule and step
    games = data[data["quantity"] == GAMES]["metric"].tolist()
    assert games == [
        "rule_games_share@a@step0",
        "rule_games_share@a@step1",
        "rule_games_share@b@step0",
        "rule_games_share@c@step0",
        "rule_games_share@c@step1",
    ]


@pytest.mark.slow
def test_the_queue_panel_is_in_the_comparisons_unit(with_rules: Run, tmp_path: Path) -> None:
    from lobbysim.reporting.answer import queue_time_unit
    from lobbysim.reporting.figures import captured_figures

    result, _, _ = with_rules
    scale, unit = queue_time_unit(result.metrics)
    with captured_figures() as figures:
        rules_figure(result, tmp_path, policy_colours(result.policies))
    panel = figures[RULES_FIGURE_FILE].axes[2]
    assert panel.get_ylabel() == f"queue time ({unit})"
    # the points are the telemetry's mean waits (minutes) times the unit's scale
    data = rule_panel_data(result.metrics, result.policies, rule_steps(result.scenario))
    minutes = data[data["quantity"] == QUEUE]["mean"].to_numpy(dtype=float)
    drawn = np.concatenate(  # each policy's error bars: their data line's points
        [np.asarray(bars.lines[0].get_ydata(), dtype=float) for bars in panel.containers]
    )
    np.testing.assert_allclose(np.sort(drawn), np.sort(minutes[np.isfinite(minutes)] * scale))
