"""The skill spread's and the newcomers' standard errors as the refining simulations measure
them (lobbysim.calibration.run.spread_errors): the estimator's spread from log to log, which the
likelihood's curvature does not show, the drawn players' spread and the measured bias's own."""

from __future__ import annotations

import math

import numpy as np

from lobbysim.calibration.fit import BaseFit, Fit
from lobbysim.calibration.run import spread_errors
from lobbysim.calibration.sessions import Sessions


def _fit(skill_sd: float, curvature: float, newcomers: float, error: float, days: float) -> Fit:
    """A fit with the fields spread_errors reads (the rest are a one-visit log's)."""
    one = np.zeros(1, dtype=np.int64)
    sessions = Sessions(10.0, one, np.zeros(1), np.ones(1), np.ones(1, dtype=np.int64), 0, 0)
    base = BaseFit(500.0, newcomers, 1.0, 2.0, 0.01, 0.0, 600, 0.2, {"newcomers_per_day": error})
    return Fit(
        sessions,
        np.ones(24),
        base,
        "1v1",
        None,
        None,
        10.0,
        None,
        0.0,
        skill_sd,
        2.5,
        days,
        skill_sd_error=curvature * skill_sd,
    )


def test_the_simulations_spread_widens_the_skill_spreads_error() -> None:
    fit = _fit(3.0, 0.0145, 10.0, 3.0, 10.0)
    bias = [0.03, -0.035, -0.024]  # log(re-estimated / drawn) of three simulations
    errors = spread_errors(fit, 2450, 3.1, bias, [])
    v = float(np.var(bias, ddof=1))
    expected = 3.1 * math.sqrt(1 / (2 * 2450) + v + v / 3)
    assert math.isclose(errors["skill_sd"], expected, rel_tol=1e-12)
    # 2.7% spread from log to log: the error is some 3.7%, not the curvature's 1.45%
    assert errors["skill_sd"] / 3.1 > 2 * 0.0145
    assert "newcomers_per_day" not in errors  # no simulation measured them


def test_simulations_that_agree_leave_the_curvatures_error() -> None:
    fit = _fit(3.0, 0.0145, 10.0, 3.0, 10.0)
    errors = spread_errors(fit, 2450, 3.0, [0.01, 0.01, 0.01], [])
    assert math.isclose(errors["skill_sd"], 3.0 * 0.0145, rel_tol=1e-12)


def test_one_simulation_measures_no_spread() -> None:
    fit = _fit(3.0, 0.0145, 10.0, 3.0, 10.0)
    assert spread_errors(fit, 2450, 3.0, [0.02], [0.01]) == {}


def test_newcomers_error_is_the_joins_noise_and_the_estimators_or_the_fits() -> None:
    bias = [-0.043, -0.011, 0.016]  # log(re-estimated / joined) of three simulations
    v = float(np.var(bias, ddof=1))
    measured = 92.0 * math.sqrt(1 / (92.0 * 10.0) + v)
    wide = spread_errors(_fit(2.5, 0.02, 92.0, 3.0, 10.0), 1240, 2.5, [], bias)
    assert math.isclose(wide["newcomers_per_day"], measured, rel_tol=1e-12)
    own = spread_errors(_fit(2.5, 0.02, 92.0, 9.0, 10.0), 1240, 2.5, [], bias)
    assert own["newcomers_per_day"] == 9.0  # the likelihood's own error, where larger


def test_the_errors_degrees_of_freedom_are_satterthwaites() -> None:
    """An error dominated by the simulations' variance rests on J - 1 degrees of freedom; one
    with a known part on more; one with none on infinitely many; and its 95% interval takes
    the t quantile of them."""
    from scipy import stats

    from lobbysim.calibration.run import error_degrees, t_quantile

    fit = _fit(3.0, 0.0145, 10.0, 3.0, 10.0)
    bias = [0.03, -0.035, -0.024]  # three simulations: 2 degrees of freedom in v
    v = float(np.var(bias, ddof=1))
    known = 1 / (2 * 2450)
    square = known + v * (1 + 1 / 3)
    degrees = error_degrees(fit, 2450, bias, [])
    assert math.isclose(degrees["skill_sd"], square**2 / ((v * 4 / 3) ** 2 / 2), rel_tol=1e-12)
    assert 2.0 < degrees["skill_sd"] < 3.0  # v dominates: about J - 1
    # with the players' own spread dominating, many more
    assert error_degrees(fit, 20, bias, [])["skill_sd"] > 50
    # simulations that agree (v = 0) leave the curvature's error: no sample variance in it
    assert error_degrees(fit, 2450, [0.01, 0.01, 0.01], [])["skill_sd"] == math.inf
    # newcomers: the likelihood's own error, where larger, rests on no simulation
    nbias = [-0.043, -0.011, 0.016]
    assert error_degrees(_fit(2.5, 0.02, 92.0, 9.0, 10.0), 1240, [], nbias) == {
        "newcomers_per_day": math.inf
    }
    wide = error_degrees(_fit(2.5, 0.02, 92.0, 3.0, 10.0), 1240, [], nbias)["newcomers_per_day"]
    nv = float(np.var(nbias, ddof=1))
    assert math.isclose(wide, (1 / 920 + nv) ** 2 / (nv**2 / 2), rel_tol=1e-12)
    # the quantiles: Student's t on those degrees, the normal's on infinitely many
    assert math.isclose(t_quantile(2.0), 4.302652729749464, rel_tol=1e-9)
    assert math.isclose(t_quantile(4.0), float(stats.t.ppf(0.975, 4)), rel_tol=1e-12)
    assert math.isclose(t_quantile(math.inf), 1.959963984540054, rel_tol=1e-9)
    assert t_quantile(degrees["skill_sd"]) > 3.0  # a 95% interval on 3 simulations is wide
