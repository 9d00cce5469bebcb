"""The first command a new user runs, ``lobbysim compare quickstart``, shows the product.

The quickstart is a small persistent player base (``lobbysim/scenarios/quickstart.yaml``): its
first ten lines give the share of the oracle's fairness gain the matchmaker captures, with its
interval, and the queue cost in seconds, with its interval; and the scenario's matchmaker,
random pairing and the oracle differ significantly (Benjamini-Hochberg adjusted, over the
scenario's own ten replications) on fairness and on the mean wait.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from lobbysim.cli.main import main

SHARE = re.compile(r"^draw_chance captures \d+% \[\d+%, \d+%\] of the fairness the oracle adds")
COST = re.compile(r"\+\d[\d.]* s \[\+\d[\d.]*, \+\d[\d.]*\] mean wait")


@pytest.mark.slow
def test_compare_quickstart_answers_first_and_its_three_policies_differ(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(["compare", "quickstart", "--out", str(out), "--jobs", "1", "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[:10]
    assert any(SHARE.search(line) for line in first), first
    assert COST.search(" ".join(first)), first

    differences = pd.read_csv(out / "differences.csv")
    pairs = {
        ("uniform_random", "draw_chance"),  # the matchmaker against no matchmaking
        ("oracle", "draw_chance"),  # the matchmaker against matching on true skill
    }
    assert set(zip(differences["policy"], differences["baseline"], strict=True)) == pairs
    for metric in ("skill_gap_true_mean", "draw_prob_true_mean", "queue_time_mean"):
        rows = differences[differences["metric"] == metric]
        assert len(rows) == 2 and rows["significant"].all(), rows
        assert (rows["n"] == 10).all()
    gap = differences[differences["metric"] == "skill_gap_true_mean"].set_index("policy")
    # random pairing is less fair than the matchmaker, the oracle fairer: the three are ordered
    assert gap.loc["uniform_random", "ci_low"] > 0 > gap.loc["oracle", "ci_high"]
