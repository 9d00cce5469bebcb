"""Why a team game's fairness can favour random pairing: the lobby chosen, then the teams split.

A team game's true skill gap is between the two teams' mean true skills (each seat weighted by
its minutes: lobbysim/skill/truth.py). Two things set it: how alike the players the matchmaker
chooses are, and how well the split into teams balances them, which the lobby does on the
driving rater's means (lobbysim/policies/groups.py, ``balance_teams``), or on true skills for
the oracle. Quits and back-fills then move it during the game. This script runs a team scenario
(default: the bundled ``team_4v4``) under ``draw_chance``, ``uniform_random`` and ``oracle`` on
the same seeds and prints, per policy, mean [95% interval] over the replications of: the spread
(standard deviation) of the starting players' true skills, the gap between the starting teams'
mean true skills (the split's work), and the game's recorded true skill gap (after quits and
back-fills), each per game, averaged over the run's games.

    python scripts/team_balance.py                                   # team_4v4, 10 replications
    python scripts/team_balance.py --set population.session_games_mean=40
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from lobbysim.experiments.simulation import simulate
from lobbysim.intervals import interval
from lobbysim.scenario.inputs import as_scenario

POLICIES = ("draw_chance", "uniform_random", "oracle")


def game_measures(
    games: pd.DataFrame, participants: pd.DataFrame, skill: pd.Series
) -> dict[str, float]:
    """Return a run's per-game means: the starters' skill spread, the starting teams' gap and
    the recorded gap."""
    seats = participants.assign(skill=participants.player_id.map(skill))
    start = seats.game_id.map(games.set_index("game_id").start)
    starters = seats[seats.joined == start]
    teams = starters.groupby(["game_id", "team"]).skill.mean().unstack()
    return {
        "starters' skill sd": float(starters.groupby("game_id").skill.std().mean()),
        "starting teams' gap": float((teams[0] - teams[1]).abs().mean()),
        "recorded gap": float(games.skill_gap_true.mean()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", nargs="?", default="team_4v4")
    parser.add_argument("--replications", type=int, default=10)
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
