"""Games whose teams are given one by one (``game.teams``): ranges of players, uneven teams,
more than two teams and expansions of a team's minimum, formed by the rule builders and read
back from the records of real runs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from lobbysim.experiments.simulation import SimulationResult, simulate
from lobbysim.records.rows import make_seat
from lobbysim.scenario import Scenario, ScenarioError
from lobbysim.skill.truth import game_truth


def _run(game: dict[str, Any], rate: float = 3.0, horizon: float = 90.0, **mm: Any) -> Any:
    data = {
        "horizon": horizon,
        "warmup": 0,
        "seed": 5,
        "game": {"length": 6.0, "quit_rate": 0.05, **game},
        "matchmaker": {"algorithm": "flexmatch", "rules": [], **mm},
        "arrivals": {"name": "poisson", "rate": rate},
    }
    scenario = Scenario.from_dict(data)
    return scenario, simulate(scenario)


def _starts(result: SimulationResult) -> pd.DataFrame:
    """The seats taken when each game started (back-fills left out), with each seat's wait."""
    p = result.participants
    g = result.games.set_index("game_id")
    first = p[p.joined == g.start.reindex(p.game_id).to_numpy()].copy()
    w = result.waits[result.waits.outcome == "matched"]
    waits = w.set_index(["player_id", "left_queue"]).wait
    first["wait"] = waits.reindex(list(zip(first.player_id, first.joined, strict=True))).to_numpy()
    return first


def test_a_free_for_all_of_a_range_starts_with_what_it_has_within_the_range() -> None:
    _, result = _run({"mode": "ffa", "teams": [{"min_players": 3, "max_players": 6}]})
    sizes = _starts(result).groupby("game_id").size()
    assert len(sizes) >= 50
    assert sizes.between(3, 6).all()
    assert sizes.nunique() >= 3  # games of several sizes in the range form
    # FlexMatch starts a match once its minimum is met, so a designer who wants full games
    # starts the minimum at the maximum and relaxes it with the wait (the expansion idiom)
    team = {"min_players": 6, "max_players": 6, "expansions": [[1.0, 3]]}
    _, busy = _run({"mode": "ffa", "teams": [{**team, "max_players": 6}]}, rate=20.0)
    starts = _starts(busy)
    full = starts.groupby("game_id").size()
    assert (full == 6).mean() >= 0.9
    short = full.index[full < 6]
    assert (starts.groupby("game_id").wait.min()[short] >= 1.0).all()


def test_three_teams_of_a_range_are_filled_evenly_and_all_three_play() -> None:
    game = {
        "mode": "team",
        "teams": [{"name": "squad", "min_players": 3, "max_players": 5, "quantity": 3}],
    }
    _, result = _run(game)
    starts = _starts(result)
    counts = starts.groupby(["game_id", "team"]).size().unstack()
    assert list(counts.columns) == [0, 1, 2] and len(counts) >= 20
    assert counts.notna().all().all()
    assert ((counts >= 3) & (counts <= 5)).all().all()
    assert (counts.max(axis=1) - counts.min(axis=1) <= 1).all()  # FlexMatch's filling order
    # the teams are balanced: the spread of their mean true skills is far below random teams'
    assert result.games.team_gap_true.mean() < 0.8 * _random_team_gap(result, counts)
    assert result.games.win_chance_predicted.isna().all()  # none for three teams
    assert set(result.games.winner.dropna().astype(int)) == {0, 1, 2}


def _random_team_gap(result: SimulationResult, counts: pd.DataFrame) -> float:
    """The mean gap (strongest less weakest team mean) of the same games' players on random
    teams of the same sizes: what the split must beat."""
    rng = np.random.default_rng(0)
    starts = _starts(result)
    skills = result.players.set_index("player_id").skill if "skill" in result.players else None
    assert skills is not None
    gaps = []
    for game_id, seats in starts.groupby("game_id"):
        values = rng.permutation(skills.reindex(seats.player_id).to_numpy())
        cuts = np.cumsum(counts.loc[game_id].to_numpy(dtype=int))[:-1]
        means = [part.mean() for part in np.split(values, cuts)]
        gaps.append(max(means) - min(means))
    return float(np.mean(gaps))


def test_uneven_teams_keep_their_sizes_and_the_minimum_falls_on_the_newest_clock() -> None:
    game = {
        "mode": "team",
        "teams": [
            {
                "name": "raiders",
                "min_players": 5,
                "max_players": 5,
                "expansions": [[0.75, 4], [1.5, 3]],
            },
            {"name": "dragon", "max_players": 1},
        ],
    }
    _, result = _run(game, rate=1.5, horizon=240.0)
    starts = _starts(result)
    raiders = starts[starts.team == 0].groupby("game_id").size()
    dragons = starts[starts.team == 1].groupby("game_id").size()
    assert (dragons == 1).all() and len(dragons) >= 20
    newest = starts.groupby("game_id").wait.min()
    least = np.where(newest >= 1.5, 3, np.where(newest >= 0.75, 4, 5))
    assert (raiders.reindex(newest.index).to_numpy() >= least).all()
    assert (raiders < 5).any(), "no game used an expansion of the raiders' minimum"
    # won by the higher score per minute, not the five raiders' total
    p = result.participants
    rate = p.groupby(["game_id", "team"]).score.sum() / p.groupby(["game_id", "team"]).minutes.sum()
    best = rate.unstack().idxmax(axis=1)
    games = result.games.set_index("game_id")
    decided = games.winner.notna()
    assert (best[decided].to_numpy() == games.winner[decided].astype(int).to_numpy()).all()
    assert 0.2 < (games.winner[decided] == 1).mean() < 0.8  # the lone dragon wins some


def test_teams_of_one_fixed_size_given_one_by_one_run_the_same_games_as_team_size() -> None:
    rules = [{"name": "near", "kind": "skill_distance", "attribute": "skill", "limit": 3.0}]
    attributes = {"skill": {"type": "number", "source": "rating"}}
    base: dict[str, Any] = {
        "horizon": 60,
        "warmup": 0,
        "seed": 3,
        "attributes": attributes,
        "matchmaker": {"algorithm": "flexmatch", "rules": rules},
        "arrivals": {"name": "poisson", "rate": 4.0},
    }
    one = simulate(Scenario.from_dict({**base, "game": {"mode": "team", "team_size": 3}}))
    teams = {"mode": "team", "teams": [{"name": "side", "max_players": 3, "quantity": 2}]}
    two = simulate(Scenario.from_dict({**base, "game": teams}))
    assert len(one.games) > 10
    pd.testing.assert_frame_equal(one.games, two.games)
    pd.testing.assert_frame_equal(one.participants, two.participants)


@pytest.mark.parametrize(
    ("game", "mm", "message"),
    [
        (
            {"mode": "team", "team_size": 2, "teams": [{"max_players": 2, "quantity": 2}]},
            {},
            "game.teams: give either teams or team_size",
        ),
        (
            {"mode": "team", "teams": [{"min_players": 3, "max_players": 5, "quantity": 2}]},
            {"algorithm": "exact"},
            "is formed by the rule matchmaker's builders",
        ),
        (
            {"mode": "ffa", "teams": [{"max_players": 4, "quantity": 2}]},
            {},
            "mode ffa has one team",
        ),
        (
            {"mode": "team", "teams": [{"min_players": 6, "max_players": 5, "quantity": 2}]},
            {},
            "game.teams[0].min_players: 6 is more than max_players 5",
        ),
        (
            {
                "mode": "team",
                "teams": [{"max_players": 5, "expansions": [[1, 6]]}, {"max_players": 1}],
            },
            {},
            "game.teams[0].expansions[0]: the minutes increase",
        ),
        (
            {"mode": "team", "teams": [{"max_players": 150}, {"max_players": 60}]},
            {},
            "210 players at most; a game holds at most 200",
        ),
        (
            {"mode": "team", "teams": [{"name": "a", "max_players": 2, "colour": "red"}]},
            {},
            "game.teams[0].colour: unknown field",
        ),
        ({"mode": "team", "teams": 5}, {}, "game.teams: expected a list, got 5"),
    ],
)
def test_teams_that_cannot_be_played_are_refused_by_field(
    game: dict[str, Any], mm: dict[str, Any], message: str
) -> None:
    data = {"game": game, "matchmaker": {"algorithm": "flexmatch", "rules": [], **mm}}
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Scenario.from_dict(data)


def test_the_truth_of_three_teams_is_over_every_two_teams() -> None:
    seats = [make_seat(k, k // 2, 0.0, 10.0, 5.0, True, False, 0.0) for k in range(6)]
    skills = [1.0, 1.0, 0.0, 0.0, 3.0, 3.0]
    draw, gap, won = game_truth("team", seats, skills, 2, 1.0)
    assert gap == pytest.approx((1 + 2 + 3) / 3)
    norm = 1.0 / np.sqrt(4.0 * np.pi)
    assert draw == pytest.approx(norm * np.mean([np.exp(-d * d / 4.0) for d in (1, 3, 2)]))
    assert won is True  # team 2 has the highest mean skill
    assert game_truth("team", seats, skills, 0, 1.0)[2] is False
