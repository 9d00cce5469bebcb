"""What sets a team game's fairness: the players the matchmaker chooses, then the split into teams.

A team game's true skill gap is between the two teams' mean true skills (each seat weighted by
its minutes: lobbysim/skill/truth.py). Two things set it: how alike the players the matchmaker
chooses are, and how well the split into teams balances them. Every team game plays the best
split of its players on the driving rater's means (lobbysim/policies/teams.py, ``best_split``),
the oracle's on true skills, uniform_random's a random split. Quits and back-fills then move the
gap during the game. This script runs a team scenario (default: the bundled ``team_4v4``) under
``draw_chance``, ``uniform_random`` and ``oracle`` on the same seeds and prints, per policy, mean
[95% interval] over the replications of: the spread (standard deviation) of the starting
players' true skills, the gap between the starting teams' mean true skills (the split's work, the
games' ``team_gap_true``), the game's recorded true skill gap (after quits and back-fills) and
the share of games whose predicted win chance is within the fair band (``fair_band_share``),
each per game, averaged over the run's games.

    python scripts/team_balance.py                                   # team_4v4, 20 replications
    python scripts/team_balance.py --set population.session_games_mean=40
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from lobbysim.experiments.simulation import simulate
from lobbysim.scenario.inputs import as_scenario
from lobbysim.scenario.metrics import FAIR_BAND
from lobbysim.stats.intervals import interval

POLICIES = ("draw_chance", "uniform_random", "oracle")


def game_measures(
    games: pd.DataFrame, participants: pd.DataFrame, skill: pd.Series
) -> dict[str, float]:
    """Return a run's per-game means: the starters' skill spread, the starting teams' gap, the
    recorded gap and the share of games in the fair band."""
    seats = participants.assign(skill=participants.player_id.map(skill))
    start = seats.game_id.map(games.set_index("game_id").start)
    starters = seats[seats.joined == start]
    return {
        "starters' skill sd": float(starters.groupby("game_id").skill.std().mean()),
        "starting teams' gap": float(games.team_gap_true.mean()),
        "recorded gap": float(games.skill_gap_true.mean()),
        "fair band share": float(games.win_chance_predicted.between(*FAIR_BAND).mean()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", nargs="?", default="team_4v4")
    parser.add_argument("--replications", type=int, default=20)
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    base = as_scenario(args.scenario, args.sets)
    rows = []
    for policy in POLICIES:
        scenario = as_scenario(base, {"matchmaker.policy": policy})
        for r in range(args.replications):
            result = simulate(scenario, base.seed + r)
            assert result.games is not None and result.participants is not None
            assert result.players is not None
            skill = result.players.set_index("player_id")["skill"]
            measures = game_measures(result.games, result.participants, skill)
            rows.append({"policy": policy, **measures})
    frame = pd.DataFrame(rows)
    settings = f" ({', '.join(args.sets)})" if args.sets else ""
    print(
        f"{args.scenario}{settings}: per game, mean [95% CI] over {args.replications} replications"
    )
    for measure in frame.columns.drop("policy"):
        cells = []
        for policy in POLICIES:
            mean, _, _, low, high = interval(frame[frame.policy == policy][measure].to_numpy())
            cells.append(f"{policy} {mean:.3f} [{low:.3f}, {high:.3f}]")
        print(f"  {measure}: " + ", ".join(cells))
    return 0 if np.isfinite(frame.drop(columns="policy").to_numpy()).all() else 1


if __name__ == "__main__":
    raise SystemExit(main())
