"""The lobby's knowledge gradient (``lobby_knowledge_gradient``): a look-ahead over the players
online (lobbysim/policies/lobby_knowledge_gradient.py).

1. The expected max of a random m-subset against enumerating every subset.
2. F_j of hand-made decisions against a scalar, math-module implementation of the formula, the
   expectation taken by enumerating the subsets.
3. Without the players online in the decision, the scores are the paper's KG's, exactly.
4. In a small lobby, the players online the policy is given at a pass are exactly the driving
   rater's beliefs of the players waiting or playing then, and the run is reproducible.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest

from lobbysim.experiments.simulation import collect, simulate
from lobbysim.policies import POLICIES, Decision, KnowledgeGradient, LobbyKnowledgeGradient
from lobbysim.policies.lobby_knowledge_gradient import (
    expected_subset_max,
    lobby_lookahead,
    subset_max_weights,
)
from lobbysim.scenario import Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.sim.entities import PLAYING, WAITING
from lobbysim.streams import Streams

BETA2 = 2.5
DAY = 1440.0
REL = 1e-11


# ---------------------------------------------------------------- 1. the expected max
def brute_subset_max(values: list[float], m: int) -> float:
    """The mean over every m-subset of its max (the max if m >= the number of values)."""
    m = min(m, len(values))
    maxima = [max(subset) for subset in itertools.combinations(values, m)]
    return math.fsum(maxima) / len(maxima)


@pytest.mark.parametrize("n", range(1, 9))
def test_the_expected_max_of_a_random_subset_is_the_mean_over_every_subset(n: int) -> None:
    rng = np.random.default_rng(n)
    for values in (
        rng.normal(size=n),
        rng.integers(0, 3, size=n).astype(float),  # ties
        np.exp(-rng.uniform(0, 40, size=n)),  # densities of very different sizes
    ):
        for m in range(1, n + 1):
            got = float(expected_subset_max(values, m))
            want = brute_subset_max(values.tolist(), m)
            assert got == pytest.approx(want, rel=1e-13, abs=1e-300), (n, m)
        # m >= N: the max itself
        for m in (n, n + 1, 10 * n):
            assert float(expected_subset_max(values, m)) == values.max()
    # batched along the leading axes, any order of the values
    batch = rng.normal(size=(3, 2, n))
    m = max(1, n // 2)
    want = [[brute_subset_max(row.tolist(), m) for row in rows] for rows in batch]
    np.testing.assert_allclose(expected_subset_max(batch[..., ::-1], m), want, rtol=1e-13)


def test_the_subset_weights_are_the_order_statistics_probabilities() -> None:
    # w[r-1] = C(r-1, m-1) / C(N, m): the chance that v_(r) is the max of the subset
    for n, m in [(1, 1), (5, 1), (5, 2), (8, 8), (40, 7), (3000, 17)]:
        w = subset_max_weights(n, m)
        want = [math.comb(r - 1, m - 1) / math.comb(n, m) for r in range(1, n + 1)]
        np.testing.assert_allclose(w, want, rtol=1e-12, atol=0.0)
        assert math.fsum(w) == pytest.approx(1.0, rel=1e-12)
    assert subset_max_weights(0, 3).size == 0
    assert float(expected_subset_max(np.empty(0), 2)) == 0.0  # nobody to meet
    with pytest.raises(ValueError):
        subset_max_weights(4, 0)


# ---------------------------------------------------------------- 2. F_j, by hand
def _density(mu_a: float, var_a: float, mu_b: float, var_b: float) -> float:
    """q of eq. (5), corrected: exp(-d^2 / (2 c^2)) / (sqrt(2 pi) c)."""
    c2 = var_a + var_b + 2.0 * BETA2
    d = mu_a - mu_b
    return math.exp(-d * d / (2.0 * c2)) / math.sqrt(2.0 * math.pi * c2)


def _update(mu_w: float, var_w: float, mu_l: float, var_l: float) -> tuple[float, ...]:
    """TrueSkill's 1v1 update after w beats l (docs/model.md 3.1)."""
    c2 = var_w + var_l + 2.0 * BETA2
    c = math.sqrt(c2)
    t = (mu_w - mu_l) / c
    v = math.exp(-t * t / 2.0) / math.sqrt(2.0 * math.pi) / (0.5 * math.erfc(-t / math.sqrt(2)))
    w = v * (v + t)
    return (
        mu_w + var_w / c * v,
        var_w * (1.0 - var_w / c2 * w),
        mu_l - var_l / c * v,
        var_l * (1.0 - var_l / c2 * w),
    )


def reference_f(
    mu0: float,
    var0: float,
    mu_j: float,
    var_j: float,
    online: list[tuple[float, float]],
    m: int,
) -> float:
    """F_j = P(0 beats j) E[max over a random m-subset of ``online`` of q(0 after the win, k)]
    + P(j beats 0) E[... after the loss], in scalar loops, by enumerating the subsets."""
    c = math.sqrt(var0 + var_j + 2.0 * BETA2)
    p_win = 0.5 * math.erfc(-((mu0 - mu_j) / c) / math.sqrt(2.0))
    m0_win, v0_win, _, _ = _update(mu0, var0, mu_j, var_j)
    _, _, m0_loss, v0_loss = _update(mu_j, var_j, mu0, var0)
    f = 0.0
    for p, m0, v0 in ((p_win, m0_win, v0_win), (1.0 - p_win, m0_loss, v0_loss)):
        values = [_density(m0, v0, mk, vk) for mk, vk in online]
        f += p * brute_subset_max(values, m) if values else 0.0
    return f


def _online(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    return rng.normal(0.0, 2.0, n), rng.uniform(0.2, 5.0, n)


def test_f_is_the_expected_best_of_m_players_online_but_the_focal_player_and_j() -> None:
    rng = np.random.default_rng(7)
    f_mu, f_var = _online(rng, 9)
    focal, cands = 4, np.array([0, 2, 7, 8])  # places in the online arrays
    d = Decision(
        focal_mu=f_mu[focal],
        focal_var=f_var[focal],
        mu=f_mu[cands],
        var=f_var[cands],
        beta2=BETA2,
        future_mu=f_mu,
        future_var=f_var,
        future_pool=3,
        future_focal=np.intp(focal),
        future_candidates=cands,
    )
    everyone = list(zip(f_mu.tolist(), f_var.tolist(), strict=True))
    for m in (1, 3, 7, 20):  # 7 = everyone left; 20 > 7: the max
        q_now, f = lobby_lookahead(d, m)
        for slot, j in enumerate(cands.tolist()):
            others = [b for k, b in enumerate(everyone) if k not in (focal, j)]
            want = reference_f(f_mu[focal], f_var[focal], f_mu[j], f_var[j], others, m)
            assert float(f[slot]) == pytest.approx(want, rel=REL), (m, j)
            assert float(q_now[slot]) == pytest.approx(
                _density(f_mu[focal], f_var[focal], f_mu[j], f_var[j]), rel=1e-14
            )

    # The policy: m from the decision's future_pool (3), W = gamma / (1 - gamma).
    policy = LobbyKnowledgeGradient(gamma=0.9)
    q_now, f = lobby_lookahead(d, 3)
    np.testing.assert_allclose(policy.score(d), q_now + 9.0 * f, rtol=1e-14)
    # next_pool, when given, is m whatever the decision's future_pool
    q_now, f = lobby_lookahead(d, 5)
    np.testing.assert_allclose(
        LobbyKnowledgeGradient(next_pool=5).score(d), q_now + 99.0 * f, rtol=1e-13
    )
    assert not np.allclose(LobbyKnowledgeGradient(next_pool=5).score(d), policy.score(d))

    # The comparison is sharp: keeping the focal player or j in the set, or another m, differs.
    slot, j = 1, int(cands[1])
    got = float(lobby_lookahead(d, 3)[1][slot])
    keep_focal = [b for k, b in enumerate(everyone) if k != j]
    keep_j = [b for k, b in enumerate(everyone) if k != focal]
    others = [b for k, b in enumerate(everyone) if k not in (focal, j)]
    args = (f_mu[focal], f_var[focal], f_mu[j], f_var[j])
    assert abs(got / reference_f(*args, keep_focal, 3) - 1) > 1e-3
    assert abs(got / reference_f(*args, keep_j, 3) - 1) > 1e-4
    assert abs(got / reference_f(*args, others, 2) - 1) > 1e-3


def test_f_in_a_batch_with_padding_and_players_not_online() -> None:
    """A batch of shape (2, 3) with 4 candidates each, as a pass's blocks: padding slots (-1)
    and a focal player not among those online (-1)."""
    rng = np.random.default_rng(11)
    f_mu, f_var = _online(rng, 10)
    focal = np.array([[0, 1, 2], [3, -1, 9]], dtype=np.intp)
    cands = rng.integers(0, 10, size=(2, 3, 4)).astype(np.intp)
    cands[0, 0] = [1, 2, 3, 4]
    cands[1, 0] = [-1, 5, 6, -1]
    mu = np.where(cands >= 0, f_mu[cands], 1e9)
    var = f_var[cands]
    focal_mu = np.where(focal >= 0, f_mu[focal], 0.5)
    focal_var = np.where(focal >= 0, f_var[focal], 1.5)
    d = Decision(
        focal_mu,
        focal_var,
        mu,
        var,
        BETA2,
        future_mu=f_mu,
        future_var=f_var,
        future_pool=4,
        future_focal=focal,
        future_candidates=cands,
    )
    _, f = lobby_lookahead(d, 4)
    assert f.shape == (2, 3, 4)
    everyone = list(zip(f_mu.tolist(), f_var.tolist(), strict=True))
    checked = 0
    for b, i, s in itertools.product(range(2), range(3), range(4)):
        fo, j = int(focal[b, i]), int(cands[b, i, s])
        if j < 0:
            continue  # a padding slot: its score is never used (nor finite to compute by hand)
        others = [x for k, x in enumerate(everyone) if k not in (fo, j)]
        want = reference_f(
            float(focal_mu[b, i]), float(focal_var[b, i]), mu[b, i, s], var[b, i, s], others, 4
        )
        assert float(f[b, i, s]) == pytest.approx(want, rel=REL, abs=1e-300), (b, i, s)
        checked += 1
    assert checked == 22
    # row (1, 1): a focal player not online (no place, a belief nobody online has), so only j
    # is left out; its F differs from the same row's F with one more player left out
    assert focal[1, 1] == -1 and focal_mu[1, 1] not in f_mu
    one_less = dataclasses.replace(d, future_focal=np.where(focal >= 0, focal, 0))
    assert not np.allclose(lobby_lookahead(one_less, 4)[1][1, 1], f[1, 1], rtol=1e-6, atol=0)


# ---------------------------------------------------------------- 3. the fallback
def _decisions() -> Iterator[Decision]:
    rng = np.random.default_rng(3)
    yield Decision(
        np.float64(0.3), np.float64(2.0), rng.normal(0, 2, 7), rng.uniform(0.5, 4, 7), 2.5
    )
    shape = (5, 8)  # a batch with more candidates than KG's pruning scores first
    yield Decision(
        rng.normal(0, 2, shape[0]),
        rng.uniform(0.5, 4, shape[0]),
        rng.normal(0, 2, shape),
        rng.uniform(0.5, 4, shape),
        BETA2,
        games_played=np.arange(shape[0]),
    )
    yield Decision(
        rng.normal(0, 2, (40,)),
        rng.uniform(0.5, 4, (40,)),
        rng.normal(0, 3, (40, 30)),
        rng.uniform(0.5, 4, (40, 30)),
        BETA2,
        games_played=7,
    )


@pytest.mark.parametrize(
    "params",
    [{}, {"gamma": 0.9}, {"rule": "finite_horizon", "horizon": 20}, {"next_pool": 3}],
)
def test_without_players_online_it_is_the_papers_kg(params: dict[str, Any]) -> None:
    lobby = POLICIES.create("lobby_knowledge_gradient", params)
    paper = KnowledgeGradient(**{k: v for k, v in params.items() if k != "next_pool"})
    for d in _decisions():
        assert d.future_mu is None
        np.testing.assert_array_equal(lobby.score(d), paper.score(d))
    # ... and with them it is not
    d = next(_decisions())
    online = dataclasses.replace(
        d, future_mu=np.linspace(-3, 3, 12), future_var=np.full(12, 1.0), future_pool=5
    )
    assert not np.allclose(lobby.score(online), paper.score(online), rtol=1e-6, atol=0)


def test_the_policy_is_registered_with_its_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    from lobbysim.cli.main import main
    from lobbysim.scenario.specs import policy_spec

    spec = policy_spec("lobby_knowledge_gradient(gamma=0.9)")
    policy = POLICIES.create(spec.name, spec.params)
    assert isinstance(policy, LobbyKnowledgeGradient) and policy.gamma == 0.9
    assert LobbyKnowledgeGradient.needs_online and not getattr(KnowledgeGradient, "needs_online", 0)
    assert main(["plugins"]) == 0
    listing = capsys.readouterr().out
    assert (
        "lobby_knowledge_gradient: rule='discounted', gamma=0.99, horizon=None, next_pool=None"
        in listing
    )
    for bad in ({"next_pool": 0}, {"next_pool": 2.5}, {"gamma": 1.0}):
        with pytest.raises(ValueError):
            POLICIES.create("lobby_knowledge_gradient", bad)


# ---------------------------------------------------------------- 4. in a lobby
def scenario(assignment: str = "global") -> Scenario:
    """A small player base, as tests/sim/test_retention.py's, without retention, under
    ``lobby_knowledge_gradient``."""
    return Scenario.from_dict(
        {
            "name": "lobby_kg",
            "horizon": 0.5 * DAY,
            "warmup": 0.25 * DAY,
            "seed": 4,
            "arrivals": {"name": "none"},
            "population": {"session_games_mean": 4, "patience_mean": 3},
            "game": {"length": 10},
            "matchmaker": {
                "policy": "lobby_knowledge_gradient",
                "assignment": assignment,
                "tick": 1.0,
                "wake_on_arrival": False,
                "threshold": [[0, 0.6], [2, 0.0]],
            },
            "records": {"ratings_every": 720},
            "base": {"size": 200, "visits": {"name": "daily", "per_day": 3.0}},
        }
    )


@dataclass
class Seen:
    """One call of the policy's ``score`` in a pass, with the lobby as it was then."""

    decision: Decision
    queue: list[int]  # the pool's players, in pool order
    playing: list[int]  # the players in a running game
    beliefs: dict[int, tuple[float, float]]  # the driving rater's, of everyone online


def _copy(decision: Decision) -> Decision:
    fields = {
        f.name: np.array(getattr(decision, f.name), copy=True)
        for f in dataclasses.fields(decision)
        if isinstance(getattr(decision, f.name), np.ndarray)
    }
    return dataclasses.replace(decision, **fields)


def recorded_run(sc: Scenario) -> tuple[list[Seen], pd.DataFrame]:
    """Run ``sc`` recording every decision the policy scores (its scores unchanged)."""
    seen: list[Seen] = []
    sim = LobbySimulation(sc, Streams(sc.seed))
    original = LobbyKnowledgeGradient.score

    def score(self: LobbyKnowledgeGradient, decision: Decision) -> np.ndarray:
        players = [p for p in sim.players if p is not None]
        queue = list(sim.pool)
        playing = [p.pid for p in players if p.state == PLAYING]
        online = np.array([p.pid for p in players if p.state in (WAITING, PLAYING)], dtype=np.int64)
        beliefs = dict(
            zip(
                online.tolist(),
                zip(
                    sim.driver.means(online).tolist(),
                    sim.driver.variances(online).tolist(),
                    strict=True,
                ),
                strict=True,
            )
        )
        seen.append(Seen(_copy(decision), queue, playing, beliefs))
        return original(self, decision)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(LobbyKnowledgeGradient, "score", score)
        with sim.tuned():
            sim.run()
            games = collect(sim, sc.seed).games
    return seen, games


@pytest.fixture(scope="module", params=["global", "sequential"])
def lobby(request: pytest.FixtureRequest) -> tuple[Scenario, list[Seen], pd.DataFrame]:
    sc = scenario(request.param)
    return (sc, *recorded_run(sc))


def test_the_policy_gets_the_driving_raters_beliefs_of_everyone_online(
    lobby: tuple[Scenario, list[Seen], pd.DataFrame],
) -> None:
    _, seen, _ = lobby
    assert len(seen) >= 50
    assert sum(len(s.playing) > 0 for s in seen) >= len(seen) // 2  # others than the queue
    for s in seen:
        d = s.decision
        assert d.future_mu is not None and d.future_var is not None
        online = s.queue + s.playing
        assert set(s.beliefs) == set(online)  # everyone waiting or playing
        assert d.future_mu.shape == d.future_var.shape == (len(online),)
        # The queue first, in pool order (entry i is pool player i), then those playing.
        n = len(s.queue)
        got = list(zip(d.future_mu.tolist(), d.future_var.tolist(), strict=True))
        assert got[:n] == [s.beliefs[p] for p in s.queue]
        assert sorted(got[n:]) == sorted(s.beliefs[p] for p in s.playing)
        assert d.future_pool == max(n - 1, 1)
        # The places of the focal player and the candidates point at their own beliefs.
        assert d.future_focal is not None and d.future_candidates is not None
        focal = np.broadcast_to(d.future_focal, np.shape(d.focal_mu))
        real = focal >= 0
        np.testing.assert_array_equal(d.future_mu[focal[real]], np.asarray(d.focal_mu)[real])
        np.testing.assert_array_equal(d.future_var[focal[real]], np.asarray(d.focal_var)[real])
        cand = d.future_candidates
        present = cand >= 0
        np.testing.assert_array_equal(d.future_mu[cand[present]], d.mu[present])
        np.testing.assert_array_equal(d.future_var[cand[present]], d.var[present])
        assert (d.mu[~present] >= 1e8).all()  # only a block's padding has no place


def test_a_lobby_run_is_reproducible(lobby: tuple[Scenario, list[Seen], pd.DataFrame]) -> None:
    sc, _, recorded = lobby
    assert len(recorded) > 100
    first = simulate(sc, sc.seed).games
    pd.testing.assert_frame_equal(first, recorded)  # the recording changed nothing
    pd.testing.assert_frame_equal(simulate(sc, sc.seed).games, first)
    assert not simulate(sc, sc.seed + 1).games.equals(first)
