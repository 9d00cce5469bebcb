"""The calibration report's figures say what they draw (lobbysim/reporting/calibration.py): each
caption names the panels its figure has, left to right, and no other; and no label overlaps
another or is cut at the figure's edge (tests/reporting/layout_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lobbysim.calibration.fit import fit_log
from lobbysim.calibration.read import read_log
from lobbysim.calibration.run import Calibration, compare_logs
from lobbysim.reporting.calibration import calibration_figure, online_figure
from lobbysim.reporting.figures import captured_figures
from lobbysim.scenario import Scenario
from tests.reporting.layout_helpers import layout_problems

SAMPLE = Path(__file__).resolve().parents[2] / "lobbysim/scenarios/logs/quickstart_games.csv.gz"


@pytest.mark.slow
def test_the_captions_name_the_panels_drawn_and_no_label_collides(tmp_path: Path) -> None:
    log = read_log(SAMPLE)
    fit = fit_log(log)
    scenario = Scenario.from_dict(fit.scenario_data({"name": "fitted"}))
    # the log beside itself: the figures' layout and captions do not depend on the simulation
    calibration = Calibration(fit, scenario, {}, log, 2880.0)
    comparison = compare_logs(log, log)
    with captured_figures() as figures:
        first = calibration_figure(calibration, comparison, tmp_path)
        second = online_figure(calibration, log, comparison, tmp_path)
    panels = {
        first.file: ["day", "hour of day", "games per visit"],
        second.file: ["day", "match length (minutes)"],
    }
    for outcome in (first, second):
        fig = figures[outcome.file]
        labels = [ax.get_xlabel() for ax in fig.axes]
        assert len(labels) == len(panels[outcome.file])
        assert all(x.startswith(p) for x, p in zip(labels, panels[outcome.file], strict=True))
        assert layout_problems(fig) == [], outcome.file
    assert figures[first.file].axes[0].get_ylabel() == "per 6 hours"
    caption = first.caption
    assert "Top" not in caption and "Bottom" not in caption
    left, middle, right = (caption.index(w) for w in ("Left:", "middle:", "right:"))
    # "per 6 hours", as the y axis says on a 2-day log
    assert left < caption.index("per 6 hours") < middle < caption.index("hour-of-day") < right
    assert caption.index("games per visit", right) > right
    assert "next figure" in caption  # the players in a match and lengths are drawn there
    assert "Left: the players in a match" in second.caption
    assert "right: the match lengths" in second.caption
