"""Gaussian belief math against the ``trueskill`` package, by Monte Carlo and by properties."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st

from lobbysim.skill.gaussian import (
    draw_density,
    match_quality,
    true_draw_density,
    update_1v1,
    v_win,
    w_win,
    win_probability,
)

# A grid that includes heavy upsets: mean gaps up to 40 sigma of the players' own beliefs.
SIGMAS = [0.5, 1.0, 3.0, 25.0 / 3.0]
BETAS = [0.1, 1.0, 25.0 / 6.0]
GAP_IN_SIGMAS = [-40.0, -12.0, -3.0, -0.5, 0.0, 0.7, 5.0, 40.0]
GRID = [
    (gap * max(sa, sb), sa, sb, beta)
    for gap, sa, sb, beta in itertools.product(GAP_IN_SIGMAS, SIGMAS, SIGMAS, BETAS)
]


def _oracle(beta: float) -> trueskill.TrueSkill:
    # mpmath backend: the package's default float backend cannot evaluate heavy upsets at all.
    return trueskill.TrueSkill(
        mu=0.0, sigma=1.0, beta=beta, tau=0.0, draw_probability=0.0, backend="mpmath"
    )


@pytest.mark.parametrize(("gap", "sigma_w", "sigma_l", "beta"), GRID)
def test_update_and_quality_agree_with_trueskill(
    gap: float, sigma_w: float, sigma_l: float, beta: float
) -> None:
    env = _oracle(beta)
    mu_w, mu_l = 3.0, 3.0 - gap  # gap = mu_w - mu_l; negative gap: the winner was the underdog
    winner, loser = env.create_rating(mu_w, sigma_w), env.create_rating(mu_l, sigma_l)
    new_w, new_l = env.rate_1vs1(winner, loser)
    got = update_1v1(mu_w, sigma_w**2, mu_l, sigma_l**2, beta2=beta**2)
    want = (new_w.mu, new_w.sigma**2, new_l.mu, new_l.sigma**2)
    for g, w in zip(got, want, strict=True):
        assert float(g) == pytest.approx(float(w), rel=1e-9, abs=1e-9)
    quality = match_quality(mu_w, sigma_w**2, mu_l, sigma_l**2, beta2=beta**2)
    want_quality = float(env.quality_1vs1(winner, loser))
    assert float(quality) == pytest.approx(want_quality, rel=1e-9, abs=1e-300)
    c = math.sqrt(sigma_w**2 + sigma_l**2 + 2 * beta**2)
    p_win = win_probability(mu_w, sigma_w**2, mu_l, sigma_l**2, beta2=beta**2)
    assert float(p_win) == pytest.approx(float(env.cdf(gap / c)), rel=1e-9, abs=1e-300)


def test_heavy_upset_factors_are_stable() -> None:
    # v(-x) = x + 1/x - 2/x^3 + 10/x^5 - 74/x^7 ... for x -> +inf; w stays inside [0, 1).
    x = 40.0
    assert float(v_win(-x)) == pytest.approx(x + 1 / x - 2 / x**3 + 10 / x**5, rel=2e-11)
    for t in [-1e300, -1e8, -1e4, -1e3, -999.0, -40.0, 0.0, 40.0, 1e300]:
        w = float(w_win(t))
        assert 0.0 <= w <= 1.0
        assert math.isfinite(float(v_win(t)))


@pytest.mark.parametrize(
    "t", [-1e4, -1000.0, -200.0, -150.5, -149.5, -100.0, -40.0, -5.0, 0.0, 3.0]
)
def test_v_and_w_match_50_digit_arithmetic(t: float) -> None:
    mpmath.mp.dps = 50
    x = mpmath.mpf(t)
    v = mpmath.npdf(x) / mpmath.ncdf(x)
    assert float(v_win(t)) == pytest.approx(float(v), rel=1e-13)
    assert float(w_win(t)) == pytest.approx(float(v * (v + x)), rel=1e-11, abs=1e-300)


def test_monte_carlo_confirms_proposition_1_and_eq_5() -> None:
    rng = np.random.default_rng(20111211)
    n = 2_000_000
    cases = [(0.0, 2.0, 1.0, 3.0, 2.5), (1.5, 0.5, -1.0, 2.5, 2.5), (0.0, 4.0, 0.0, 4.0, 1.0)]
    for mu_a, var_a, mu_b, var_b, beta2 in cases:
        s_a = rng.normal(mu_a, math.sqrt(var_a), n)
        s_b = rng.normal(mu_b, math.sqrt(var_b), n)
        diff = s_a - s_b + rng.normal(0.0, math.sqrt(2 * beta2), n)  # p_a - p_b
        # Proposition 1: P(p_a > p_b) = Phi((mu_a - mu_b) / c)
        p_hat = float(np.mean(diff > 0))
        se = math.sqrt(p_hat * (1 - p_hat) / n)
        p = float(win_probability(mu_a, var_a, mu_b, var_b, beta2))
        assert abs(p_hat - p) < 5 * se
        # The printed paper's form is measurably wrong when the means differ.
        if mu_a != mu_b:
            p_literal = float(win_probability(mu_a, var_a, mu_b, var_b, beta2, literal=True))
            assert abs(p_hat - p_literal) > 20 * se
        # eq. (5), two ways: the density of p_a - p_b at 0 ...
        delta = 0.02
        inside = np.abs(diff) < delta
        q_hat = float(np.mean(inside)) / (2 * delta)
        q_se = math.sqrt(float(np.mean(inside)) / n) / (2 * delta)
        q = float(draw_density(mu_a, var_a, mu_b, var_b, beta2))
        assert abs(q_hat - q) < 5 * q_se + 1e-4 * q  # + a bound on the O(delta^2) window bias
        # ... and the expectation of eq. (4)'s integrand over the skill beliefs (Appendix A).
        integrand = true_draw_density(s_a, s_b, beta2)
        e_hat = float(np.mean(integrand))
        e_se = float(np.std(integrand)) / math.sqrt(n)
        assert abs(e_hat - q) < 5 * e_se


def test_quality_is_normalised_draw_density() -> None:
    mu_a, var_a, mu_b, var_b, beta2 = 0.3, 2.0, -1.2, 2.7, 2.5
    q = draw_density(mu_a, var_a, mu_b, var_b, beta2)
    q_tilde = match_quality(mu_a, var_a, mu_b, var_b, beta2)
    assert float(q_tilde) == pytest.approx(float(q) * math.sqrt(4 * math.pi * beta2), rel=1e-14)
    assert float(match_quality(1.0, 0.0, 1.0, 0.0, beta2)) == 1.0


def test_functions_broadcast() -> None:
    mu_a = np.linspace(-3, 3, 4)[:, None]
    var_b = np.array([[0.5, 1.0, 2.0]])
    out = update_1v1(mu_a, 1.0, 0.0, var_b, 2.5)
    assert all(o.shape == (4, 3) for o in out)
    for i, j in itertools.product(range(4), range(3)):
        single = update_1v1(float(mu_a[i, 0]), 1.0, 0.0, float(var_b[0, j]), 2.5)
        for whole, one in zip(out, single, strict=True):
            assert whole[i, j] == float(one)
    for f in (win_probability, draw_density, match_quality):
        assert f(mu_a, 1.0, 0.0, var_b, 2.5).shape == (4, 3)


def test_tau_adds_dynamics_before_the_game() -> None:
    base = update_1v1(0.0, 1.0, 0.0, 1.0, 2.5)
    drifted = update_1v1(0.0, 1.0, 0.0, 1.0, 2.5, tau2=0.5)
    assert drifted == tuple(update_1v1(0.0, 1.5, 0.0, 1.5, 2.5))
    assert drifted[1] > base[1]


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
variance = st.floats(min_value=1e-6, max_value=1e6)
noise = st.floats(min_value=1e-3, max_value=1e3)


@settings(max_examples=400, deadline=None)
@given(mu_w=finite, var_w=variance, mu_l=finite, var_l=variance, beta2=noise)
def test_update_properties(
    mu_w: float, var_w: float, mu_l: float, var_l: float, beta2: float
) -> None:
    new = update_1v1(mu_w, var_w, mu_l, var_l, beta2)
    assert all(np.isfinite(x) for x in new)
    m_w, v_w, m_l, v_l = (float(x) for x in new)
    # variances stay positive and never grow without tau
    assert 0.0 < v_w <= var_w
    assert 0.0 < v_l <= var_l
    # the winner's mean never falls, the loser's never rises
    assert m_w >= mu_w
    assert m_l <= mu_l
    # swapping the players mirrors the results: reflect the skill axis, winner <-> loser
    mirror = update_1v1(-mu_l, var_l, -mu_w, var_w, beta2)
    assert float(mirror[0]) == pytest.approx(-m_l, rel=1e-12, abs=1e-9)
    assert float(mirror[1]) == pytest.approx(v_l, rel=1e-12)
    assert float(mirror[2]) == pytest.approx(-m_w, rel=1e-12, abs=1e-9)
    assert float(mirror[3]) == pytest.approx(v_w, rel=1e-12)


@settings(max_examples=400, deadline=None)
@given(mu_a=finite, var_a=variance, mu_b=finite, var_b=variance, beta2=noise)
def test_prediction_properties(
    mu_a: float, var_a: float, mu_b: float, var_b: float, beta2: float
) -> None:
    p_ab = float(win_probability(mu_a, var_a, mu_b, var_b, beta2))
    p_ba = float(win_probability(mu_b, var_b, mu_a, var_a, beta2))
    assert 0.0 <= p_ab <= 1.0
    assert p_ab + p_ba == pytest.approx(1.0, abs=1e-12)
    for f in (draw_density, match_quality):
        ab = float(f(mu_a, var_a, mu_b, var_b, beta2))
        assert math.isfinite(ab) and ab >= 0.0
        assert ab == float(f(mu_b, var_b, mu_a, var_a, beta2))
    assert float(match_quality(mu_a, var_a, mu_b, var_b, beta2)) <= 1.0


def test_the_one_game_update_is_the_array_update_bit_for_bit() -> None:
    """update_1v1_one (one game on floats) against update_1v1 on random beliefs: ordinary
    games, heavy upsets on both sides of the series' switch at t = -150, huge favourites,
    equal beliefs, tiny and huge variances, with and without tau2."""
    from lobbysim.skill.gaussian import update_1v1_one

    rng = np.random.default_rng(21)
    cases = []
    for _ in range(20_000):
        var_w, var_l = rng.choice([rng.uniform(0.01, 80), 10.0 ** rng.uniform(-8, 4)], 2)
        beta2 = float(rng.choice([17.36, rng.uniform(0.1, 50)]))
        tau2 = float(rng.choice([0.0, 0.0833, rng.uniform(0, 2)]))
        scale = math.sqrt(var_w + var_l + 2 * tau2 + 2 * beta2)
        t = float(rng.choice([rng.normal(0, 2), rng.uniform(-400, -100), rng.uniform(100, 400)]))
        mu_l = float(rng.normal(25, 8))
        mu_w = float(rng.choice([mu_l + t * scale, mu_l]))
        cases.append((mu_w, float(var_w), mu_l, float(var_l), beta2, tau2))
    near = [c for c in cases if -160 < (c[0] - c[2]) / math.sqrt(c[1] + c[3] + 2 * c[4]) < -140]
    assert len(near) > 20
    for case in cases:
        want = tuple(float(x) for x in update_1v1(*case))
        assert update_1v1_one(*case) == want, case


def test_match_quality_on_lists_is_the_array_version_bit_for_bit() -> None:
    """match_quality_of_pairs (a small pass's pairs on floats) against match_quality over
    batches of 1 to 40 pairs: ordinary and far-apart beliefs (exponents down to underflow),
    equal means, tiny and huge variances, the package's beta2 and others; pairs in either
    order of the lists; and against one pair at a time."""
    from lobbysim.skill.gaussian import match_quality_of_pairs

    rng = np.random.default_rng(22)
    for _ in range(3000):
        n = int(rng.integers(1, 41))
        beta2 = float(rng.choice([17.36, rng.uniform(0.01, 50)]))
        mu_a = rng.normal(25, float(rng.choice([1, 8, 400])), n)
        mu_b = np.where(rng.random(n) < 0.1, mu_a, rng.normal(25, 8, n))
        var_a, var_b = (10.0 ** rng.uniform(-8, 3, n) for _ in range(2))
        want = match_quality(mu_a, var_a, mu_b, var_b, beta2).tolist()
        mu, var = [*mu_b.tolist(), *mu_a.tolist()], [*var_b.tolist(), *var_a.tolist()]
        got = match_quality_of_pairs(mu, var, list(range(n, 2 * n)), list(range(n)), beta2)
        assert got == want
        k = int(rng.integers(n))
        assert got[k] == float(match_quality(mu_a[k : k + 1], var_a[k : k + 1], mu_b[k : k + 1],
                                             var_b[k : k + 1], beta2)[0])  # fmt: skip


def test_numpys_exp_of_one_float_is_its_array_kernel() -> None:
    """The float paths (match_quality_of_pairs, one game scored) call numpy's exp on one float and
    rely on it being the array call's value to the last bit. (math.exp need not be: with
    numpy's AVX-512 kernel it differs from it on about 5% of these, so they do not use it.)"""
    rng = np.random.default_rng(23)
    x = np.concatenate([rng.normal(0, 0.5, 40_000), rng.normal(0, 5, 40_000),
                        rng.uniform(-745, 709, 20_000)])  # fmt: skip
    array = np.exp(x).tolist()
    assert [float(np.exp(v)) for v in x.tolist()] == array
