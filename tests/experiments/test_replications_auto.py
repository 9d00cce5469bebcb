"""``--replications auto``: replications until the headline's intervals are precise, or a cap
(:mod:`lobbysim.experiments.sequential`).

A procedure that stops at n replications gives the very tables of ``--replications n``; the
output says which rule stopped it and the half-widths reached; bad options are one line each.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lobbysim
from lobbysim.cli.main import main
from lobbysim.experiments.sequential import (
    CAP_RULE,
    PRECISION_RULE,
    RELATIVE,
    SHARE,
    Rule,
    check_rule,
    first_batch,
    next_count,
    precision_checks,
    run_until_precise,
)
from lobbysim.scenario.inputs import as_scenario

SHORT = ["--set", "horizon=60", "--set", "warmup=10", "--jobs", "1", "--quiet"]
BOUNDS = ["--policies", "draw_chance,uniform_random,oracle"]
TABLES = ("replications.csv", "summary.csv", "differences.csv", "scenario.yaml")


def frame(values: dict[str, list[float]], metric: str = "queue_time_mean") -> pd.DataFrame:
    rows = []
    for policy, column in values.items():
        for r, value in enumerate(column, start=1):
            rows.append({"policy": policy, "replication": r, metric: value})
    return pd.DataFrame(rows)


# --- the rule -----------------------------------------------------------------------------------


def test_relative_half_widths() -> None:
    metrics = frame({"a": [1.0, 1.1, 0.9, 1.0], "b": [2.0, 2.0, 2.0, 2.0]})
    checks = precision_checks(metrics, ["queue_time_mean", "abandonment_rate"], 0.1)
    assert [(c.kind, c.policy) for c in checks] == [(RELATIVE, "a"), (RELATIVE, "b")]
    a, b = checks
    # t(0.975, 3) * sd / sqrt(4) = 3.182 * 0.0816 / 2
    assert a.half_width == pytest.approx(3.182446 * np.std([1, 1.1, 0.9, 1], ddof=1) / 2)
    assert a.target == pytest.approx(0.1) and not a.met
    assert b.half_width == 0 and b.met  # no spread: precise at once
    assert "±13.0% of its mean (target 10%)" in a.text()


def test_a_metric_without_values_is_no_criterion() -> None:
    metrics = frame({"a": [1.0, math.nan, math.nan], "b": [1.0, 1.0, 1.0]})
    assert [c.policy for c in precision_checks(metrics, ["queue_time_mean"], 0.1)] == ["b"]


def test_captured_shares_with_both_bounds() -> None:
    rng = np.random.default_rng(0)
    gap = {
        "uniform_random": list(2.0 + rng.normal(0, 0.05, 6)),
        "draw_chance": list(1.5 + rng.normal(0, 0.05, 6)),
        "oracle": list(1.0 + rng.normal(0, 0.05, 6)),
    }
    checks = precision_checks(frame(gap, "skill_gap_true_mean"), ["skill_gap_true_mean"], 0.1)
    shares = [c for c in checks if c.kind == SHARE]
    assert [c.policy for c in shares] == ["draw_chance"]
    assert shares[0].mean == pytest.approx(0.5, abs=0.1) and shares[0].target == 0.1
    assert "draw_chance's captured share (skill_gap_true_mean), ±" in shares[0].text()


def test_the_next_batch_follows_the_square_root_rule() -> None:
    metrics = frame({"a": [1.0, 1.1, 0.9, 1.0]})
    (check,) = precision_checks(metrics, ["queue_time_mean"], 0.1)
    ratio = check.ratio  # 1.3 times too wide: 4 * 1.3^2 = 6.8 -> 7
    assert next_count(4, [check], 50) == math.ceil(4 * ratio**2) == 7
    assert next_count(4, [check], 5) == 5  # the cap
    tight = precision_checks(metrics, ["queue_time_mean"], 0.01)
    assert next_count(4, tight, 50) == 8  # at most twice as many
    loose = precision_checks(metrics, ["queue_time_mean"], 0.129)
    assert next_count(4, loose, 50) == 5  # at least one more


def test_the_first_batch_is_at_least_five() -> None:
    assert first_batch(3) == 5 and first_batch(10) == 10


@pytest.mark.parametrize(
    ("precision", "cap", "headline", "wanted"),
    [
        (0, 50, ["q"], "--precision: expected a number > 0, got 0"),
        (-0.1, 50, ["q"], "--precision: expected a number > 0, got -0.1"),
        (math.nan, 50, ["q"], "--precision: expected a number > 0, got nan"),
        ("x", 50, ["q"], "--precision: expected a number > 0, got 'x'"),
        (0.1, 4, ["q"], "--max-replications: expected a whole number from the first batch of 5"),
        (0.1, 2.5, ["q"], "--max-replications: expected a whole number from the first batch"),
        (0.1, 50, [], "--replications auto: the runs have none of the headline metrics"),
    ],
)
def test_bad_rules(precision: object, cap: object, headline: list[str], wanted: str) -> None:
    (problem,) = check_rule(5, precision, cap, headline)
    assert problem.startswith(wanted) and "\n" not in problem


def test_no_headline_value_after_the_first_batch() -> None:
    scenario = as_scenario("one_visit", {"horizon": 30, "warmup": 10})
    with pytest.raises(ValueError, match="after 5 replications no headline metric has two"):
        run_until_precise(scenario, ["draw_chance"], Rule(5), ["no_such_metric"])


# --- the command --------------------------------------------------------------------------------


def stopped_at(out: str) -> int:
    line = next(line for line in out.splitlines() if "stopped at" in line)
    return int(line.split("stopped at ")[1].split(" per policy")[0].split()[-1])


@pytest.mark.slow
def test_auto_stops_at_n_and_gives_the_tables_of_n(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    auto = tmp_path / "auto"
    argv = ["compare", "one_visit", *BOUNDS, *SHORT, "--replications", "auto"]
    assert main([*argv, "--precision", "0.5", "--out", str(auto)]) == 0
    out = capsys.readouterr().out
    assert "replications auto: 5 per policy first, then more until every headline" in out
    assert "after 5 per policy the widest interval is" in out  # a second batch was needed
    assert "the precision reached" in out and "widest share: draw_chance's captured share" in out
    n = stopped_at(out)
    assert n > 5
    precision = pd.read_csv(auto / "precision.csv")
    assert precision["met"].all() and set(precision["replications"]) == {n}
    assert set(precision["criterion"]) == {RELATIVE, SHARE}
    direct = tmp_path / "direct"
    argv = ["compare", "one_visit", *BOUNDS, *SHORT, "--replications", str(n)]
    assert main([*argv, "--out", str(direct)]) == 0
    for name in TABLES:
        assert (auto / name).read_bytes() == (direct / name).read_bytes(), name


def test_the_cap_stops_it_and_says_the_target_was_not_reached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "one_visit", *SHORT, "--replications", "auto", "--precision", "0.001"]
    assert main([*argv, "--max-replications", "6", "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert (
        "stopped at the cap, 6 per policy (--max-replications): the target was NOT reached" in out
    )
    assert "of its mean (target 0.1%)" in out
    precision = pd.read_csv(tmp_path / "a" / "precision.csv")
    assert not precision["met"].all()
    assert len(pd.read_csv(tmp_path / "a" / "replications.csv")) == 6


@pytest.mark.parametrize(
    ("argv", "wanted"),
    [
        (
            ["--replications", "auto", "--precision", "0"],
            "--precision: expected a number > 0, got '0'",
        ),
        (
            ["--replications", "auto", "--precision", "x"],
            "--precision: expected a number > 0, got 'x'",
        ),
        (
            ["--replications", "auto", "--max-replications", "3"],
            "--max-replications: expected a whole number from the first batch of 5",
        ),
        (
            ["--replications", "auto", "--max-replications", "many"],
            "--max-replications: expected a whole number, got 'many'",
        ),
        (["--precision", "0.1"], "--precision: 0.1 is for --replications auto only"),
        (
            ["--replications", "3", "--max-replications", "9"],
            "--max-replications: 9 is for --replications auto only (--replications: 3)",
        ),
        (["--replications", "x"], "--replications: expected a whole number >= 1 or auto, got 'x'"),
    ],
)
def test_bad_options_are_one_line(
    argv: list[str], wanted: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", "one_visit", *SHORT, *argv, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"lobbysim: error: {wanted}"), err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_a_sweep_has_no_auto(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sweep", "one_visit", "--grid", "matchmaker.tick=0.5,1", "--replications", "auto"]
    assert main([*argv, "--out", str(tmp_path / "s"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "lobbysim: error: --replications: expected a whole number >= 1, got 'auto' (auto is for "
        "lobbysim run and compare)\n"
    )


def test_the_help_says_the_rule(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--replications N|auto" in text and "--max-replications N" in text
    assert "half-width is at most --precision times its mean" in text
    assert "±10% of the mean and ±10 points" in text


# --- the Python API -----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_api_compares_with_auto_replications() -> None:
    short = {"horizon": 60, "warmup": 10}
    policies = ["draw_chance", "uniform_random", "oracle"]
    auto = lobbysim.compare(
        "one_visit", policies, replications="auto", precision=0.5, overrides=short, progress=False
    )
    assert auto.precision is not None and auto.precision.rule == PRECISION_RULE
    n = auto.precision.replications
    assert len(auto.seeds) == n and auto.precision.steps[0] == 5
    direct = lobbysim.compare(
        "one_visit", policies, replications=n, overrides=short, progress=False
    )
    pd.testing.assert_frame_equal(auto.replications, direct.replications)
    pd.testing.assert_frame_equal(auto.summary, direct.summary)
    pd.testing.assert_frame_equal(auto.differences, direct.differences)
    capped = lobbysim.compare(
        "one_visit",
        policies,
        replications="auto",
        precision=0.001,
        max_replications=5,
        overrides=short,
        progress=False,
    )
    assert capped.precision.rule == CAP_RULE and not capped.precision.reached
    with pytest.raises(ValueError, match=r"^precision: expected a number > 0, got 0$"):
        lobbysim.compare("one_visit", replications="auto", precision=0, overrides=short)
    with pytest.raises(ValueError, match="max_replications: expected a whole number from"):
        lobbysim.compare("one_visit", replications="auto", max_replications=2, overrides=short)
    with pytest.raises(ValueError, match="only with replications='auto'"):
        lobbysim.compare("one_visit", replications=3, precision=0.1, overrides=short)
