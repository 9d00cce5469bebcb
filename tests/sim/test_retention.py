"""Experience-driven retention: the hazard is applied exactly, visits are tallied right."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

from lobbysim.experiments.simulation import simulate
from lobbysim.registry import PluginError
from lobbysim.retention import RETENTION, Experience, Visit
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


def engagement_setup(streaks: dict[int, int]) -> tuple[Any, list[Any]]:
    """A lobby with a retention model and four waiting members, with given losing streaks."""
    import simpy

    from lobbysim.sim.entities import Waiting

    retention = {"name": "experience", "intercept": -3.0, "loss_streak": 0.6, "skill_gap": 0.4}
    sim = LobbySimulation(scenario(retention, policy="engagement"), Streams(0))
    sim.base.start()
    members = [p for p in sim.players if p is not None][:4]
    sim.base.retention._streaks.update({members[k].pid: s for k, s in streaks.items()})
    env: simpy.Environment = sim.env
    waiting = [Waiting(p.pid, p, 0.0, env.event(), 1) for p in members]
    return sim, waiting


def test_engagement_pairs_are_the_matching_of_least_total_predicted_churn() -> None:
    import itertools

    from lobbysim.sim.engagement import engagement_pairs

    sim, waiting = engagement_setup({0: 5, 2: 1})
    retention = sim.base.retention
    ids = np.array([w.pid for w in waiting])
    mu = np.array([0.0, -2.0, 2.0, 0.3])
    waited = np.array([0.5, 0.0, 1.0, 2.0])
    index = {int(pid): k for k, pid in enumerate(ids)}

    def p_win(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d = mu[[index[int(x)] for x in a]] - mu[[index[int(x)] for x in b]]
        return 1 / (1 + np.exp(-d))

    def allowed(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.ones(len(a))

    pairs = engagement_pairs(retention, waiting, ids, mu, waited, p_win, allowed, 16)

    def risk(i: int, j: int) -> float:
        p = float(p_win(ids[[i]], ids[[j]])[0])
        gap = abs(mu[i] - mu[j])
        return retention.churn_risk(
            waiting[i].player, p, gap, waited[i], mu[i]
        ) + retention.churn_risk(waiting[j].player, 1 - p, gap, waited[j], mu[j])

    matchings = [((0, 1), (2, 3)), ((0, 2), (1, 3)), ((0, 3), (1, 2))]
    totals = {m: sum(risk(*pair) for pair in m) for m in matchings}
    best = min(totals, key=totals.__getitem__)
    assert sorted(map(tuple, pairs.tolist())) == sorted(best)
    # The player on a five-game losing streak gets the opponent they most likely beat.
    assert best[0] == (0, 1)
    assert len(set(itertools.chain(*pairs.tolist()))) == 4


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
    assert f"]({RETENTION_FIGURE_FILE})" in text and "| retained_decile_1 | higher |" in text
    no_retention = run.to_dict()
    del no_retention["base"]["retention"]
    plain = run_experiment(Scenario.from_dict(no_retention), replications=1)
    (tmp_path / "b").mkdir()
    assert RETENTION_FIGURE_FILE not in {p.name for p in write_report(plain, tmp_path / "b")}
