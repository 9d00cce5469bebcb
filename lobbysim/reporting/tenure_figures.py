"""The rating convergence curve of a run with a player base: the driving rater's error by games
played, per policy, against TrueSkill's published number of games needed to identify a skill.

Only a scenario with a persistent player base (``base:``) has players with long enough careers
for the curve to mean anything, so :mod:`lobbysim.reporting.run_figures` and the run report draw
and show it only then. Per replication, :func:`lobbysim.stats.metrics.rating_error_by_tenure` gives
the
RMSE of the rating samples in each bin of games played; per policy the curve is the mean over
replications with a 95% Student-t interval (:mod:`lobbysim.stats.intervals`).

The reference: Microsoft Research's TrueSkill project page [1] gives, per game mode, "the
minimum number of games per gamer that the system needs to identify the skill level": 12 for
"2 Players Free-For-All" (1 vs 1), 46 for 2 teams of 4, 91 for 2 teams of 8, 3 for 8 players
free-for-all, adding that "the actual number of games needed per gamer can be up to three times
higher". Its FAQ [2] derives them: a skill is one of n = 50 levels, log2(50) bits; a game of k
teams of m players gives log2(k!) bits and needs k m players, so k m log2(n) / log2(k!) games
per player (rounded up: 2 log2 50 = 11.3 -> 12 for 1 vs 1). :func:`trueskill_games_needed`
computes that number for the scenario's game mode and reproduces every row of the table.

[1] Microsoft Research, "TrueSkill Ranking System",
    https://www.microsoft.com/en-us/research/project/trueskill-ranking-system/
[2] Microsoft Research, "TrueSkill Frequently Asked Questions" ("How did you compute the
    average number of games until convergence?"),
    http://research.microsoft.com/mlp/trueskill/faq.aspx
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from lobbysim.experiments.figure_data import CONVERGENCE
from lobbysim.experiments.replications import ExperimentResult
from lobbysim.reporting.document import FigureOutcome, format_interval
from lobbysim.reporting.figures import marker, new_axes, save_figure, style_axes
from lobbysim.reporting.run_frames import Frames, driver_on_skill_scale
from lobbysim.stats.intervals import CONFIDENCE, interval
from lobbysim.stats.metrics import TENURE_BIN_EDGES

TENURE_SIZE = (8.0, 5.0)
"""The convergence figure's size in inches."""

TENURE_FIGURE_FILE = "rating_error_by_games_played.png"
"""The convergence figure's file (written only for a scenario with a player base)."""

TRUESKILL_LEVELS = 50
"""The skill levels TrueSkill's published numbers assume (its FAQ [2])."""

TRUESKILL_PRACTICE_FACTOR = 3
""""Up to three times higher" in practice, says the TrueSkill project page [1]."""

TRUESKILL_SOURCE = (
    "Microsoft Research, TrueSkill Ranking System, "
    "https://www.microsoft.com/en-us/research/project/trueskill-ranking-system/ (the table of "
    "games per gamer), and TrueSkill Frequently Asked Questions, "
    "http://research.microsoft.com/mlp/trueskill/faq.aspx (its formula)"
)
"""Where the reference number comes from, as the report cites it."""

CURVE_COLUMNS = ["policy", "games_from", "games_to", "mean", "ci_low", "ci_high", "n", "samples"]


def trueskill_games_needed(teams: int, players_per_team: int) -> int:
    """Return TrueSkill's published games per player to identify a skill, for a game mode.

    ``ceil(k m log2(50) / log2(k!))`` for k teams of m players (FAQ [2] of the module): 12 for
    1 vs 1 (k=2, m=1), 46 for 4 vs 4, 91 for 8 vs 8, 3 for an 8-player free-for-all (k=8, m=1),
    exactly the table of the TrueSkill project page [1].
    """
    bits_per_game = math.log2(math.factorial(teams))
    return math.ceil(teams * players_per_team * math.log2(TRUESKILL_LEVELS) / bits_per_game)


def reference_games(result: ExperimentResult) -> tuple[int, str]:
    """Return TrueSkill's published games needed for the scenario's game mode, and the mode."""
    game = result.scenario.game
    shape = game.shape
    if game.mode == "team" and shape is not None:  # (of teams of ranges: their most players)
        size = max(shape.highs)
        if shape.teams == 2 and shape.equal:
            return trueskill_games_needed(2, size), f"{size} vs {size}"
        return trueskill_games_needed(shape.teams, size), game.describe()
    if game.mode == "ffa" and shape is not None:
        size = shape.seats
        return trueskill_games_needed(size, 1), f"{size}-player free-for-all"
    return trueskill_games_needed(2, 1), "1 vs 1"


def convergence_curves(result: ExperimentResult, frames: Frames, rater: str) -> pd.DataFrame:
    """Return per policy and games-played bin the mean RMSE of ``rater`` over replications.

    Columns :data:`CURVE_COLUMNS`: the bin (``games_from`` to ``games_to``, exclusive), the
    mean over replications of the per-replication RMSE with its interval, ``n`` the
    replications with samples in the bin and ``samples`` the rating samples in it, all
    replications together. Bins without any sample are left out.
    """
    rows = []
    for policy in result.policies:
        # per replication, rating_error_by_tenure of its records
        curves = [c for c in frames.parts(policy, (CONVERGENCE, rater)) if c is not None]
        if not curves:
            continue
        matrix = np.vstack([c["rmse"].to_numpy(dtype=float) for c in curves])
        samples = np.sum([c["samples"].to_numpy() for c in curves], axis=0)
        for b, edge in enumerate(TENURE_BIN_EDGES):
            if samples[b] == 0:
                continue
            mean, _, n, low, high = interval(matrix[:, b], (0.0, math.inf))  # an RMSE
            upper = TENURE_BIN_EDGES[b + 1] if b + 1 < len(TENURE_BIN_EDGES) else math.inf
            rows.append([policy, edge, upper, mean, low, high, n, int(samples[b])])
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def driver_curves(result: ExperimentResult, frames: Frames) -> pd.DataFrame | None:
    """Return the driving rater's convergence curves, or None if it is not on the skill scale."""
    if not driver_on_skill_scale(result):
        return None
    return convergence_curves(result, frames, result.scenario.raters.driver.name)


def bin_label(games_from: int, games_to: float) -> str:
    """Return a games-played bin as text: ``0``, ``2-4``, ``500+``."""
    if not math.isfinite(games_to):
        return f"{games_from}+"
    last = int(games_to) - 1
    return str(games_from) if last == games_from else f"{games_from}-{last}"


def convergence_table(
    curves: pd.DataFrame, policies: Sequence[str]
) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the curve as a table: per bin, one column per policy."""
    header = ["games played", *(f"{p}: RMSE [{CONFIDENCE:.0%} CI] (samples)" for p in policies)]
    rows = []
    for (start, end), group in curves.groupby(["games_from", "games_to"], sort=True):
        cells = [bin_label(int(start), float(end))]
        for policy in policies:
            found = group[group["policy"] == policy]
            if found.empty:
                cells.append("n/a")
                continue
            row = found.iloc[0]
            text = format_interval(float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]))
            cells.append(f"{text} ({int(row['samples']):,})")
        rows.append(cells)
    return header, rows


def reference_text(result: ExperimentResult) -> str:
    """Return the sentence on TrueSkill's published games needed, with its source."""
    games, mode = reference_games(result)
    one_vs_one = trueskill_games_needed(2, 1)
    here = "" if mode == "1 vs 1" else f" and {games} for this scenario's mode ({mode})"
    return (
        "TrueSkill's published number of games per player its system needs to identify a "
        f"player's skill (an idealised minimum) is {one_vs_one} for 1 vs 1{here}, by "
        f"k·m·log2({TRUESKILL_LEVELS})/log2(k!) games for k teams of m players on "
        f"{TRUESKILL_LEVELS} skill levels; the actual number can be up to "
        f"{TRUESKILL_PRACTICE_FACTOR} times higher (source: {TRUESKILL_SOURCE})."
    )


def _draw_curves(
    ax: Axes, result: ExperimentResult, curves: pd.DataFrame, colours: dict[str, str]
) -> None:
    """Draw one line per policy with its interval as error bars (none where there is none)."""
    for k, policy in enumerate(result.policies):
        group = curves[curves["policy"] == policy]
        if group.empty:
            continue
        x = group["games_from"].to_numpy(dtype=float)
        mean = group["mean"].to_numpy(dtype=float)
        low = np.where(np.isfinite(group["ci_low"]), group["ci_low"], mean)
        high = np.where(np.isfinite(group["ci_high"]), group["ci_high"], mean)
        ax.errorbar(
            x,
            mean,
            yerr=np.vstack([mean - low, high - mean]),
            color=colours[policy],
            marker=marker(k),
            markersize=4,
            capsize=3,
            linewidth=1.6,
            label=policy,
        )


def _reference_lines(ax: Axes, games: int, mode: str) -> None:
    """Draw TrueSkill's published games needed (dashed) and the factor for practice (dotted)."""
    ax.axvline(
        games,
        color="black",
        linestyle="--",
        linewidth=1.0,
        label=f"TrueSkill's published games to identify a skill ({mode}): {games}",
    )
    ax.axvline(
        games * TRUESKILL_PRACTICE_FACTOR,
        color="black",
        linestyle=":",
        linewidth=1.0,
        label=f"{TRUESKILL_PRACTICE_FACTOR} x {games}: the most it says practice may need",
    )


def convergence_figure(
    result: ExperimentResult,
    curves: pd.DataFrame | None,
    out_dir: Path,
    colours: dict[str, str],
) -> FigureOutcome:
    """Draw the convergence curve (one line per policy, x log scale) with the reference lines.

    ``curves`` is :func:`convergence_curves` of the driving rater, or None when the driving
    rater is not on the skill scale (the figure is then skipped, with the reason).
    """
    driver = result.scenario.raters.driver.name
    games, mode = reference_games(result)
    title = f"Rating error of the driving rater {driver} by games played"
    caption = (
        f"Root mean squared error of {driver}'s ratings against true skill, over the rating "
        "samples of registered players taken after the warm-up, binned by the games the "
        "player had finished by the sample (x: log scale above 1 game); per replication, then "
        f"the mean over replications with its {CONFIDENCE:.0%} confidence interval (cut at "
        "twice the highest mean, so that a tall interval from few replications leaves the "
        "curves readable). Dashed: "
        f"TrueSkill's published minimum of {games} games to identify a skill ({mode}); dotted: "
        f"{TRUESKILL_PRACTICE_FACTOR} times that, the most it says practice may need. "
        + reference_text(result)
    )
    if curves is None:
        reason = f"{driver} is not on the skill scale, so its error has no RMSE"
        return FigureOutcome(TENURE_FIGURE_FILE, title, caption, skipped=reason)
    if curves.empty:
        reason = f"no rating samples of {driver} after the warm-up"
        return FigureOutcome(TENURE_FIGURE_FILE, title, caption, skipped=reason)
    fig, ax = new_axes(*TENURE_SIZE)
    _draw_curves(ax, result, curves, colours)
    _reference_lines(ax, games, mode)
    ax.set_xscale("symlog", linthresh=1.0, linscale=0.5)
    edges = sorted(set(curves["games_from"].astype(int)))
    ax.set_xticks(edges, [str(e) for e in edges])
    ax.set_xlim(-0.2, max(max(edges), games * TRUESKILL_PRACTICE_FACTOR) * 1.3)
    # With few replications a Student-t interval can be very tall; keep the curves readable.
    means = curves["mean"].to_numpy(dtype=float)
    highs = np.fmax(curves["ci_high"].to_numpy(dtype=float), means)
    ax.set_ylim(0.0, 1.05 * min(float(np.nanmax(highs)), 2 * float(np.nanmax(means))))
    replications = len(result.seeds)
    style_axes(
        ax,
        title=(
            f'{title}\nscenario "{result.scenario.name}", {replications} '
            f"replication{'s' if replications != 1 else ''} per policy"
        ),
        xlabel="games played by the player before the sample (bin start; log scale above 1)",
        ylabel="RMSE of the rating against true skill",
    )
    handles, _ = ax.get_legend_handles_labels()
    bars = f"error bars: {CONFIDENCE:.0%} CI over replications"
    handles.append(Line2D([], [], color="grey", marker="|", linestyle="none", label=bars))
    # below the axes: inside, it covered the reference lines where the curves fall
    fig.legend(handles=handles, fontsize="small", loc="outside lower center", ncols=2)
    return FigureOutcome(
        TENURE_FIGURE_FILE, title, caption, path=save_figure(fig, out_dir / TENURE_FIGURE_FILE)
    )
