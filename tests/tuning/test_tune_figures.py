"""The tune report's trial figure speaks the headline's units and says what its marks are."""

from __future__ import annotations

from pathlib import Path

import pytest

import lobbysim
from lobbysim.reporting.figures import captured_figures


@pytest.mark.slow
def test_the_trials_figure_has_a_legend_and_the_bound_in_seconds(tmp_path: Path) -> None:
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
    fig = figures["tune_trials.png"]
    (ax,) = fig.axes
    # one_visit's waits are seconds long: the axis and its bound in seconds, as the headline
    assert ax.get_xlabel().endswith("(s; bound 60 s)"), ax.get_xlabel()
    assert max(ax.get_xlim()) < 120  # the points were drawn in seconds too
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "feasible trial",
        "infeasible trial",
        "the constraint's bound",
        "Pareto front (promoted trials)",
        "best feasible",
    ]
