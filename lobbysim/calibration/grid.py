"""The raters' grids of settings, tuned on a match log's first part, and the walk past their ends.

:func:`~lobbysim.calibration.scores.score_log` replays each setting of a rater's grid
(:data:`GRIDS`) over the first part of the log and keeps the best; this module holds the grids,
the range a walk past a grid's end stays in (:data:`RANGES`), the walk (:func:`extend`), the
notes on a value still at an end (:func:`edge_notes`) and the parameters' labels
(:func:`params_label`). :mod:`lobbysim.calibration.scores` holds the replays and the scores.

**Tuning.** The log is split by start: the first ``split`` (default 0.5) of its matches are the
``first`` part, the rest the ``second``. Each rater's small grid (:data:`GRIDS`) is replayed over
the first part alone (its predictions need nothing later) and the setting with the lowest log
loss there is kept (the first in grid order on a tie), walked past the grid's end where it ends
the grid (:func:`extend`); the whole log is then replayed with it and
the ``second`` part (and ``second_experienced``) is the held-out score, as the Elo-MMR paper's
benchmark scores raters (Ebtekar and Liu, "Elo-MMR: A Rating System for Massive Multiplayer
Competitions", WWW 2021). ``all`` and ``first`` include the matches the setting was chosen on.

**The tuning loss** counts the first part's pairs whose players each had at least
:data:`~lobbysim.calibration.scores.TUNE_EXPERIENCED` (5) earlier matches in the log, where the
first part has :data:`~lobbysim.calibration.scores.MIN_TUNE_PAIRS` (200) of them, else every
pair of it. A log cut from a running game starts with players its matchmaker knows to be close
and the replay has not met: those first pairs are near coin flips, and on them the settings
that learn least (a narrow prior, a long rating period) score best and then lose on the second
part. On the bundled sample log every pair chose Glicko-2's initial deviation 87.5 and the
Bayesian rater's beta^2 15.6 (0.6536 and 0.6490 on the second part), the experienced pairs 175
and 6.25 (0.6387 and 0.6398); benchmarks/bench_calibrate_tuning.py measures the change on other
logs of the same game.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: Each rater's grid of settings tried on the first part (small on purpose: every setting is a
#: replay). ``bayesian``: the performance variance ``beta2`` (against the prior variance 4) and
#: the skill drift ``tau2`` added before each game; ``sph_elo``: its K, ``game_mult`` rating
#: points per minute of a pair's shared time (its logistic scale ``t`` stays 120: only K / t
#: matters); ``glicko2``: the rating period in minutes (a quarter of an hour to a day), the
#: unrated player's deviation ``initial_deviation`` (Glickman's 350 and half of it: on
#: Glicko-2's fixed logistic scale the initial deviation is its prior's width against the
#: performance noise, the ratio the Gaussian raters tune through ``beta2``) and volatility
#: ``initial_volatility`` (Glickman's 0.06, a third and a tenth of it), with the system constant
#: ``tau`` at 0.5, the value of Glickman's worked example. The volatility is the skill drift a
#: period adds to a deviation (``phi^2 + sigma^2`` for each period, played or idle), so its
#: scale is tied to the period's: Glickman's 0.06 suits periods of a month, and over periods of
#: minutes it adds a deviation of hundreds of points to a player idle for a day, which the first
#: part of a log (mostly newcomers) barely notices and its second part (players returning) pays
#: for; on the bundled sample log the grid without it chose 3.75-minute periods at 0.06 and
#: scored 0.642 on the second part against the Gaussian rater's 0.631. ``tau`` (how fast the
#: volatility itself moves) changed the first part's loss by under 1e-5 on that log across 0.15
#: to 1.2 and is left out of the grid. ``openskill``: ``beta2``. A chosen value at the end of its
#: range is extended past it (:func:`extend`), and noted if the extension still ends there.
GRIDS: dict[str, list[dict[str, float]]] = {
    "bayesian": [{"beta2": b, "tau2": t} for b in (1.0, 2.5, 6.25) for t in (0.0, 0.01, 0.05)],
    "sph_elo": [{"game_mult": k} for k in (1.0, 2.0, 4.0, 8.0, 16.0)],
    "glicko2": [
        {"tau": 0.5, "period": p, "initial_deviation": d, "initial_volatility": v}
        for p in (15.0, 60.0, 360.0, 1440.0)
        for d in (175.0, 350.0)
        for v in (0.06, 0.02, 0.006)
    ],
    "openskill": [{"beta2": b} for b in (1.0, 2.5, 6.25)],
}

#: At most this many steps past the end of a grid's range (each a step of the range's own
#: spacing: times the ratio of its last two values, or plus their difference) for a parameter
#: whose chosen value ends the values tried (:func:`extend`).
EXTEND_STEPS = 4

#: A step past a grid's end is taken only where it lowers the first part's log loss by more than
#: this (far below what a log of thousands of matches can tell apart), and a value at the end
#: is noted only where it beats its neighbour by more: a parameter that changes next to nothing
#: (Glicko-2's ``tau`` over a few games a period) is neither walked nor noted.
MIN_GAIN = 1e-4

#: The range an extension past a grid stays in, per rater and parameter (the grid itself may
#: lie anywhere): wide, but short of values a rater's author would not use (Glickman's
#: Glicko-2 paper suggests a system constant ``tau`` of 0.3 to 1.2; a rating period past a
#: week, a volatility a hundredth of Glickman's 0.06 or 4 times it, or a performance variance
#: 25 times the prior's, stops meaning what it says).
RANGES: dict[str, dict[str, tuple[float, float]]] = {
    "bayesian": {"beta2": (0.1, 100.0), "tau2": (0.0, 1.0)},
    "sph_elo": {"game_mult": (0.125, 128.0)},
    "glicko2": {
        "tau": (0.15, 2.4),
        "period": (1.0, 10080.0),
        "initial_deviation": (40.0, 700.0),
        "initial_volatility": (0.0006, 0.24),
    },
    "openskill": {"beta2": (0.1, 100.0)},
}

#: How parameters are named in the terminal lines.
PARAM_LABELS = {
    "beta2": "beta^2",
    "tau2": "tau^2",
    "game_mult": "K",
    "tau": "tau",
    "initial_deviation": "RD0",
    "initial_volatility": "sigma0",
}


def params_label(params: Mapping[str, Any]) -> str:
    """Return ``"beta^2 2.5, tau^2 0.01"`` of a rater's parameters (a period in minutes)."""
    parts = []
    for key, value in params.items():
        text = f"{value:g}" if isinstance(value, float | int) else str(value)
        if key == "period":
            text += " min"
        parts.append(f"{PARAM_LABELS.get(key, key)} {text}")
    return ", ".join(parts)


def _edge(
    key: str, value: Any, settings: Sequence[Mapping[str, Any]], fixed: Mapping[str, Any]
) -> tuple[str, float] | None:
    """Return which end of the values tried for ``key`` the chosen ``value`` is (``smallest``
    or ``largest``) and the next value past it, at the spacing of the last two values (times
    their ratio where both are positive, else plus their difference); None where it is inside
    the range, the spec sets the parameter, fewer than two values were tried, or the end is a
    smallest 0 (nothing below it: no drift)."""
    if key in fixed or not isinstance(value, float | int) or isinstance(value, bool):
        return None
    tried = sorted({s[key] for s in settings if isinstance(s.get(key), float | int)})
    if len(tried) < 2 or value not in (tried[0], tried[-1]):
        return None
    if value == tried[-1]:
        before = tried[-2]
        step = value * (value / before) if before > 0 else value + (value - before)
        return "largest", float(step)
    after = tried[1]
    if value <= 0:
        return None
    return "smallest", float(value * (value / after))


def extend(
    best: dict[str, Any],
    best_loss: float,
    settings: Sequence[Mapping[str, Any]],
    fixed: Mapping[str, Any],
    loss_of: Callable[[dict[str, Any]], float],
    valid: Callable[[dict[str, Any]], bool],
) -> tuple[dict[str, Any], float]:
    """Extend the grid past each parameter whose chosen value ends its range: one parameter
    at a time (the others at the best setting), up to :data:`EXTEND_STEPS` steps, while the
    first-part loss keeps falling; return the best setting and its loss.

    Where a walk moved a parameter, the grid's values of every other parameter are tried again
    with it (a coordinate pass: the grid holds them only beside the grid's own values) and the
    walks are taken again, at most :data:`PASSES` times, while anything moves. (Glicko-2 on the
    bundled sample log: the period walked from 15 to 3.75 minutes at the volatility 0.06 that
    suited 15, where 0.02 fits the first part better and the second part by 0.012.)"""
    seen = [dict(s) for s in settings]
    steps = dict.fromkeys(best, 0)  # each parameter's steps past its end, in all rounds

    def better(candidate: dict[str, Any]) -> bool:
        nonlocal best, best_loss
        if candidate in seen or not valid(candidate):
            return False
        seen.append(candidate)
        loss = loss_of(candidate)
        if not loss < best_loss - MIN_GAIN:
            return False
        best, best_loss = candidate, loss
        return True

    for round_ in range(PASSES):
        moved = False
        if round_:  # the grid's values again, beside what the walks moved
            for key in list(best):
                if key in fixed:
                    continue
                for value in sorted({s[key] for s in settings if key in s}, key=str):
                    moved |= better({**best, key: value})
        for key in list(best):
            while steps[key] < EXTEND_STEPS:
                edge = _edge(key, best[key], seen, fixed)
                if edge is None:
                    break
                steps[key] += 1
                if not better({**best, key: edge[1]}):
                    break
                moved = True
        if not moved:
            break
    return best, best_loss


#: The most rounds of walks (and coordinate passes between them) :func:`extend` takes.
PASSES = 3


def edge_notes(
    rater: str,
    label: str,
    settings: Sequence[Mapping[str, Any]],
    losses: Sequence[float],
    best: Mapping[str, Any],
    fixed: Mapping[str, Any],
) -> list[str]:
    """Return a note for each tuned parameter whose chosen value still ends the values tried
    (the grid and its extensions: :func:`extend`; but 0, the least there is) and beats its
    neighbour there (the others as chosen) by more than :data:`MIN_GAIN`."""
    notes = []
    loss_of = {params_label(s): loss for s, loss in zip(settings, losses, strict=True)}
    for key, value in best.items():
        edge = _edge(key, value, settings, fixed)
        if edge is None:
            continue
        line = sorted(
            s[key] for s in settings if all(s.get(k) == v for k, v in best.items() if k != key)
        )
        if len(line) > 1:  # else no neighbour with the others as chosen: noted
            neighbour = line[1] if edge[0] == "smallest" else line[-2]
            gain = loss_of[params_label({**best, key: neighbour})] - loss_of[params_label(best)]
            if gain <= MIN_GAIN:
                continue
        bounds = RANGES.get(rater, {}).get(key)
        within = f", within {bounds[0]:g} to {bounds[1]:g}" if bounds else ""
        notes.append(
            f"{label}: {params_label({key: value})} is the {edge[0]} value tried, the grid "
            f"extended as far as allowed (up to {EXTEND_STEPS} steps{within}); the best may "
            "lie further"
        )
    return notes
