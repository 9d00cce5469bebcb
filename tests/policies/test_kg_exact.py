"""KG's fast look-ahead is bit-identical to the plain dense computation from the public functions.

:func:`kg_lookahead` shares work between the two outcomes of each game and prunes the max over
candidates with a bound; neither may change a single float. The reference here does neither: two
``update_1v1`` calls, ``draw_density`` and ``win_probability``, then every candidate for every
query, with the look-ahead's expression for the draw density.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lobbysim.policies import Decision, KnowledgeGradient, kg_lookahead
from lobbysim.skill.gaussian import draw_density, update_1v1, win_probability

BETA2 = 2.5
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def dense_reference(d: Decision) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(q_0j, F_j)`` without pruning or shared work (same operation order per float)."""
    mu0 = np.asarray(d.focal_mu, dtype=np.float64)[..., None]
    v0 = np.asarray(d.focal_var, dtype=np.float64)[..., None]
    mu = np.asarray(d.mu, dtype=np.float64)
    var = np.broadcast_to(np.asarray(d.var, dtype=np.float64), mu.shape)
    m = mu.shape[-1]
    q_now = draw_density(mu0, v0, mu, var, d.beta2)
    p_win = win_probability(mu0, v0, mu, var, d.beta2)
    mu0_w, v0_w, muj_l, varj_l = update_1v1(mu0, v0, mu, var, d.beta2)
    muj_w, varj_w, mu0_l, v0_l = update_1v1(mu, var, mu0, v0, d.beta2)
    best = []
    for x, v0_new, mu_j, var_j in ((mu0_w, v0_w, muj_l, varj_l), (mu0_l, v0_l, muj_w, varj_w)):
        # g for query j (axis -2) and candidate k (axis -1): exp(-(x - mu_k)^2 / (2 c2)) / sqrt(c2)
        r = 1.0 / ((v0_new + 2.0 * d.beta2)[..., :, None] + var[..., None, :])
        diff = x[..., :, None] - mu[..., None, :]
        g = np.exp(diff * diff * r * -0.5) * np.sqrt(r)
        g[..., np.arange(m), np.arange(m)] = 0.0  # j's stale belief is left out ...
        self_q = draw_density(x, v0_new, mu_j, var_j, d.beta2) / INV_SQRT_2PI  # ... its new one in
        best.append(np.maximum(g.max(axis=-1), self_q) * INV_SQRT_2PI)
    return q_now, p_win * best[0] + (1.0 - p_win) * best[1]


def random_decision(
    seed: int, rows: int, m: int, mean_scale: float, var_range: tuple[float, float]
) -> Decision:
    rng = np.random.default_rng(seed)
    return Decision(
        mean_scale * rng.normal(size=rows),
        rng.uniform(*var_range, rows),
        mean_scale * rng.normal(size=(rows, m)),
        rng.uniform(*var_range, (rows, m)),
        BETA2,
    )


def assert_as_the_reference(d: Decision) -> tuple[np.ndarray, np.ndarray]:
    """Assert kg_lookahead(d) equals the dense reference bit for bit; return the reference."""
    q_now, f = kg_lookahead(d)
    q_ref, f_ref = dense_reference(d)
    np.testing.assert_array_equal(q_now, q_ref)
    np.testing.assert_array_equal(f, f_ref)
    return q_ref, f_ref


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    rows=st.integers(1, 120),
    m=st.integers(1, 60),
    # 0: all means equal (the bound never holds); 1e3 with small variances: heavy upsets
    mean_scale=st.sampled_from([0.0, 1e-3, 0.3, 2.0, 10.0, 1e3]),
    var_range=st.sampled_from([(0.01, 0.1), (0.5, 3.0), (2.0, 3.0), (1.0, 400.0)]),
)
def test_kg_lookahead_is_bit_identical_to_the_dense_reference(
    seed: int, rows: int, m: int, mean_scale: float, var_range: tuple[float, float]
) -> None:
    assert_as_the_reference(random_decision(seed, rows, m, mean_scale, var_range))


def test_the_paper_studys_decisions_are_bit_identical_to_the_dense_reference() -> None:
    # Decisions like the study's: 49 candidates, many rows (several blocks), player 0 on top, in
    # the middle of a tight cluster (most queries need every candidate), and a single decision.
    rng = np.random.default_rng(2011)
    mu = rng.normal(0.0, 2.0, (600, 49))
    var = rng.uniform(0.05, 3.0, (600, 49))
    for mu0 in (np.full(600, 6.0), rng.normal(0.0, 0.1, 600)):
        v0 = rng.uniform(0.05, 3.0, 600)
        for d in (Decision(mu0, v0, mu, var, BETA2), Decision(mu0[7], v0[7], mu[7], var[7], BETA2)):
            assert_as_the_reference(d)


def test_kg_scores_a_scalar_candidate_variance_and_batches_of_decisions() -> None:
    rng = np.random.default_rng(5)
    d = Decision(
        rng.normal(size=(3, 4)), rng.uniform(1, 3, (3, 4)), rng.normal(size=(3, 4, 12)), 1.5, BETA2
    )
    q_ref, f_ref = assert_as_the_reference(d)
    assert f_ref.shape == (3, 4, 12)
    kg = KnowledgeGradient()
    np.testing.assert_array_equal(kg.score(d), q_ref + kg.weight(0) * f_ref)
