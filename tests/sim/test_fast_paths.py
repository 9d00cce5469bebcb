"""Fast paths of the lobby's hot spots give bit for bit what the reference code gives.

(Also elsewhere: the raters' id check in ``tests/raters/test_raters.py`` and the quick check of an
assignment's pairs in ``tests/sim/test_plugin_checks.py``.)
"""

from __future__ import annotations

import dataclasses
import math
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from lobbysim.experiments.simulation import collect
from lobbysim.raters.base import compare_sph
from lobbysim.raters.sph_elo import SPHEloRater
from lobbysim.records.files import CsvSink
from lobbysim.records.rows import GameResult, Seat
from lobbysim.scenario import Scenario
from lobbysim.sim import LobbySimulation
from lobbysim.sim.entities import Buffered, median
from lobbysim.sim.fast.plan import FastPlan
from lobbysim.skill.sph_elo import Participant, rating_changes
from lobbysim.streams import Streams


def random_game(rng: random.Random, game_id: int, mode: str) -> GameResult:
    """A team or ffa game with guests, quitters, late joiners, SPH ties and 0-minute stints."""
    n = rng.choice([2, 3, 4, 6, 8])
    seats = []
    for k, pid in enumerate(rng.sample(range(40), n)):
        joined = rng.choice([0.0, 0.0, 2.5, rng.uniform(0, 20)])
        left = rng.choice([20.0, 20.0, joined, rng.uniform(joined, 20)])
        score = float(rng.choice([0, 1, 2, 3, 10, 11, rng.randint(0, 30)]))
        if rng.random() < 0.2:  # the same SPH as the previous seat, in other numbers
            left, joined, score = 20.0, 10.0, 10.0 if k % 2 else 11.0
            left = 21.0 if k % 2 == 0 else left
        team = (k % 2) if mode == "team" else None
        seats.append(Seat(pid, team, joined, left, score, rng.random() < 0.8, False, 0.0))
    return GameResult(game_id, mode, 0.0, 20.0, tuple(seats), None)


@pytest.mark.parametrize("cap", [20.0, 7.5])
@pytest.mark.parametrize("mode", ["ffa", "team"])
def test_sph_elo_plain_path_equals_rating_changes(mode: str, cap: float) -> None:
    rng = random.Random(7)
    rater = SPHEloRater(max_game_length=cap)
    ids = np.arange(40, dtype=np.int64)
    rater.add_players(ids, np.zeros(40), np.ones(40))
    rater._table.columns[0][:] = [500.0 + rng.gauss(0, 150) for _ in range(40)]
    for g in range(2000):
        game = random_game(rng, g, mode)
        table = rater._table.columns[0]
        if g % 100 == 0:  # equal ratings: each pair is evaluated from its first player
            table[:20] = 500.0
        participants = [
            Participant(
                s.player_id,
                s.team,
                s.score,
                s.minutes,
                s.registered,
                float(table[s.player_id]) if s.registered else None,
            )
            for s in game.seats
        ]
        expected = rating_changes(participants, rater._params)
        got = rater._changes_plain(game)
        assert got is not None
        assert dict(zip(*got, strict=True)) == expected
        assert all(
            math.copysign(1, a) == math.copysign(1, b)
            for a, b in zip(got[1], expected.values(), strict=True)
        )
        rater.update([game])


@pytest.mark.parametrize("mode", ["ffa", "team"])
def test_sph_elo_batches_of_group_games_rate_as_one_game_at_a_time(mode: str) -> None:
    """A wave's plain games written together (SPHEloRater._apply_general) against one update
    per game, bit for bit: ratings and the sums of changes (waves of 1 to 8 games, players
    recurring across waves, guests, games rating_changes itself must judge)."""
    rng = random.Random(8)
    start = [500.0 + rng.gauss(0, 150) for _ in range(40)]
    batch, single = SPHEloRater(), SPHEloRater()
    for rater in (batch, single):
        rater.add_players(np.arange(40, dtype=np.int64), np.zeros(40), np.ones(40))
        rater._table.columns[0][:40] = start
    for b in range(300):
        games = [random_game(rng, 10 * b + k, mode) for k in range(rng.randint(1, 8))]
        for k, game in enumerate(games):
            if rng.random() < 0.05:  # an unplain seat (an int score): rating_changes judges
                seats = (dataclasses.replace(game.seats[0], score=3), *game.seats[1:])
                games[k] = dataclasses.replace(game, seats=seats)
        batch.update(games)
        sums = []
        for game in games:
            single.update([game])
            sums += single.last_batch_change_sums
        assert repr(batch.last_batch_change_sums) == repr(sums)
        assert repr(batch._table.columns[0].tolist()) == repr(single._table.columns[0].tolist())


@pytest.mark.parametrize("cap", [20.0, 7.5])
def test_sph_elo_wave_path_is_the_plain_path_game_by_game(cap: float) -> None:
    """SPHEloRater._changes_wave (a wave's plain games rated together) against
    SPHEloRater._changes_plain game after game, bit for bit: ids, changes and each game's sum
    (ffa, team and 1v1 games mixed, guests, 0-minute stints, SPH ties, equal ratings, scales
    below 1), and the games it leaves to rating_changes."""
    rng = random.Random(9)
    rater = SPHEloRater(max_game_length=cap)
    rater.add_players(np.arange(40, dtype=np.int64), np.zeros(40), np.ones(40))
    table = rater._table.columns[0]
    for w in range(400):
        table[:] = [500.0 + rng.gauss(0, 150) for _ in range(40)]
        if w % 10 == 0:  # equal ratings: each pair is evaluated from its first player
            table[:20] = 500.0
        games = []
        for k in range(rng.randint(1, 12)):
            mode = rng.choice(["ffa", "ffa", "team", "1v1"])
            game = random_game(rng, k, "team" if mode == "1v1" else mode)
            if mode == "1v1":  # two seats, one of them perhaps a guest
                game = dataclasses.replace(game, mode="1v1", seats=game.seats[:2])
            if rng.random() < 0.1:  # an unplain seat (an int score), anywhere in the game
                at = rng.randrange(len(game.seats))
                seats = list(game.seats)
                seats[at] = dataclasses.replace(seats[at], score=3)
                game = dataclasses.replace(game, seats=tuple(seats))
            games.append(game)
        sums = [math.nan] * len(games)
        ids, changes, unplain = rater._changes_wave(list(enumerate(games)), sums)
        plain_ids: list[int] = []
        plain_changes: list[float] = []
        plain_sums = []
        plain_unplain = []
        for k, game in enumerate(games):
            quick = rater._changes_plain(game)
            if quick is None:
                plain_unplain.append((k, game))
                plain_sums.append(math.nan)
                continue
            plain_ids += quick[0]
            plain_changes += quick[1]
            plain_sums.append(math.fsum(quick[1]) if quick[0] else 0.0)
        assert ids == plain_ids
        assert repr(changes) == repr(plain_changes)
        assert repr(sums) == repr(plain_sums)
        assert unplain == plain_unplain


def test_compare_sph_is_the_exact_comparison() -> None:
    """compare_sph against the comparison of exact fractions, ties and two scores of 0 among
    them."""
    rng = random.Random(10)
    n = 5000
    score_a = [float(rng.choice([0, 0, 1, 2, 3, 7, 10, 11, rng.randint(0, 30)])) for _ in range(n)]
    score_b = [float(rng.choice([0, 0, 1, 2, 3, 7, 10, 11, rng.randint(0, 30)])) for _ in range(n)]
    min_a = [rng.choice([10.0, 11.0, 20.0, 0.1, 0.3, rng.uniform(0.01, 20)]) for _ in range(n)]
    min_b = [rng.choice([10.0, 11.0, 20.0, 0.1, 0.3, rng.uniform(0.01, 20)]) for _ in range(n)]
    # 3 * (1/3 rounded) rounds to 1 * 1, but is below it exactly
    score_a[0], min_b[0], score_b[0], min_a[0] = 3.0, 1 / 3, 1.0, 1.0
    got = compare_sph(np.array(score_a), np.array(min_a), np.array(score_b), np.array(min_b))
    exact = [
        (Fraction(sa) * Fraction(mb) > Fraction(sb) * Fraction(ma))
        - (Fraction(sa) * Fraction(mb) < Fraction(sb) * Fraction(ma))
        for sa, ma, sb, mb in zip(score_a, min_a, score_b, min_b, strict=True)
    ]
    assert got.tolist() == exact
    x = np.array(score_a) * np.array(min_b)
    y = np.array(score_b) * np.array(min_a)
    assert got[0] == -1
    assert ((x == y) & (np.array(score_a) > 0)).sum() > 10  # ties the fractions decide
    assert ((x == y) & (np.array(score_a) == 0) & (np.array(score_b) == 0)).sum() > 10


def test_sph_elo_plain_path_leaves_bad_games_to_rating_changes() -> None:
    rater = SPHEloRater()
    rater.add_players(np.arange(3, dtype=np.int64), np.zeros(3), np.ones(3))
    bad = Seat(1, None, 0.0, 10.0, -1.0, True, False, 0.0)
    good = Seat(2, None, 0.0, 10.0, 3.0, True, False, 0.0)
    game = GameResult(0, "ffa", 0.0, 10.0, (bad, good), None)
    assert rater._changes_plain(game) is None
    with pytest.raises(ValueError, match="score"):
        rater.update([game])


def test_median_equals_numpy() -> None:
    rng = random.Random(3)
    for _ in range(20_000):
        values = [rng.gauss(0, 3) * 10 ** rng.randint(-3, 3) for _ in range(rng.randint(1, 9))]
        assert median(values) == float(np.median(values))


def test_csv_rows_are_written_as_pandas_writes_them(tmp_path: Path) -> None:
    """The streaming sink's CSV, byte for byte (random rows of every kind against pandas:
    ``tests/records/test_record_files.py``)."""
    sink = CsvSink(tmp_path)
    sink("waits", [(1, 2.0, math.nan, "still_waiting", 3), (2, 1.0, 2.0, "matched", 1.0)])
    sink("waits", [(3, 2.0, 4.0, 'with "quotes", commas', 2.0)])
    assert (tmp_path / "waits.csv").read_text() == (
        "player_id,enqueued,left_queue,outcome,wait\n"
        "1,2.0,,still_waiting,3.0\n2,1.0,2.0,matched,1.0\n"
        '3,2.0,4.0,"with ""quotes"", commas",2.0\n'
    )


def test_buffered_draws_are_the_draws_one_at_a_time() -> None:
    for method in ("standard_normal", "standard_exponential"):
        fast = Buffered[float](getattr(np.random.default_rng(9), method)).take
        plain = getattr(np.random.default_rng(9), method)
        assert [fast() for _ in range(10_000)] == [float(plain()) for _ in range(10_000)]
    asked: list[int] = []  # blocks are drawn only when a value is wanted and none is left

    def draw(n: int) -> np.ndarray:
        asked.append(n)
        return np.arange(n, dtype=np.float64) + 10_000 * len(asked)

    take = Buffered[float](draw).take
    assert asked == []
    assert [take() for _ in range(4096)] == [10_000.0 + k for k in range(4096)]
    assert asked == [4096]
    assert take() == 20_000.0 and asked == [4096, 4096]


def test_one_deadline_heap_reneges_as_a_timeout_per_queueing_spell() -> None:
    """The lobby's one heap of deadlines against the plain way: a timeout per queueing spell."""

    def run(plain: bool) -> dict[str, pd.DataFrame]:
        scenario = Scenario.from_dict(
            {
                "horizon": 240,
                "warmup": 0,
                "arrivals": {"name": "poisson", "rate": 2.0},
                "population": {"patience_mean": 1.5, "session_minutes_mean": 40},
                "game": {"length": 8, "quit_rate": 0.02},
                "matchmaker": {"threshold": [[0, 0.9], [2, 0.6]], "tick": 0.5},
            }
        )
        sim = LobbySimulation(scenario, Streams(6))
        if plain:
            lobby, clock = sim.lobby, sim.clock

            def add_deadline(deadline: float, pid: int, spell: int) -> None:
                def renege(_event: object) -> None:
                    waiting = lobby.pool.get(pid)
                    if waiting is not None and waiting.spell == spell:
                        lobby._renege(waiting)

                clock.timeout_at(deadline).callbacks.append(renege)

            lobby._add_deadline = add_deadline  # type: ignore[method-assign]
        sim.run()
        result = collect(sim, 6)
        return {kind: getattr(result, kind) for kind in ("games", "waits", "players")}

    fast, plain = run(False), run(True)
    assert (fast["waits"].outcome == "abandoned").sum() > 100
    for kind, frame in fast.items():
        assert frame.to_csv() == plain[kind].to_csv(), kind


@pytest.mark.parametrize("wake_on_arrival", [False, True])
def test_deadlines_kept_back_to_the_next_tick_renege_as_the_heap_does(
    wake_on_arrival: bool,
) -> None:
    """Deadlines more than two ticks away enter the heap at the next tick (most players are
    matched by then): every record is what pushing each one at once gives."""
    from tests.sim.lobby_helpers import push_deadlines_at_once

    def run(keep_back: bool) -> tuple[dict[str, pd.DataFrame], list[int]]:
        scenario = Scenario.from_dict(
            {
                "horizon": 300,
                "warmup": 0,
                "arrivals": {"name": "poisson", "rate": 6.0},
                "population": {"patience_mean": 3.0, "session_minutes_mean": 60},
                "game": {"length": 6, "quit_rate": 0.02},
                "matchmaker": {
                    "threshold": [[0, 0.9], [2, 0.5]],
                    "tick": 0.25,
                    "wake_on_arrival": wake_on_arrival,
                },
            }
        )
        sim = LobbySimulation(scenario, Streams(8))
        lobby = sim.lobby
        kept: list[int] = []  # deadlines kept back, at each tick
        if keep_back:
            at_tick = lobby.reneging.at_tick

            def counted() -> None:
                kept.append(len(lobby.reneging._later))
                at_tick()

            sim.matchmaker._at_tick = counted  # the ticker's, read as it starts
        else:
            push_deadlines_at_once(lobby)
        sim.run()
        result = collect(sim, 8)
        return {kind: getattr(result, kind) for kind in ("games", "waits", "players")}, kept

    (kept_back, counts), (at_once, _) = run(True), run(False)
    assert sum(counts) > 1000
    assert (kept_back["waits"].outcome == "abandoned").sum() > 100
    for kind, frame in kept_back.items():
        assert frame.to_csv() == at_once[kind].to_csv(), kind


def test_the_truth_of_a_1v1_game_is_game_truths_bit_for_bit() -> None:
    """truth_1v1 (the lobby's 1v1 scoring) against game_truth over two seats."""
    from lobbysim.skill.truth import game_truth, truth_1v1

    rng = random.Random(15)
    for _ in range(20_000):
        start = rng.choice([0.0, rng.uniform(0, 1e4)])
        end = rng.choice([start, start + rng.uniform(0, 30), start + 1e-300])
        skills = [rng.gauss(0, 3), rng.gauss(0, 3)]
        if rng.random() < 0.05:
            skills[1] = skills[0]
        winner = rng.choice([0, 1, None])
        beta2 = rng.choice([2.5, rng.uniform(0.1, 10)])
        seats = [Seat(k, k, start, end, 0.0, True, False, 0.0) for k in (0, 1)]
        expected = game_truth("1v1", seats, skills, winner, beta2)
        got = truth_1v1(end - start, skills[0], skills[1], winner, beta2)
        assert repr(got) == repr(expected)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"profile": [0.3 + 0.25 * (hour % 7) for hour in range(24)]},  # uneven hours
        {"profile": [0, 0, 0, 1, 0, 2] * 4, "start_hour": 7.25},  # hours of no visits
        {"per_day": 40.0, "start_hour": 23.999},
    ],
)
def test_one_members_next_visit_is_the_arrays_bit_for_bit(params: dict[str, object]) -> None:
    """The daily visit model's float path for one member against its numpy path."""
    from lobbysim.players.visits import Daily

    model = Daily(**params)  # type: ignore[arg-type]
    rng = random.Random(12)
    for _ in range(5_000):
        now = rng.choice(
            [0.0, rng.uniform(0, 1e5), 60.0 * rng.randint(0, 2000), rng.uniform(0, 1e-6)]
        )
        gap = rng.choice([rng.expovariate(1.0), rng.uniform(0, 1e-12), rng.uniform(0, 40)])
        one = model._next_one(now, gap)
        times = model._minutes(model._day_time(np.array([now])) + np.array([gap]))
        array = float(np.maximum(times, np.nextafter(now, math.inf))[0])
        assert one.hex() == array.hex(), (now, gap)
    seeds = [np.random.default_rng(4), np.random.default_rng(4)]
    rates = np.array([0.7])
    one_by_one = [model.next_visits(seeds[0], 100.0 * k, rates)[0] for k in range(50)]
    draws = seeds[1].standard_exponential((50, 1)) / rates
    arrays = [
        float(
            np.maximum(
                model._minutes(model._day_time(np.array([100.0 * k])) + draws[k]),
                np.nextafter(100.0 * k, math.inf),
            )[0]
        )
        for k in range(50)
    ]
    assert one_by_one == arrays


def test_a_1v1_games_records_are_the_generic_recorders() -> None:
    """Recorder.duels (the lobby's 1v1 scoring, a batch at a time) against Recorder.game on the
    same games, one at a time: the same rows in the same order, the same tallies, the same
    players found fully scored."""
    from lobbysim.records.rows import DuelBatch
    from lobbysim.sim.entities import Player, Records
    from lobbysim.sim.recorder import Recorder

    rng = random.Random(21)
    recorders = [Recorder(Records()), Recorder(Records())]
    players = [[Player(k, 0.0, 0.0, 1.0, k % 3 > 0, 5, 1e9, unscored=40) for k in range(6)]]
    players.append([Player(k, 0.0, 0.0, 1.0, k % 3 > 0, 5, 1e9, unscored=40) for k in range(6)])
    for recorder, mine in zip(recorders, players, strict=True):
        recorder._awaiting = {p.pid: (p.pid, p) for p in mine[:3]}
    game_id = 0
    while game_id < 200:
        games: list[Any] = []
        for _ in range(rng.choice([1, 2, 5, 9])):
            a, b = rng.sample(range(6), 2)
            start = rng.uniform(0, 100)
            end = start + rng.choice([0.0, rng.uniform(0, 20)])
            scores = (float(rng.randint(0, 9)), float(rng.randint(0, 9)))
            quit_side, winner = rng.choice([-1, 0, 1]), rng.choice([0, 1])
            truth = (rng.random(), rng.random(), rng.choice([True, False, None]))
            games.append(
                (game_id, start, end, a, b, scores, quit_side, winner, rng.random(), truth)
            )
            game_id += 1
        generic, fast = players
        for gid, start, end, a, b, scores, quit_side, winner, quality, truth in games:
            seats = tuple(
                Seat(p.pid, side, start, end, scores[side], p.registered, quit_side == side, 0.0)
                for side, p in enumerate((generic[a], generic[b]))
            )
            result = GameResult(gid, "1v1", start, end, seats, winner)
            recorders[0].game(result, quality, truth, (generic[a], generic[b]))
        columns: list[Any] = list(zip(*games, strict=True))
        gids, starts, ends, side_a, side_b, all_scores, quits, winners, qualities, truths = columns
        batch = DuelBatch(
            gids,
            starts,
            ends,
            side_a,
            side_b,
            [fast[k].registered for k in side_a],
            [fast[k].registered for k in side_b],
            [s[0] for s in all_scores],
            [s[1] for s in all_scores],
            [0.0] * len(gids),
            [0.0] * len(gids),
            quits,
            winners,
        )
        minutes = [e - s for s, e in zip(starts, ends, strict=True)]
        recorders[1].duels(
            batch, [fast[k] for k in side_a], [fast[k] for k in side_b], minutes, qualities, truths
        )
    for kind in ("games", "participants"):
        assert repr(getattr(recorders[1].records, kind)) == repr(
            getattr(recorders[0].records, kind)
        )
    assert players[0] == players[1]
    assert recorders[0]._scored_awaiting == recorders[1]._scored_awaiting != []


def test_small_passes_give_the_records_of_the_array_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass on every arrival (pools of one to a few players, one finished game at a time)
    takes the kernels: games scored on floats, outcomes rated as games end, pools up to a block
    decided on floats without a pool, rings answered inline, the shadow raters fed in batches.
    Every record, the final ratings and the rating samples are those of the plan off (the
    general paths) with the shadows updated at every pass, bit for bit (quits, guests and a
    rating drift included). (The raters' and the assignment's own float paths are checked
    against their arrays in tests/raters/test_raters.py and tests/policies/test_assignment.py.)"""
    from lobbysim.sim import lobby, matchmaker

    scenario = Scenario.from_dict(
        {
            "horizon": 240,
            "warmup": 20,
            "arrivals": {"name": "poisson", "rate": 3.0},
            "population": {"registered_fraction": 0.85, "session_games_mean": 6},
            "game": {"length": 6, "quit_rate": 0.03},
            "matchmaker": {
                "policy": "draw_chance",
                "assignment": {"name": "global", "block_size": 6},
                "wake_on_arrival": True,
                "threshold": [[0, 0.6], [0.5, 0.3], [1.5, 0.0]],
            },
            "raters": {"driver": {"name": "bayesian", "tau2": 0.05}, "shadows": ["sph_elo"]},
            "records": {"ratings_every": 30},
        }
    )

    def run(plan: FastPlan | None = None) -> tuple[dict[str, pd.DataFrame], list[list[float]], int]:
        sim = LobbySimulation(scenario, Streams(12), plan=plan)
        sim.run()
        frames = collect(sim, 12)
        ids = np.arange(len(sim.players), dtype=np.int64)
        return (
            {k: getattr(frames, k) for k in ("games", "participants", "waits", "ratings")},
            [rater.means(ids).tolist() for _, rater in sim.raters],
            sim.n_passes,
        )

    on_floats = []
    small_pass = matchmaker.small_pass  # the kernel, as the matchmaker calls it

    def counted(*args):  # type: ignore[no-untyped-def]
        on_floats.append(small_pass(*args))
        return on_floats[-1]

    with monkeypatch.context() as patch:
        patch.setattr(matchmaker, "small_pass", counted)
        fast, fast_ratings, passes = run()
    assert sum(duels is not None for duels in on_floats) > 1000
    with monkeypatch.context() as patch:
        patch.setattr(lobby, "SHADOW_BATCH", 1)
        patch.setattr(matchmaker, "small_pass", counted)
        on_floats.clear()
        plain, plain_ratings, plain_passes = run(FastPlan.off())
    assert on_floats == []
    assert passes == plain_passes > 1000
    assert len(fast["games"]) > 500
    for kind, frame in fast.items():
        pd.testing.assert_frame_equal(frame, plain[kind], check_exact=True, obj=kind)
    assert fast_ratings == plain_ratings


@pytest.mark.parametrize(
    "policy",
    ["draw_chance", {"name": "knowledge_gradient", "rule": "finite_horizon", "horizon": 8}],
    ids=["draw_chance", "finite_horizon_kg"],
)
def test_held_scores_give_the_files_of_scores_drawn_at_every_pass(
    policy: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On every arrival, a pass gives the Bayesian driver the finished games' outcomes and
    holds their scores back, drawn many at once (before any pass that reads more than the
    beliefs, such as the knowledge gradient's games played, and before each ratings sample):
    the streamed record files, byte for byte (the players' rows in the same order), the final
    ratings of every rater and the metrics are those of scores drawn at every pass (the
    finite-horizon knowledge gradient weighs each player's games played)."""
    from lobbysim.experiments.simulation import simulate
    from lobbysim.sim import lobby

    scenario = Scenario.from_dict(
        {
            "horizon": 300,
            "warmup": 20,
            "arrivals": {"name": "poisson", "rate": 4.0},
            "population": {"registered_fraction": 0.9, "session_games_mean": 5},
            "game": {"length": 5, "quit_rate": 0.03},
            "matchmaker": {
                "policy": policy,
                "assignment": {"name": "global", "block_size": 4},
                "wake_on_arrival": True,
                "tick": 2.0,
                "threshold": [[0, 0.6], [0.5, 0.3], [1.5, 0.0]],
            },
            "raters": {"driver": "bayesian", "shadows": ["sph_elo"]},
            "records": {"ratings_every": 45, "stream": True, "flush_rows": 500},
        }
    )
    held: list[int] = []
    score_held = lobby.LobbySimulation._score_held

    def counted(self: lobby.LobbySimulation) -> None:
        held.append(self.games.n_held)
        score_held(self)

    def run(
        folder: Path, plan: FastPlan | None = None
    ) -> tuple[dict[str, bytes], dict[str, float]]:
        result = simulate(scenario, 5, records_dir=folder, plan=plan)
        files = {f.name: f.read_bytes() for f in sorted(folder.iterdir())}
        return files, dict(result.metrics)

    with monkeypatch.context() as patch:
        patch.setattr(lobby.LobbySimulation, "_score_held", counted)
        fast_files, fast_metrics = run(tmp_path / "held")
    assert max(held) > (20 if policy == "draw_chance" else 5)  # many held back at once
    plain_files, plain_metrics = run(tmp_path / "plain", FastPlan.without("held_scores"))
    assert len(fast_files["games.csv"].splitlines()) > 1000
    assert list(fast_files) == list(plain_files)
    for name, content in fast_files.items():
        assert content == plain_files[name], name
    assert fast_metrics == plain_metrics


def test_a_small_pass_asks_the_rater_once_per_pair() -> None:
    """The pool's quality in a small pass remembers each pair (ordered: the quality need not be
    symmetric) and answers with the rater's own values; a large pass asks the rater every time."""
    from lobbysim.sim.pairing import REMEMBERED_POOL, PoolQuality

    asked: list[list[tuple[int, int]]] = []

    def lopsided(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        asked.append(list(zip(a.tolist(), b.tolist(), strict=True)))
        return 1.0 / (1.0 + a + 0.37 * b)

    ids = np.arange(100, 100 + REMEMBERED_POOL, dtype=np.int64)
    quality = PoolQuality(lopsided, ids)
    rng = np.random.default_rng(2)
    for _ in range(200):
        i = rng.integers(0, ids.size, int(rng.integers(1, 6))).astype(np.intp)
        j = rng.integers(0, ids.size, i.size).astype(np.intp)
        assert quality(i, j).tolist() == lopsided(ids[i], ids[j]).tolist()
        asked.pop()  # the reference call above
    known: set[tuple[int, int]] = set()
    for call in asked:  # the rater is asked only when some pair is new
        assert not known.issuperset(call)
        known.update(call)
    assert 0 < len(asked) < 150
    big = PoolQuality(lopsided, np.arange(REMEMBERED_POOL + 1, dtype=np.int64))
    asked.clear()
    for _ in range(3):
        big(np.array([0, 1], dtype=np.intp), np.array([1, 0], dtype=np.intp))
    assert len(asked) == 3


def _open_games(rng: random.Random, now: float, queue: list[int]) -> dict[int, Any]:
    """Running ffa games with 0 to 3 open seats each, some too near their end to back-fill,
    whose players include some of the queue (who may not return to them)."""
    from lobbysim.sim.entities import GroupGame

    games: dict[int, Any] = {}
    for game_id in range(rng.randint(0, 4)):
        end = now + rng.choice([0.5, 2.0, 2.0 + 1e-12, rng.uniform(0, 20)])
        game = GroupGame(game_id, "ffa", now - 1.0, end, 0.5, None)  # type: ignore[arg-type]
        game.been = set(rng.sample(queue, min(len(queue), rng.randint(0, 4)))) | {-1 - game_id}
        for _ in range(rng.randint(0, 3)):
            target = rng.choice([0.0, 1.5, rng.gauss(0, 2), math.inf, math.nan])
            truth = rng.choice([target, rng.gauss(0, 2)])  # the leaver's true skill
            game.open_seats.append((None, target, truth))
        games[game_id] = game
    return games


def test_a_back_fill_pass_on_lists_seats_whom_backfill_seats() -> None:
    """OpenSeats.backfill_queue (the back-fill pass's) against OpenSeats.backfill with everybody
    free: the same players in the same seats in the same order, and the same seats left open
    (ties, NaN and infinite means and targets, players who were in the game, seats too late), on the
    rating targets and on the true-skill ones (the oracle's)."""
    import copy

    from lobbysim.sim.entities import Player, Waiting

    scenario = Scenario.from_dict(
        {
            "horizon": 1e6,
            "warmup": 0,
            "game": {"mode": "ffa", "ffa_size": 4, "backfill_min_remaining": 2.0},
        }
    )
    groups = LobbySimulation(scenario, Streams(1)).games.groups
    assert groups is not None
    games = groups.open_seats
    rng = random.Random(31)
    picked = 0
    for case in range(3000):
        if rng.random() < 0.5:  # nothing is running: time passes
            games.env.run(until=games.env.now + 0.5)
        n = rng.choice([0, 1, 2, 5, 37, rng.randint(0, 60)])
        pids = rng.sample(range(100), n)
        waiting = [Waiting(pid, Player(pid, 0.0, 0.0, 1.0, True, 5, 1e9), 0.0, 1) for pid in pids]
        values = [0.0, 1.5, -1.5, 3.0, math.inf, -math.inf, math.nan]
        mu = [
            rng.choice(values) if rng.random() < 0.3 else round(rng.gauss(0, 2), 1)
            for _ in range(n)
        ]
        if rng.random() < 0.7:  # NaN is rare in a rater's means
            mu = [0.0 if math.isnan(m) else m for m in mu]
        start = _open_games(rng, games.env.now, pids)
        truth = rng.random() < 0.5
        runs = []
        for fast in (False, True):
            games._games = copy.deepcopy(start)
            seats: list[tuple[int, int, int | None]] = []

            def seat(
                game: Any, member: Waiting, team: int | None, seats: list[Any] = seats
            ) -> None:
                seats.append((game.game_id, member.pid, team))

            games._seat = seat
            if fast:
                taken = sorted(games.backfill_queue(waiting, mu, truth=truth))
            else:
                free = np.ones(n, dtype=bool)
                values = np.array(mu, dtype=np.float64)
                with np.errstate(invalid="ignore"):  # inf - inf
                    games.backfill(waiting, values, free, truth=truth)
                taken = np.flatnonzero(~free).tolist()
            left = {k: g.open_seats for k, g in games._games.items()}
            runs.append((seats, taken, repr(left)))
        assert runs[1] == runs[0], case
        picked += len(runs[0][0])
    assert picked > 1000


def test_the_truth_of_an_ffa_game_is_game_truths_bit_for_bit() -> None:
    """truth_ffa (the lobby's ffa scoring) against game_truth's ffa branch: 0 and 1 seats,
    0-minute stints, equal skills and scores per hour, infinite and NaN scores per hour."""
    from lobbysim.skill.truth import game_truth, truth_ffa

    rng = random.Random(16)
    for _ in range(20_000):
        n = rng.choice([0, 1, 2, 3, 8, 8, 9, 11, rng.randint(0, 14)])
        seats: list[Any] = []
        skills: list[Any] = []
        for k in range(n):
            joined = rng.choice([0.0, rng.uniform(0, 20)])
            left = rng.choice([joined, 20.0, rng.uniform(joined, 20), joined + 1e-300])
            score = float(rng.choice([0, 1, 2, 3, rng.randint(0, 30)]))
            if rng.random() < 0.1:
                score = rng.choice([math.inf, math.nan])
            seats.append(Seat(k, None, joined, left, score, True, False, 0.0))
            skill = rng.gauss(0, 3)
            skills.append(skills[-1] if skills and rng.random() < 0.2 else skill)
        beta2 = rng.choice([2.5, rng.uniform(0.1, 10)])
        expected = game_truth("ffa", seats, skills, None, beta2)
        got = truth_ffa(skills, [s.score for s in seats], [s.left - s.joined for s in seats], beta2)
        assert repr(got) == repr(expected)


def test_behind_in_an_ffa_game_is_games_behind() -> None:
    """GroupGame.behind_ffa (the lobby's ffa seating) against Games._behind, seat after seat, with
    quitters leaving and equal performances."""
    from lobbysim.sim.entities import GroupGame, Player, Stint
    from lobbysim.sim.group_games import GroupGames

    rng = random.Random(17)
    for case in range(3000):
        game = GroupGame(case, "ffa", 0.0, 20.0, 0.5, None)  # type: ignore[arg-type]
        for pid in range(rng.randint(1, 12)):
            if game.seated and rng.random() < 0.2:  # somebody quits
                game.stand(game.seated[rng.choice(list(game.seated))])
            performance = rng.choice([0.0, 1.0, -0.0, rng.gauss(0, 2)])
            stint = Stint(
                Player(pid, 0.0, 0.0, 1.0, True, 5, 1e9), None, 0.0, 0.0, performance, False
            )
            behind = game.behind_ffa(performance)
            game.sit(stint)
            assert behind == GroupGames._behind(game, stint)
            assert game.performances == sorted(s.performance for s in game.seated.values())


@pytest.mark.parametrize("rater", ["bayesian", "sph_elo", "glicko2", "truth"])
def test_group_qualities_are_each_groups_own_bit_for_bit(rater: str) -> None:
    """group_qualities (one quality call per pass) against each group's own call and mean, for
    groups of 2 to 12 (numpy's pairwise sums from 9 values on), uniform and adjacent ones."""
    from lobbysim.policies.groups import _all_pairs, group_qualities
    from lobbysim.raters import RATERS
    from lobbysim.sim.pairing import true_quality

    rng = np.random.default_rng(18)
    n = 200
    ids = np.arange(n, dtype=np.int64)
    mu = rng.normal(0, 3, n) * (500.0 if rater == "sph_elo" else 1.0)
    mu[:20] = mu[0]  # equal means
    if rater == "truth":
        quality = true_quality(mu, 2.5)
    else:
        built = RATERS.create(rater, {})
        built.add_players(ids, rng.normal(0, 3, n), rng.uniform(0.1, 9, n))
        table = built._table.columns  # type: ignore[attr-defined]
        table[0][:n] = mu
        if len(table) > 1:
            table[1][:n] = rng.uniform(0.01, 9, n)

        def quality(i: np.ndarray, j: np.ndarray) -> np.ndarray:
            return built.quality(ids[i], ids[j])

    for _ in range(300):
        size = int(rng.integers(2, 13))
        if rng.random() < 0.5:
            groups = list(rng.permutation(n)[: size * int(rng.integers(0, 9))].reshape(-1, size))
        else:
            starts = np.sort(rng.choice(n - size, int(rng.integers(1, 9)), replace=False))
            order = np.argsort(mu, kind="stable")
            groups = [order[s : s + size].copy() for s in starts.tolist()]
        expected = [float(quality(*_all_pairs(group)).mean()) for group in groups]
        got = group_qualities(groups, quality)
        assert [q.hex() for q in got] == [q.hex() for q in expected]


BUNDLED = sorted(
    path.stem
    for path in (Path(__file__).resolve().parents[2] / "lobbysim" / "scenarios").glob("*.yaml")
)
#: Minutes each bundled scenario runs here: enough for every kernel its plan turns on to work
#: many times (a player base's scenarios need a day or two of visits).
HORIZONS = {"live_game_retention": 2880.0, "engagement_pools": 720.0, "evening_peak": 600.0}


def _shortened(name: str) -> Scenario:
    from lobbysim.scenario import load_scenario
    from lobbysim.scenario.bundled import find_scenario

    scenario = load_scenario(find_scenario(name))
    horizon = min(scenario.horizon, HORIZONS.get(name, 300.0))
    warmup = min(scenario.warmup, horizon / 4)
    mm = scenario.matchmaker
    switch = None if mm.switch_at is None else min(mm.switch_at, warmup)
    return scenario.replace(
        horizon=horizon,
        warmup=warmup,
        records=dataclasses.replace(scenario.records, stream=False),
        matchmaker=dataclasses.replace(mm, switch_at=switch),
    )


def test_every_bundled_scenario_is_covered() -> None:
    assert len(BUNDLED) >= 11 and "quickstart" in BUNDLED


#: The longest bundled scenarios: their plan-off comparison is marked slow.
SLOW_BUNDLED = {
    "global_5v5",
    "engagement_pools",
    "live_game_retention",
    "flexmatch_5v5",
    "one_visit",
    "team_4v4",
    "ladder_4v4",
}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_BUNDLED else n for n in BUNDLED],
)
def test_the_plan_off_gives_every_bundled_scenarios_records(name: str) -> None:
    """Every bundled scenario (shortened), run with its kernels and with ``FastPlan.off()`` (the
    engine's general paths everywhere): the same records, bit for bit, and the same metrics."""
    from lobbysim.experiments.simulation import simulate

    scenario = _shortened(name)
    fast = simulate(scenario, scenario.seed)
    plain = simulate(scenario, scenario.seed, plan=FastPlan.off())
    assert len(fast.games) > 50
    for kind in ("games", "participants", "waits", "ratings", "players"):
        assert getattr(fast, kind).to_csv(index=False) == getattr(plain, kind).to_csv(
            index=False
        ), kind
    assert repr(fast.metrics) == repr(plain.metrics)
