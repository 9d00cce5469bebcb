"""Experience-driven retention: the hazard is applied exactly, visits are tallied right."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

from lobbysim.experiments.simulation import simulate
from lobbysim.players.retention import RETENTION, Experience, Visit
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.sim.entities import LEFT
from lobbysim.streams import Streams

DAY = 1440.0
SEEN: list[tuple[float, int, Visit]] = []


def scenario(retention: Any, days: float = 3.0, size: int = 200, **matchmaker: Any) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "retention",
            "horizon": days * DAY,
            "warmup": min(DAY, days * DAY / 2),
            "arrivals": {"name": "none"},
            "population": {"session_games_mean": 4, "patience_mean": 3},
            "game": {"length": 10},
            "matchmaker": {
                "policy": "draw_chance",
                "tick": 1.0,
                "wake_on_arrival": False,
                "threshold": [[0, 0.6], [2, 0.0]],
                **matchmaker,
            },
            "records": {"ratings_every": 720},
            "base": {
                "size": size,
                "visits": {"name": "daily", "per_day": 3.0},
                "retention": retention,
            },
        }
    )


@dataclass(frozen=True)
class Recording(Experience):
    """The experience model, remembering every visit it is asked about."""

    name: ClassVar[str] = "recording"

    def leave_probability(self, visit: Visit) -> float:
        SEEN.append((math.nan, -1, visit))
        return super().leave_probability(visit)


def test_the_experience_hazard_is_the_logistic_of_its_predictor() -> None:
    model = Experience(intercept=-3.0, loss_streak=0.5, skill_gap=0.2, queue=0.1, abandoned=1.0)
    visit = Visit(
        games=4, wins=1, losses=3, streak=2, mean_gap=1.5, mean_wait=2.0, gave_up=True,
        skill=0.0, tenure=40,
    )  # fmt: skip
    x = -3.0 + 0.5 * 2 + 0.2 * 1.5 + 0.1 * 2.0 + 1.0
    assert model.leave_probability(visit) == pytest.approx(1 / (1 + math.exp(-x)), rel=1e-15)
    assert model.return_delay(visit) == pytest.approx(math.exp(0.5 * (x + 3.0)), rel=1e-15)
    calm = Visit(0, 0, 0, 0, 0.0, 0.0, False, 0.0, 0)
    assert model.return_delay(calm) == 1.0
    assert model.leave_probability(calm) == pytest.approx(1 / (1 + math.exp(3.0)))
    # winning counts: a quarter of the games won takes 0.25 * win_rate off the log-odds
    winner = dataclasses.replace(model, win_rate=2.0)
    assert winner.leave_probability(visit) == pytest.approx(
        1 / (1 + math.exp(-(x - 2.0 * 0.25))), rel=1e-15
    )
    assert winner.leave_probability(calm) == model.leave_probability(calm)  # no games


def test_each_decision_uses_the_next_uniform_of_the_retention_stream() -> None:
    sim = LobbySimulation(scenario({"name": "experience", "intercept": -2.0}), Streams(4))
    retention = sim.base.retention
    retention.decisions = []
    sim.run()
    decisions = retention.decisions
    assert len(decisions) > 300
    uniforms = Streams(4).get("retention").random(len(decisions))
    for (_, _pid, p, delay, left), u in zip(decisions, uniforms, strict=True):
        assert left == (u < p)
        assert (delay is None) == left
    left_ids = {pid for _, pid, _, _, left in decisions if left}
    for pid in left_ids:
        assert sim.players[pid].state == LEFT
    # The base rate of about 12% a visit, and worse visits more: the leavers' mean p is higher.
    ps = np.array([d[2] for d in decisions])
    leavers = np.array([d[4] for d in decisions])
    assert ps.min() >= 1 / (1 + math.exp(2.0)) - 1e-12
    assert ps[leavers].mean() > ps[~leavers].mean()


def test_a_visit_is_tallied_from_what_the_records_show() -> None:
    SEEN.clear()
    spec = {"name": "tests.sim.test_retention:Recording", "intercept": -20.0}
    sim = LobbySimulation(scenario(spec, days=1.5), Streams(2))
    sim.run()
    result_games = sum(v.games for _, _, v in SEEN)
    assert result_games > 300
    for _, _, visit in SEEN:
        assert visit.wins + visit.losses <= visit.games
        assert visit.games == 0 or visit.mean_gap >= 0
        assert visit.mean_wait >= 0
    # Every member game of a decided visit was tallied once: with no one leaving (intercept
    # -20), the games tallied plus those of visits not yet decided are every member seat.
    seats = sum(p.games for p in sim.players if p is not None)
    assert result_games <= seats
    assert seats - result_games <= 8 * len(sim.lobby.present) + 8 * 200


def test_under_random_pairs_a_losing_streak_model_loses_the_weakest_players_first() -> None:
    # Only losing streaks count: with random opponents the weakest lose most, so they leave
    # most; the retention metrics by skill decile must show it.
    model = {"name": "experience", "intercept": -3.5, "loss_streak": 1.0, "skill_gap": 0.0,
             "queue": 0.0, "abandoned": 0.0}  # fmt: skip
    run = scenario(model, days=5.0, size=600, policy="uniform_random")
    metrics = simulate(run, 1).metrics
    low = np.mean([metrics[f"retained_decile_{k}"] for k in (1, 2, 3)])
    high = np.mean([metrics[f"retained_decile_{k}"] for k in (8, 9, 10)])
    assert low < high - 0.1, (low, high)
    assert metrics["churn_per_week"] > 0
    assert metrics["daily_active_players"] > 100


def test_retention_by_tenure_and_skill_decile_is_what_the_decisions_say() -> None:
    # The cohort (members in the base when the metrics start), who of it left (the decision
    # trace) and its split by tenure and skill decile, recomputed outside the metrics.
    model = {"name": "experience", "intercept": -3.0, "loss_streak": 0.8}
    run = scenario(model, days=4.0, size=400, policy="uniform_random")
    run = run.replace(base=dataclasses.replace(run.base, newcomer_games=6))
    sim = LobbySimulation(run, Streams(3))
    retention = sim.base.retention
    retention.decisions = []
    sim.run()
    start, horizon = run.metrics_start, run.horizon
    metrics = retention.metrics(horizon)
    weeks = (horizon - start) / (7 * DAY)
    left_before = {pid for t, pid, _, _, left in retention.decisions if left and t < start}
    left_after = {pid for t, pid, _, _, left in retention.decisions if left and t >= start}
    cohort = [
        p for p in sim.players
        if p is not None and p.member and p.registered <= start and p.pid not in left_before
    ]  # fmt: skip
    ids = np.array([p.pid for p in cohort])
    assert np.array_equal(np.sort(ids), np.sort(retention._cohort[0]))
    stayed = np.array([pid not in left_after for pid in ids])
    assert 0.2 < stayed.mean() < 0.95
    assert metrics["retained"] == stayed.mean()
    assert metrics["churn_per_week"] == pytest.approx((1 - stayed.mean()) / weeks, rel=1e-12)
    groups = np.array([retention._group[pid] for pid in ids])
    assert 0 < groups.sum() < groups.size  # both tenure groups are there
    # A game is scored at the first pass (every tick, 1 minute) after its end: the games a
    # member had at the start lie between those ended a tick before it and those ended by it.
    ends = {row[0]: row[3] for row in sim.records.games}
    surely, maybe = np.zeros(len(sim.players), int), np.zeros(len(sim.players), int)
    for row in sim.records.participants:
        surely[row[1]] += ends[row[0]] <= start - 1.0
        maybe[row[1]] += ends[row[0]] <= start
    assert np.all(groups[maybe[ids] < 6] == 0) and np.all(groups[surely[ids] >= 6] == 1)
    assert (maybe[ids] < 6).sum() > 20 and (surely[ids] >= 6).sum() > 20
    for group, prefix in enumerate(("newcomer_", "veteran_")):
        part = stayed[groups == group]
        assert metrics[f"{prefix}retained"] == pytest.approx(part.mean(), rel=1e-12)
        assert metrics[f"{prefix}churn_per_week"] == pytest.approx(
            (1 - part.mean()) / weeks, rel=1e-12
        )
    skills = np.array([p.skill for p in cohort])
    order = np.argsort(skills, kind="stable")
    sizes = [part.size for part in np.array_split(order, 10)]
    for k, part in enumerate(np.array_split(order, 10), start=1):
        assert metrics[f"retained_decile_{k}"] == pytest.approx(stayed[part].mean(), rel=1e-12)
    bottom = [stayed[part].mean() for part in np.array_split(order, 10)[:9]]
    assert metrics["retained_deciles_1_9"] == pytest.approx(np.mean(bottom), rel=1e-12)
    # The cohort's visits: by decile and by tenure group, the same total.
    by_decile = sum(
        size * metrics[f"visits_per_member_week_decile_{k}"] for k, size in enumerate(sizes, 1)
    )
    by_group = sum(
        int((groups == g).sum()) * metrics[f"{prefix}visits_per_member_week"]
        for g, prefix in enumerate(("newcomer_", "veteran_"))
    )
    assert by_decile == pytest.approx(by_group, rel=1e-12)
    assert by_decile > 0
    # The overall visits and daily actives also count members who joined after the start.
    assert metrics["visits_per_member_week"] * ids.size >= by_group - 1e-9
    assert (
        metrics["newcomer_daily_active_players"] + metrics["veteran_daily_active_players"]
        <= metrics["daily_active_players"]
    )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"loss_streak": -1}, "loss_streak must be >= 0"),
        ({"intercept": math.inf}, "intercept"),
        ({"delay": "x"}, "delay"),
        ({"win_rate": -0.5}, "win_rate must be >= 0"),
    ],
)
def test_bad_coefficients_are_named(params: dict[str, Any], message: str) -> None:
    with pytest.raises(PluginError) as info:
        LobbySimulation(scenario({"name": "experience", **params}), Streams(0))
    assert str(info.value).startswith("base.retention: ")
    assert message in str(info.value)


@dataclass(frozen=True)
class Garbage(Experience):
    """A retention model returning a probability above 1."""

    name: ClassVar[str] = "garbage"

    def leave_probability(self, visit: Visit) -> float:
        return 1.5


@dataclass(frozen=True)
class NoDelay(Experience):
    """A retention model returning a delay of 0."""

    name: ClassVar[str] = "nodelay"

    def return_delay(self, visit: Visit) -> float:
        return 0.0


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        ("Garbage", "leave_probability returned 1.5, outside [0, 1]"),
        ("NoDelay", "return_delay returned 0.0, expected a finite number > 0"),
    ],
)
def test_a_retention_model_returning_garbage_is_named(cls: str, message: str) -> None:
    name = f"tests.sim.test_retention:{cls}"
    with pytest.raises(PluginError) as info:
        LobbySimulation(scenario({"name": name}, days=1.0), Streams(0)).run()
    assert str(info.value) == f"retention model '{name}': {message}"


def test_retention_is_registered_with_its_defaults() -> None:
    model = RETENTION.create("experience", {})
    assert model.leave_probability(Visit(0, 0, 0, 0, 0.0, 0.0, False, 0.0, 0)) < 0.01


# --- the engagement policy ---------------------------------------------------------------------


def engagement_setup(streaks: dict[int, int], size: int = 4) -> tuple[Any, list[Any]]:
    """A lobby with a retention model and ``size`` waiting members, with given losing streaks."""
    import simpy

    from lobbysim.sim.entities import Waiting

    retention = {"name": "experience", "intercept": -3.0, "loss_streak": 0.6, "skill_gap": 0.4}
    sim = LobbySimulation(scenario(retention, policy="engagement"), Streams(0))
    sim.base.start()
    members = [p for p in sim.players if p is not None][:size]
    sim.base.retention._streaks.update({members[k].pid: s for k, s in streaks.items()})
    env: simpy.Environment = sim.env
    waiting = [Waiting(p.pid, p, 0.0, env.event(), 1) for p in members]
    return sim, waiting


def logistic_win(ids: np.ndarray, mu: np.ndarray) -> Any:
    index = {int(pid): k for k, pid in enumerate(ids)}

    def p_win(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d = mu[[index[int(x)] for x in a]] - mu[[index[int(x)] for x in b]]
        return 1 / (1 + np.exp(-d))

    return p_win


def every_allowed(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.ones(len(a))


def maximum_matchings(n: int) -> list[tuple[tuple[int, int], ...]]:
    """Every matching of K_n that pairs as many players as possible (brute force)."""
    out: list[tuple[tuple[int, int], ...]] = []

    def extend(rest: tuple[int, ...], chosen: tuple[tuple[int, int], ...]) -> None:
        if len(rest) < 2:
            out.append(chosen)
            return
        first, others = rest[0], rest[1:]
        if len(rest) % 2 == 1:  # an odd rest: `first` may be the one left waiting
            extend(others, chosen)
        for k, other in enumerate(others):
            extend(others[:k] + others[k + 1 :], (*chosen, (first, other)))

    extend(tuple(range(n)), ())
    return [m for m in out if len(m) == n // 2]


def game_risk(retention: Any, player: Any, p: float, gap: float, waited: float, mu: float) -> float:
    """A player's predicted churn after one more game, straight from Visits and the model."""
    from lobbysim.sim.retention import Tally

    t = retention._tallies.get(player.pid) or Tally()
    streak = retention._streaks.get(player.pid, 0)
    risks = []
    for won in (True, False):
        visit = Visit(
            games=t.games + 1,
            wins=t.wins + won,
            losses=t.losses + (not won),
            streak=0 if won else streak + 1,
            mean_gap=(t.gaps + gap) / (t.games + 1),
            mean_wait=(t.waits + waited) / (t.spells + 1),
            gave_up=False,
            skill=mu,
            tenure=player.games + 1,
        )
        risks.append(retention.model.leave_probability(visit))
    return p * risks[0] + (1 - p) * risks[1]


def wait_risk(retention: Any, player: Any, waited: float, mu: float) -> float:
    """A player's predicted churn after more waiting and no game, straight from the model."""
    from lobbysim.sim.retention import Tally

    t = retention._tallies.get(player.pid) or Tally()
    visit = Visit(
        games=t.games,
        wins=t.wins,
        losses=t.losses,
        streak=retention._streaks.get(player.pid, 0),
        mean_gap=t.gaps / t.games if t.games else 0.0,
        mean_wait=(t.waits + waited) / (t.spells + 1),
        gave_up=False,
        skill=mu,
        tenure=player.games,
    )
    return retention.model.leave_probability(visit)


def pool_churn(
    retention: Any,
    waiting: list[Any],
    ids: np.ndarray,
    mu: np.ndarray,
    waited: np.ndarray,
    matching: tuple[tuple[int, int], ...],
    next_pass: float,
) -> float:
    """The predicted churn of the whole pool under ``matching``: the matched after their game,
    the rest after another pass in the queue."""
    p_win = logistic_win(ids, mu)
    total, matched = 0.0, set()
    for i, j in matching:
        p = float(p_win(ids[[i]], ids[[j]])[0])
        gap = abs(mu[i] - mu[j])
        total += game_risk(retention, waiting[i].player, p, gap, waited[i], mu[i])
        total += game_risk(retention, waiting[j].player, 1 - p, gap, waited[j], mu[j])
        matched |= {i, j}
    for k in set(range(len(waiting))) - matched:
        total += wait_risk(retention, waiting[k].player, waited[k] + next_pass, mu[k])
    return total


def random_tallies(retention: Any, waiting: list[Any], rng: np.random.Generator) -> None:
    """Give each waiting player a visit so far: games, wins, losses, gaps, waits."""
    from lobbysim.sim.retention import Tally

    for w in waiting:
        games = int(rng.integers(0, 6))
        wins = int(rng.integers(0, games + 1))
        spells = games + int(rng.integers(0, 2))
        retention._tallies[w.pid] = Tally(
            games,
            wins,
            games - wins,
            float(rng.uniform(0, 2) * games),
            float(rng.uniform(0, 3) * spells),
            spells,
        )
        w.player.games = games + int(rng.integers(0, 50))


def test_the_brute_force_enumerates_every_maximum_matching() -> None:
    # (n - 1)!! perfect matchings for even n; n * (n - 2)!! for odd n
    assert [len(maximum_matchings(n)) for n in (2, 3, 4, 5, 6, 7)] == [1, 3, 3, 15, 15, 105]


@pytest.mark.parametrize("seed", range(6))
def test_engagement_pairs_minimise_the_predicted_churn_of_the_whole_pool(seed: int) -> None:
    from lobbysim.sim.engagement import engagement_pairs

    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8))
    streaks = {k: int(s) for k, s in enumerate(rng.integers(0, 7, n))}
    sim, waiting = engagement_setup(streaks, size=n)
    retention = sim.base.retention
    random_tallies(retention, waiting, rng)
    ids = np.array([w.pid for w in waiting])
    mu = rng.normal(0.0, 2.0, n)
    waited = rng.uniform(0.0, 3.0, n)
    pairs = engagement_pairs(
        retention, waiting, ids, mu, waited, logistic_win(ids, mu), every_allowed, 16, 0.5
    )
    chosen = tuple(map(tuple, pairs.tolist()))
    totals = [pool_churn(retention, waiting, ids, mu, waited, m, 0.5) for m in maximum_matchings(n)]
    assert len(chosen) == n // 2
    assert pool_churn(retention, waiting, ids, mu, waited, chosen, 0.5) == pytest.approx(
        min(totals), abs=1e-11
    )


def test_engagement_plays_the_riskiest_player_of_an_odd_pool() -> None:
    """Whoever is left waiting counts: the player on a six-game losing streak is matched with
    the opponent they most likely beat, and the player with least to lose waits. (Counting only
    the matched players' risks, a pool of three left the riskiest player out every time.)"""
    from lobbysim.sim.engagement import engagement_pairs

    sim, waiting = engagement_setup({0: 6}, size=3)
    retention = sim.base.retention
    ids = np.array([w.pid for w in waiting])
    mu = np.array([0.0, -1.0, 1.0])
    waited = np.array([1.0, 1.0, 1.0])
    pairs = engagement_pairs(
        retention, waiting, ids, mu, waited, logistic_win(ids, mu), every_allowed, 16, 0.5
    )
    assert pairs.tolist() == [[0, 1]]
    totals = {
        m: pool_churn(retention, waiting, ids, mu, waited, m, 0.5) for m in maximum_matchings(3)
    }
    assert min(totals, key=totals.__getitem__) == ((0, 1),)


def test_the_compiled_matching_is_networkxs_maximum_weight_matching() -> None:
    import networkx as nx

    from lobbysim.sim.engagement import max_weight_matching

    rng = np.random.default_rng(5)
    for _ in range(40):
        n = int(rng.integers(2, 40))
        a, b = np.triu_indices(n, 1)
        keep = rng.random(a.size) < 0.3
        a, b = a[keep], b[keep]
        weight = rng.uniform(-2.0, 2.0, a.size)
        ours = max_weight_matching(n, a, b, weight)
        graph = nx.Graph()
        edges = zip(a.tolist(), b.tolist(), (weight + 2.0).tolist(), strict=True)
        graph.add_weighted_edges_from(edges)
        theirs = nx.max_weight_matching(graph, maxcardinality=True)
        value = dict(zip(zip(a.tolist(), b.tolist(), strict=True), weight.tolist(), strict=True))
        assert len(ours) == len(theirs)
        assert sum(value[tuple(e)] for e in ours.tolist()) == pytest.approx(
            sum(value[(min(e), max(e))] for e in theirs), abs=1e-9
        )


def test_candidate_edges_reach_far_in_a_large_pool() -> None:
    from lobbysim.sim.engagement import candidate_edges

    mu = np.arange(200.0)[::-1]  # rank r holds pool index 199 - r
    a, b = candidate_edges(mu, 16, reach=False)
    assert set(np.abs(a - b).tolist()) == set(range(1, 9))
    a, b = candidate_edges(mu, 16, reach=True)
    far = [11, 14, 18, 23, 29, 37, 47, 59, 74, 93, 117, 147, 184]
    assert set(np.abs(a - b).tolist()) == {*range(1, 9), *far}
    assert len(set(zip(a.tolist(), b.tolist(), strict=True))) == a.size and bool(np.all(a < b))
    a, b = candidate_edges(np.zeros(3), 16, reach=True)
    assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == [(0, 1), (0, 2), (1, 2)]


def test_engagement_keeps_the_rematch_rule_and_runs_a_lobby() -> None:
    retention = {"name": "experience", "intercept": -3.0}
    result = simulate(scenario(retention, days=1.5, policy="engagement"), 3)
    assert len(result.games) > 100
    assert "churn_per_week" in result.metrics
    seats = result.participants.merge(result.games[["game_id", "start"]], on="game_id")
    seats = seats.sort_values(["start", "game_id"])
    opponents = seats.groupby("game_id").player_id.apply(list)
    last: dict[int, int] = {}
    for a, b in opponents:
        assert last.get(a) != b and last.get(b) != a  # rematch_games defaults to 1 with a base
        last[a], last[b] = b, a


def test_engagement_needs_a_retention_model_and_1v1() -> None:
    plain = scenario({"name": "experience"}, policy="engagement").to_dict()
    del plain["base"]["retention"]
    with pytest.raises(PluginError) as info:
        LobbySimulation(Scenario.from_dict(plain), Streams(0))
    assert str(info.value) == (
        "matchmaker.policy: 'engagement' predicts churn with the retention model of a player "
        "base: it needs base.retention"
    )
    team = scenario({"name": "experience"}, policy="engagement").to_dict()
    team["game"] = {"length": 10, "mode": "team", "team_size": 2}
    with pytest.raises(PluginError) as info:
        LobbySimulation(Scenario.from_dict(team), Streams(0))
    assert "pairs players for 1v1 games only, got game.mode team" in str(info.value)


@pytest.mark.slow
def test_the_report_shows_retention_by_skill_decile(tmp_path: Any) -> None:
    from lobbysim.experiments import run_experiment
    from lobbysim.reporting.retention_figures import RETENTION_FIGURE_FILE
    from lobbysim.reporting.run import write_report

    retention = {"name": "experience", "intercept": -3.0}
    run = scenario(retention, days=1.0)
    result = run_experiment(run, policies=["draw_chance", "uniform_random"], replications=2)
    written = {p.name for p in write_report(result, tmp_path)}
    assert RETENTION_FIGURE_FILE in written
    assert (tmp_path / RETENTION_FIGURE_FILE).read_bytes().startswith(b"\x89PNG")
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert f"]({RETENTION_FIGURE_FILE})" in text
    assert "| retained_decile_1 | share | higher |" in text
    no_retention = run.to_dict()
    del no_retention["base"]["retention"]
    plain = run_experiment(Scenario.from_dict(no_retention), replications=1)
    (tmp_path / "b").mkdir()
    assert RETENTION_FIGURE_FILE not in {p.name for p in write_report(plain, tmp_path / "b")}


def random_visits(rng: np.random.Generator, n: int) -> Any:
    from lobbysim.players.retention import Visits

    games = rng.integers(0, 12, n)
    wins = rng.integers(0, 12, n) % (games + 1)
    return Visits(
        games=games,
        wins=wins,
        losses=games - wins,
        streak=rng.integers(0, 9, n),
        mean_gap=rng.uniform(0, 4, n),
        mean_wait=rng.exponential(2.0, n),
        gave_up=rng.random(n) < 0.2,
        skill=rng.normal(0, 2, n),
        tenure=rng.integers(0, 500, n),
    )


@pytest.mark.parametrize(("intercept", "win_rate"), [(-4.5, 0.0), (3.0, 0.0), (-4.5, 1.5)])
def test_the_experience_model_on_columns_is_its_one_visit_verb(
    intercept: float, win_rate: float
) -> None:
    model = Experience(intercept, loss_streak=0.5, skill_gap=0.3, queue=0.2, win_rate=win_rate)
    visits = random_visits(np.random.default_rng(2), 500)
    many = model.leave_probabilities(visits)
    one = [model.leave_probability(visits.row(k)) for k in range(500)]
    # numpy's exp may differ from the math module's in the last bit
    assert many.tolist() == pytest.approx(one, rel=1e-14, abs=0.0)


@dataclass(frozen=True)
class OneAtATime:
    """The experience model without its column verb: the engine asks one visit at a time."""

    name: ClassVar[str] = "one_at_a_time"
    inner: Any = dataclasses.field(default_factory=lambda: Experience(-3.0, 0.6, 0.4))

    def leave_probability(self, visit: Visit) -> float:
        return self.inner.leave_probability(visit)

    def return_delay(self, visit: Visit) -> float:
        return self.inner.return_delay(visit)


def test_a_model_without_the_column_verb_gets_the_same_pairs() -> None:
    from lobbysim.sim.engagement import engagement_pairs

    rng = np.random.default_rng(8)
    sim, waiting = engagement_setup({k: int(s) for k, s in enumerate(rng.integers(0, 6, 30))}, 30)
    retention = sim.base.retention
    random_tallies(retention, waiting, rng)
    ids = np.array([w.pid for w in waiting])
    mu, waited = rng.normal(0, 2, 30), rng.uniform(0, 3, 30)
    args = (waiting, ids, mu, waited, logistic_win(ids, mu), every_allowed, 8, 0.5)
    columns = engagement_pairs(retention, *args)
    retention.model = OneAtATime()
    assert engagement_pairs(retention, *args).tolist() == columns.tolist()


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (lambda n: np.full(n + 1, 0.1), "leave_probabilities returned ndarray of shape"),
        (lambda n: np.full(n, 1.5), "leave_probabilities returned 1.5, outside [0, 1]"),
        (lambda n: np.full(n, np.nan), "leave_probabilities returned nan, outside [0, 1]"),
        (lambda n: "no", "leave_probabilities returned str of shape ?"),
    ],
)
def test_a_bad_column_verb_is_named(returned: Any, message: str) -> None:
    from lobbysim.players.retention import leave_probabilities

    class Bad:
        name = "bad"

        def leave_probabilities(self, visits: Any) -> Any:
            return returned(len(visits))

    with pytest.raises(PluginError, match=r"retention model 'mine': ") as info:
        visits = random_visits(np.random.default_rng(0), 4)
        leave_probabilities("mine", Bad(), visits)  # type: ignore[arg-type]
    assert message in str(info.value)
