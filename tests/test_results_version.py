"""Results change only with a new ``lobbysim.RESULTS_VERSION``.

Sweeps key every saved run on the results version, so a change that alters results without
raising it would mix old runs with new ones. This test pins a fingerprint of short runs that
touch every mechanism (1v1 and group games, quits and back-fill, timed and woken passes, both
assignments, every policy, both raters, informative priors); when it fails, results changed:
raise ``RESULTS_VERSION`` in ``lobbysim/__init__.py`` and record the new fingerprint below.
"""

from __future__ import annotations

import hashlib
import json

from lobbysim import RESULTS_VERSION
from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import Scenario

#: RESULTS_VERSION -> the fingerprint of :func:`fingerprint`'s runs under it.
FINGERPRINTS = {
    2: "27aa401bfb9dd2e9f8068f40c1d20124ce7f29fc6198893cf0902e4c63091c6a",  # without the timed ffa
    # a quit asks for a back-fill pass, not a full one: with timed passes only, group games form
    # on the tick grid (the lobby speed issue)
    3: "2b070983e5ef9db1700ca26ed53759ff6f65f9a0cf3941964f6ea88a751d9ed3",
    # the engagement policy counts the players it leaves waiting (these runs have no engagement
    # policy, which needs a player base: the same fingerprint)
    4: "2b070983e5ef9db1700ca26ed53759ff6f65f9a0cf3941964f6ea88a751d9ed3",
    # the bounds back-fill as they match: the oracle on true skill, uniform_random at random;
    # with two variants that show it (oracle and uniform_random in a team game with quits)
    5: "c204deabce22e66a6612f24999788dd5398e63837b8303e384c7d409bd917ec0",
    # team games right: every team game plays the best split of its players (the greedy
    # "strongest first, each to the weaker team" goes), uniform_random splits at random, a
    # group is admitted on its policy's score of that split (TrueSkill's two-team quality, not
    # the mean quality of its pairs), and team runs add fair_band_share and team_gap_true_mean
    6: "cf0d68a1923e2c0937c81cf07c3933e3e4feeee3342acd54beabbb389b9d2ed0",
    # runs under a rule set change: a back-filled seat keeps the rules, and an imported FlexMatch
    # rule set runs FlexMatch's builder; these runs have no rules: the same fingerprint
    7: "cf0d68a1923e2c0937c81cf07c3933e3e4feeee3342acd54beabbb389b9d2ed0",
    # runs under a rule set tally the rules' rejections only in passes a match could start by
    # the tickets' count (large matches); the games are the same, and these runs have no rules
    8: "cf0d68a1923e2c0937c81cf07c3933e3e4feeee3342acd54beabbb389b9d2ed0",
    # every run adds queue_time_tail_mean, the mean of the longest 1% of waits (issue 45); the
    # other metrics are those of version 8 (checked: the fingerprint without it is version 8's)
    9: "a9f9ce9d4e2f6440094eca77185be293af279aa0a4cc121f3092ea6b413b0749",
}

BASE = {
    "horizon": 90,
    "warmup": 10,
    "seed": 5,
    "arrivals": {"name": "poisson", "rate": 2.0},
    "population": {"patience_mean": 3.0, "session_games_mean": 4},
    "game": {"length": 6, "quit_rate": 0.02, "quit_behind_multiplier": 2.0},
    "matchmaker": {"threshold": [[0, 0.5], [1, 0.0]]},
    "records": {"ratings_every": 30},
}

VARIANTS: list[dict[str, dict[str, object]]] = [
    {},
    {"matchmaker": {"policy": "point_estimate", "tick": 0.1, "wake_on_arrival": False}},
    {
        "matchmaker": {
            "policy": {"name": "knowledge_gradient", "rule": "finite_horizon", "horizon": 6}
        }
    },
    {"matchmaker": {"policy": "random", "assignment": "sequential"}},
    {
        "matchmaker": {"policy": "fifo", "tick": 0.3, "wake_on_arrival": False},
        "game": {"beta2": 1.0},
    },
    {
        "game": {"mode": "team", "team_size": 2, "length": 6, "quit_rate": 0.03},
        "population": {"registered_fraction": 0.8, "patience_mean": 3.0, "session_games_mean": 4},
    },
    {"game": {"mode": "ffa", "ffa_size": 4, "length": 6, "quit_rate": 0.03}},
    {
        "game": {"mode": "ffa", "ffa_size": 4, "length": 6, "quit_rate": 0.05},
        "matchmaker": {"tick": 0.25, "wake_on_arrival": False, "threshold": [[0, 0.5], [1, 0]]},
    },
    {
        "population": {"prior": "informative", "patience_mean": 3.0, "session_games_mean": 4},
        "matchmaker": {"focal_players": [0, 1, 2, 3], "threshold": [[0, 0.0]]},
    },
    *(
        {  # the bounds back-fill as they match: on true skill, at random (since version 5)
            "game": {"mode": "team", "team_size": 2, "length": 6, "quit_rate": 0.05},
            "matchmaker": {"policy": policy},
        }
        for policy in ("oracle", "uniform_random")
    ),
]


def fingerprint() -> str:
    """Return the SHA-256 of every variant's metrics, rounded to 10 significant digits."""
    runs = []
    for variant in VARIANTS:
        data = {**BASE, **variant}
        metrics = simulate(Scenario.from_dict(data)).metrics
        runs.append({name: float(f"{value:.10g}") for name, value in sorted(metrics.items())})
    text = json.dumps(runs, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def test_results_change_only_with_a_new_results_version() -> None:
    found = fingerprint()
    assert FINGERPRINTS.get(RESULTS_VERSION) == found, (
        f"results differ from those recorded for RESULTS_VERSION {RESULTS_VERSION}: if the "
        f"change is meant to alter results, raise RESULTS_VERSION and record {found!r}"
    )
