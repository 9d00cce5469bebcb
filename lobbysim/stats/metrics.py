"""Metrics of one replication, computed from its record frames and the true skills.

Queue times count only players who queued and were matched (``waits`` rows with outcome
``matched``); ``queue_time_tail_mean`` is the mean of their longest 1% of waits
(:func:`tail_mean`: the ``ceil(n / 100)`` longest of ``n``, at least one). The abandonment
rate is abandoned / (matched + abandoned) over queueing spells. A warm-up period is excluded:
waits that began, and games that started, before it. Per rater, the final ratings of
registered players who played at least one game after the warm-up are compared with their true
skills: ``rating_rmse`` (only for raters on the skill scale) and Kendall's tau.

**By tenure** (only for a scenario with a persistent player base, ``base:``, whose members come
back visit after visit with one id): a player's *tenure* at a moment is the number of games they
had played before it. :func:`tenure_metrics` splits the queueing spells and the seats of games
into newcomers' (tenure < ``base.newcomer_games``) and veterans' and measures each group;
:func:`rating_error_by_tenure` gives a rater's error against the games its players had played
(the convergence curve of the run report). Runs without a base never compute them, so their
metrics are what they were before tenure existed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

QUEUE_METRICS = (
    "queue_time_mean",
    "queue_time_p50",
    "queue_time_p90",
    "queue_time_p99",
    "queue_time_tail_mean",
)

TAIL_SHARE = 0.01
"""The share of the longest waits ``queue_time_tail_mean`` averages (:func:`tail_mean`)."""


def tail_mean(values: np.ndarray, share: float = TAIL_SHARE) -> float:
    """Return the mean of the longest ``share`` of ``values`` (NaN without any).

    The ``k = ceil(share * n)`` largest of the ``n`` values are averaged: at least one (with
    ``n`` of 1 to 100 and the default 1%, the longest wait alone), exactly ``share * n`` when
    that is whole (the 10 longest of 1,000 waits). Unlike a percentile, it moves with every
    wait of the tail, so it takes values between the steps of a pass grid that pins the
    queue-time percentiles to multiples of the pass interval.
    """
    values = np.asarray(values, dtype=float)
    if not values.size:
        return math.nan
    k = max(1, math.ceil(share * values.size - 1e-9))
    return float(np.partition(values, values.size - k)[values.size - k :].mean())


MIN_GAMES_FOR_WIN_RATIO = 5
"""Decided games a player needs for their win ratio to count (``win_ratio_dispersion``)."""


def rating_rmse(ratings: np.ndarray, skills: np.ndarray) -> float:
    """Return the root mean squared error of ratings against true skills (NaN without any)."""
    return float(np.sqrt(np.mean((ratings - skills) ** 2))) if ratings.size else math.nan


def rating_kendall_tau(ratings: np.ndarray, skills: np.ndarray) -> float:
    """Return Kendall's tau between ratings and true skills (NaN for < 2 or constant values)."""
    if ratings.size < 2 or np.ptp(ratings) == 0 or np.ptp(skills) == 0:
        return math.nan
    return float(kendalltau(ratings, skills).statistic)


def win_ratio_distance(wins: np.ndarray, games: np.ndarray) -> np.ndarray:
    """Return per player |wins / games - 0.5|, NaN for fewer than the games needed.

    ``games`` counts the decided games a player played, at least :data:`MIN_GAMES_FOR_WIN_RATIO`
    for the distance to count (the per-player terms of ``win_ratio_dispersion``).
    """
    wins = np.asarray(wins, dtype=float)
    games = np.asarray(games, dtype=float)
    enough = games >= MIN_GAMES_FOR_WIN_RATIO
    out = np.full(wins.shape, np.nan)
    out[enough] = np.abs(wins[enough] / games[enough] - 0.5)
    return out


def compute_metrics(
    games: pd.DataFrame,
    participants: pd.DataFrame,
    waits: pd.DataFrame,
    final_ratings: Mapping[str, np.ndarray],
    skill_scale: Mapping[str, bool],
    skills: np.ndarray,
    registered: np.ndarray,
    warmup: float,
    horizon: float,
) -> dict[str, float]:
    """Return the metrics dict of one run (NaN where a metric has no data).

    ``warmup`` is when the metrics start (the scenario's ``metrics_start``: the end of the
    warm-up, or a later policy switch): waits that began and games that started before it are
    left out, and games per hour count from it to ``horizon``.
    """
    out: dict[str, float] = {}
    w = waits[waits.enqueued >= warmup]
    matched = w[w.outcome == "matched"].wait.to_numpy()
    abandoned = int((w.outcome == "abandoned").sum())
    out["queue_time_mean"] = float(matched.mean()) if matched.size else math.nan
    for q, name in ((50, "queue_time_p50"), (90, "queue_time_p90"), (99, "queue_time_p99")):
        out[name] = float(np.percentile(matched, q)) if matched.size else math.nan
    out["queue_time_tail_mean"] = tail_mean(matched)
    decided = matched.size + abandoned
    out["abandonment_rate"] = abandoned / decided if decided else math.nan

    g = games[games.start >= warmup]
    out["games_per_hour"] = len(g) / (horizon - warmup) * 60.0
    out["draw_prob_true_mean"] = float(g.draw_prob_true.mean()) if len(g) else math.nan
    out["skill_gap_true_mean"] = float(g.skill_gap_true.mean()) if len(g) else math.nan
    decided_games = g.stronger_side_won.dropna()
    out["stronger_side_win_rate"] = (
        float(decided_games.astype(float).mean()) if len(decided_games) else math.nan
    )
    out["win_ratio_dispersion"] = _win_ratio_dispersion(g, participants)

    played = participants[participants.game_id.isin(g.game_id)].player_id.unique()
    rated = np.asarray(sorted(int(p) for p in played if registered[int(p)]), dtype=np.int64)
    for name, ratings in final_ratings.items():
        if rated.size >= 2:
            r, s = ratings[rated], skills[rated]
            out[f"{name}.kendall_tau"] = rating_kendall_tau(r, s)
            out[f"{name}.rating_rmse"] = rating_rmse(r, s) if skill_scale[name] else math.nan
        else:
            out[f"{name}.kendall_tau"] = math.nan
            out[f"{name}.rating_rmse"] = math.nan
    return out


#: The metrics of team games (:func:`team_metrics`), after ``skill_gap_true_mean``.
TEAM_METRICS = ("fair_band_share", "team_gap_true_mean")


def team_metrics(
    games: pd.DataFrame, warmup: float, fair_band: tuple[float, float]
) -> dict[str, float]:
    """Return the metrics of a team game run from its games started from ``warmup`` on
    (:data:`lobbysim.records.rows.TEAM_COLUMNS`; NaN where there is no game):

    * ``fair_band_share``: the share of games whose predicted chance that the stronger team
      wins, at the start, is within ``fair_band`` (inclusive): the games a designer would call
      fair by the rater's own prediction (of the games that have one: games of more than two
      teams have none, :func:`lobbysim.policies.team_shapes.teams_start`);
    * ``team_gap_true_mean``: the mean true gap between the teams' mean skills at the start
      (``skill_gap_true_mean`` weighs each stint by its minutes, back-fills included).
    """
    g = games[games.start >= warmup]
    if not len(g):
        return dict.fromkeys(TEAM_METRICS, math.nan)
    chance = g.win_chance_predicted.to_numpy(dtype=np.float64)
    chance = chance[~np.isnan(chance)]
    low, high = fair_band
    return {
        "fair_band_share": (
            float(((chance >= low) & (chance <= high)).mean()) if chance.size else math.nan
        ),
        "team_gap_true_mean": float(g.team_gap_true.mean()),
    }


def _win_ratio_dispersion(games: pd.DataFrame, participants: pd.DataFrame) -> float:
    """Mean |win ratio - 0.5| over players with at least 5 decided games after the warm-up.

    Only games with a winner count (not free-for-all games, nor drawn team games).
    """
    games = games[games.winner.notna()]
    if games.empty:
        return math.nan
    p = participants[participants.game_id.isin(games.game_id)]
    winners = games.set_index("game_id").winner
    won = p.team.to_numpy() == winners.reindex(p.game_id).to_numpy()
    per_player = pd.DataFrame({"player_id": p.player_id.to_numpy(), "won": won})
    stats = per_player.groupby("player_id").won.agg(["mean", "size"])
    stats = stats[stats["size"] >= MIN_GAMES_FOR_WIN_RATIO]
    return float((stats["mean"] - 0.5).abs().mean()) if len(stats) else math.nan


# --------------------------------------------------------------------------------------------
# Metrics by tenure (only with a persistent player base)

TENURE_GROUPS = ("newcomer", "veteran")
"""The tenure groups, as their metrics' prefixes: tenure < ``newcomer_games``, and the rest."""

TENURE_METRICS = (
    "queue_time_mean",
    "abandonment_rate",
    "skill_gap_true_mean",
    "draw_prob_true_mean",
)
"""The metrics measured per tenure group (``newcomer_queue_time_mean``, ...), with the meaning
of the metric of the same name."""

VETERAN_GAMES = 50
"""Games a registered player needs to count in ``<rater>.kendall_tau_veterans``."""

VETERANS_COUNT = f"veterans_{VETERAN_GAMES}_games"
"""The metric counting the players behind ``<rater>.kendall_tau_veterans``."""

TENURE_BIN_EDGES = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500)
"""Lower edges of the games-played bins of :func:`rating_error_by_tenure` (the last is open)."""

LOBBY_STATES = ("waiting", "playing")
"""Final player states of the players still in the lobby at the horizon."""


def tenure_metric_names(rater_names: Sequence[str]) -> list[str]:
    """Return the names of the metrics by tenure of a run with a base, in report order."""
    names = [f"{group}_{metric}" for metric in TENURE_METRICS for group in TENURE_GROUPS]
    return [*names, *(f"{r}.kendall_tau_veterans" for r in rater_names), VETERANS_COUNT]


def player_games(participants: pd.DataFrame, games: pd.DataFrame) -> pd.DataFrame:
    """Return one row per game a player took a seat in, with the player's tenure in it.

    A player's n-th game, counting from 0 in the order of game start, then game id, has tenure
    n: the games they had played before it. Several stints of one player in one game count
    once (the first ``joined``). Columns: ``player_id``, ``game_id``, ``joined`` (if
    ``participants`` has it), the columns of ``games`` among ``start``, ``end``,
    ``skill_gap_true`` and ``draw_prob_true``, and ``tenure``.
    """
    keys = ["player_id", "game_id"]
    if "joined" in participants.columns:
        seats = participants.groupby(keys, as_index=False, sort=False).agg(joined=("joined", "min"))
    else:
        seats = participants[keys].drop_duplicates(ignore_index=True)
    wanted = ("game_id", "start", "end", "skill_gap_true", "draw_prob_true")
    seats = seats.merge(games[[c for c in wanted if c in games.columns]], on="game_id")
    seats = seats.sort_values(["player_id", "start", "game_id"], kind="mergesort")
    seats = seats.reset_index(drop=True)
    seats["tenure"] = seats.groupby("player_id", sort=False).cumcount().to_numpy(dtype=np.int64)
    return seats


def games_before(
    player_ids: np.ndarray,
    times: np.ndarray,
    event_players: np.ndarray,
    event_times: np.ndarray,
    *,
    inclusive: bool = False,
) -> np.ndarray:
    """Return per query (player, time) how many of that player's events came before the time.

    An event counts when its time is earlier than the query's (or equal, with ``inclusive``).
    The tenure of a queueing spell is the player's games joined before it began (events: the
    seats' ``joined``); the tenure behind a rating sample is the games that had ended (and so
    been rated) by the sample (``end``, inclusive). One sort of events and queries together:
    O((n + m) log(n + m)).
    """
    q_players = np.asarray(player_ids, dtype=np.int64)
    e_players = np.asarray(event_players, dtype=np.int64)
    n_events = e_players.size
    players = np.concatenate([e_players, q_players])
    stamps = np.concatenate([np.asarray(event_times, float), np.asarray(times, float)])
    is_event = np.concatenate([np.ones(n_events, np.int64), np.zeros(q_players.size, np.int64)])
    # At equal times an event sorts before a query exactly when it counts.
    tie = 1 - is_event if inclusive else is_event
    order = np.lexsort((tie, stamps, players))
    events = is_event[order]
    before = np.cumsum(events) - events  # events sorted before each position, any player
    sorted_players = players[order]
    first = np.searchsorted(sorted_players, sorted_players, side="left")
    counts = np.empty(players.size, dtype=np.int64)
    counts[order] = before - before[first]
    return counts[n_events:]


def _mean(values: pd.Series) -> float:
    """Return the mean of the non-missing values (NaN without any)."""
    values = values.dropna()
    return float(values.mean()) if len(values) else math.nan


def tenure_metrics(
    games: pd.DataFrame,
    participants: pd.DataFrame,
    waits: pd.DataFrame,
    *,
    start: float,
    newcomer_games: int,
) -> dict[str, float]:
    """Return the metrics of newcomers and veterans (``newcomer_...`` and ``veteran_...``).

    A queueing spell (a ``waits`` row; it needs ``player_id``) belongs to a newcomer when the
    player had joined fewer than ``newcomer_games`` games before it began; a seat in a game
    when it was one of the player's first ``newcomer_games`` games (tenure < newcomer_games).
    Per group, over spells begun and games started from ``start`` on: the mean queue time of
    matched spells and the abandonment rate (as ``queue_time_mean`` and ``abandonment_rate``),
    and the mean true skill gap and true draw probability of the games, one term per seat (as
    ``skill_gap_true_mean`` and ``draw_prob_true_mean``). Tenure counts every game, from
    the start of the run.
    """
    seats = player_games(participants, games)
    waits = waits[waits["enqueued"] >= start]
    joined = seats["joined"] if "joined" in seats.columns else seats["start"]
    wait_tenure = games_before(
        waits["player_id"].to_numpy(), waits["enqueued"].to_numpy(), seats["player_id"], joined
    )
    in_window = seats[seats["start"] >= start]
    groups = {
        "newcomer": (wait_tenure < newcomer_games, in_window["tenure"] < newcomer_games),
        "veteran": (wait_tenure >= newcomer_games, in_window["tenure"] >= newcomer_games),
    }
    values: dict[str, float] = {}
    for group, (wait_rows, seat_rows) in groups.items():
        spells = waits[wait_rows]
        matched = spells.loc[spells["outcome"] == "matched", "wait"]
        abandoned = int((spells["outcome"] == "abandoned").sum())
        decided = len(matched) + abandoned
        values[f"{group}_queue_time_mean"] = _mean(matched)
        values[f"{group}_abandonment_rate"] = abandoned / decided if decided else math.nan
        chosen = in_window[seat_rows]
        values[f"{group}_skill_gap_true_mean"] = _mean(chosen["skill_gap_true"])
        values[f"{group}_draw_prob_true_mean"] = _mean(chosen["draw_prob_true"])
    return {
        f"{group}_{metric}": values[f"{group}_{metric}"]
        for metric in TENURE_METRICS
        for group in TENURE_GROUPS
    }


def veteran_kendall_taus(
    games: pd.DataFrame,
    participants: pd.DataFrame,
    final_ratings: Mapping[str, np.ndarray],
    skills: np.ndarray,
    registered: np.ndarray,
    *,
    start: float,
) -> dict[str, float]:
    """Return per rater Kendall's tau of final ratings and true skill among veterans.

    Veterans: registered players with at least :data:`VETERAN_GAMES` games over the whole run
    and at least one game started from ``start`` on (as ``kendall_tau`` asks of every rated
    player). Also returns :data:`VETERANS_COUNT`, how many they are: tau over a handful of
    players says little.
    """
    games_per_player = participants.drop_duplicates(["player_id", "game_id"]).player_id
    counts = games_per_player.value_counts()
    recent = participants.loc[
        participants.game_id.isin(games.game_id[games.start >= start]), "player_id"
    ].unique()
    candidates = counts.index[counts.to_numpy() >= VETERAN_GAMES].intersection(recent)
    ids = np.asarray(sorted(int(p) for p in candidates if registered[int(p)]), dtype=np.int64)
    out = {
        f"{name}.kendall_tau_veterans": rating_kendall_tau(ratings[ids], skills[ids])
        for name, ratings in final_ratings.items()
    }
    out[VETERANS_COUNT] = float(ids.size)
    return out


def rating_error_by_tenure(
    ratings: pd.DataFrame,
    games: pd.DataFrame,
    participants: pd.DataFrame,
    players: pd.DataFrame,
    rater: str,
    *,
    start: float,
    horizon: float,
    edges: Sequence[int] = TENURE_BIN_EDGES,
) -> pd.DataFrame:
    """Return a rater's RMSE against true skill by games played: its convergence curve.

    Every rating sample of ``rater`` taken from ``start`` on, of a registered player, counts
    once, in the bin of the games the player had finished (and the raters had applied) by the
    sample's time; the sample of every player at the horizon counts only for the players still
    in the lobby, like the periodic ones. Only meaningful for a rater on the skill scale.

    Returns:
        One row per bin: ``games_from``, ``games_to`` (exclusive; inf for the last),
        ``rmse`` (NaN for an empty bin) and ``samples``.
    """
    lower = np.asarray(edges, dtype=np.int64)
    samples = ratings[(ratings["rater"] == rater) & (ratings["time"] >= start)]
    columns = [c for c in ("player_id", "skill", "registered", "state") if c in players.columns]
    samples = samples.merge(players[columns], on="player_id")
    if "registered" in samples.columns:
        samples = samples[samples["registered"].astype(bool)]
    if "state" in samples.columns:
        last = samples["time"] >= horizon
        samples = samples[~last | samples["state"].isin(LOBBY_STATES)]
    seats = player_games(participants, games)
    tenure = games_before(
        samples["player_id"].to_numpy(),
        samples["time"].to_numpy(),
        seats["player_id"],
        seats["end"],
        inclusive=True,
    )
    error = samples["rating"].to_numpy(dtype=float) - samples["skill"].to_numpy(dtype=float)
    keep = np.isfinite(error)
    index = np.searchsorted(lower, tenure[keep], side="right") - 1
    counts = np.bincount(index, minlength=lower.size)
    sums = np.bincount(index, weights=error[keep] ** 2, minlength=lower.size)
    mse = np.full(lower.size, np.nan)
    np.divide(sums, counts, out=mse, where=counts > 0)
    return pd.DataFrame(
        {
            "games_from": lower,
            "games_to": np.r_[lower[1:].astype(float), math.inf],
            "rmse": np.sqrt(mse),
            "samples": counts,
        }
    )


def metric_names(
    rater_names: Sequence[str], *, base: bool = False, teams: bool = False
) -> list[str]:
    """Return every metric name for a run with these raters, in report order.

    With ``teams`` (team games) the team metrics (:data:`TEAM_METRICS`) follow
    ``skill_gap_true_mean``. With ``base`` (a scenario with a persistent player base), the
    metrics by tenure follow (:func:`tenure_metric_names`); a run without a base has none of
    them.
    """
    names = [
        *QUEUE_METRICS,
        "abandonment_rate",
        "games_per_hour",
        "draw_prob_true_mean",
        "skill_gap_true_mean",
        *(TEAM_METRICS if teams else ()),
        "stronger_side_win_rate",
        "win_ratio_dispersion",
    ]
    for rater in rater_names:
        names += [f"{rater}.rating_rmse", f"{rater}.kendall_tau"]
    return [*names, *tenure_metric_names(rater_names)] if base else names


# --------------------------------------------------------------------------------------------
# The values each metric can take

UNIT_INTERVAL_METRICS = frozenset(
    {
        "abandonment_rate",
        "draw_prob_true_mean",
        "stronger_side_win_rate",
        "retained",
        "retained_deciles_1_9",
        "cross_region_share",
        "premade_win_rate",
        "premade_share",
        "rule_rejected_share",
        "rule_relaxed_share",
        "rule_needed_share",
        "rule_games_share",
        "fair_band_share",
    }
)
"""Shares and probabilities: their values lie in [0, 1] (and ``retained_decile_k``)."""

NON_NEGATIVE_METRICS = frozenset(
    {
        "games_per_hour",
        "skill_gap_true_mean",
        "team_gap_true_mean",
        "daily_active_players",
        "visits_per_member_week",
        "churn_per_week",
        VETERANS_COUNT,
        "latency_ms_mean",
        "latency_ms_p90",
        "delta_ping_ms_mean",
        "party_split_games",
        "party_queue_time_mean",
        "rule_step_mean",
        "rule_queue_time",
    }
)
"""Metrics that cannot be negative (and queue times, ``visits_per_member_week_decile_k``
and every ``<rater>.rating_rmse``); churn per week is a share per week, which can pass 1 in a
window shorter than a week."""


def metric_support(metric: str) -> tuple[float, float]:
    """Return ``(low, high)``, the values a metric can take; ``(-inf, inf)`` for an unknown one.

    [0, 1] for shares and probabilities, [0, 0.5] for the win-ratio dispersion, [-1, 1] for a
    Kendall's tau, [0, inf) for queue times, counts, rates, skill gaps and RMSEs. A metric by
    tenure (``newcomer_...``, ``veteran_...``), of one region (``...@<region>``) or of one rule
    (``rule_...@<rule>[@step<k>]``) has the support of the metric it measures. The
    reports cut the confidence intervals of a metric to its support
    (:func:`lobbysim.stats.intervals.interval`).
    """
    for group in TENURE_GROUPS:
        metric = metric.removeprefix(f"{group}_")
    metric = metric.partition("@")[0]  # of one region or one rule: the metric's support
    if metric.endswith((".kendall_tau", ".kendall_tau_veterans")):
        return -1.0, 1.0
    if metric in UNIT_INTERVAL_METRICS or metric.startswith("retained_decile_"):
        return 0.0, 1.0
    if metric == "win_ratio_dispersion":
        return 0.0, 0.5
    if (
        metric in NON_NEGATIVE_METRICS
        or metric.startswith(("queue_time_", "visits_per_member_week_decile_"))
        or metric.endswith(".rating_rmse")
    ):
        return 0.0, math.inf
    return -math.inf, math.inf
