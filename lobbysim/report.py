"""The report of a lobby run or a policy comparison: figures, ``report.md`` and ``report.html``.

Reporting only: this module runs no simulation. :func:`write_report` takes an
:class:`~lobbysim.experiment.ExperimentResult` (from :func:`~lobbysim.experiment.run_experiment`)
and writes into a folder

- five PNG figures drawn from the record frames pooled over each policy's replications (queue
  times, true draw probability over time, the driving rater's error over time, fairness by skill
  band, abandonment over time), each skipped with a note in the report when it has no data;
- ``report.md``: the set-up, a table of every metric per policy (mean and 95% interval over
  replications), for a comparison a table of the paired differences from the baseline with a
  verdict per metric (:func:`verdict`), how to read the intervals, and the figures;
- ``report.html``: the same content as one standalone page (inline CSS, no scripts, no external
  resources; the figures are linked relatively).

Both documents are rendered from one list of content blocks, so they say the same thing, and
they depend only on the result: writing the same result twice gives identical text.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from scipy.stats import kendalltau

from lobbysim.experiment import CONFIDENCE, ExperimentResult
from lobbysim.paper_report.figures import policy_colours
from lobbysim.raters import RATERS
from lobbysim.simulation import SimulationResult

TIME_BINS = 30
"""Bins of simulated time in the over-time figures."""

SKILL_BANDS = 5
"""Skill bands (quantiles of true skill) in the fairness figure."""

MIN_GAMES_FOR_FAIRNESS = 5
"""Games a player needs to count in the fairness figure (as in ``win_ratio_dispersion``)."""

DPI = 150

FIGURE_FILES = (
    "queue_times.png",
    "draw_probability_over_time.png",
    "rating_error_over_time.png",
    "fairness_by_skill_band.png",
    "abandonment_over_time.png",
)
"""The figures' file names, in report order."""

LOWER_IS_BETTER = "lower"
HIGHER_IS_BETTER = "higher"
NEUTRAL = "neither"

_LOWER_METRICS = frozenset({"abandonment_rate", "skill_gap_true_mean", "win_ratio_dispersion"})
_HIGHER_METRICS = frozenset({"games_per_hour", "draw_prob_true_mean"})

NO_DIFFERENCE = "no significant difference"
NO_VERDICT = "no verdict (neither direction is better)"
NO_DATA = "no data"
NO_INTERVAL = "no interval (fewer than 2 replications)"

_METRIC_MEANINGS = {
    "queue_time_mean": "mean minutes in the queue of the players who were matched",
    "queue_time_p50": "median minutes in the queue of the players who were matched",
    "queue_time_p90": "90th percentile of the queue time of matched players (minutes)",
    "queue_time_p99": "99th percentile of the queue time of matched players (minutes)",
    "abandonment_rate": "share of queueing spells that ended with the player giving up",
    "games_per_hour": "games started per simulated hour after the warm-up",
    "draw_prob_true_mean": "mean true draw probability of the games (higher: more even matches)",
    "skill_gap_true_mean": "mean true skill gap between the two sides of a game",
    "stronger_side_win_rate": (
        "how often the truly stronger side won (no better direction: near 0.5 means even "
        "matches, near 1 means skill decides)"
    ),
    "win_ratio_dispersion": "mean |win ratio - 0.5| of players with at least 5 decided games",
}
_RATER_METRIC_MEANINGS = {
    "rating_rmse": "root mean squared error of rater {rater}'s final ratings against true skill",
    "kendall_tau": "Kendall's tau between rater {rater}'s final ratings and true skill",
}

_LOBBY_STATES = ("waiting", "playing")
"""Final player states of the players still in the lobby at the horizon."""


# --------------------------------------------------------------------------------------------
# Metric directions and verdicts


def better_direction(metric: str) -> str:
    """Return which way a metric is better: :data:`LOWER_IS_BETTER`, ``HIGHER_...`` or ``NEUTRAL``.

    Lower is better for queue times, the abandonment rate, the true skill gap, the win-ratio
    dispersion and a rater's RMSE; higher for games per hour, the true draw probability and a
    rater's Kendall's tau. ``stronger_side_win_rate`` (and any unknown metric) is neutral.
    """
    if (
        metric.startswith("queue_time_")
        or metric in _LOWER_METRICS
        or metric.endswith(".rating_rmse")
    ):
        return LOWER_IS_BETTER
    if metric in _HIGHER_METRICS or metric.endswith(".kendall_tau"):
        return HIGHER_IS_BETTER
    return NEUTRAL


def verdict(
    metric: str,
    difference: float,
    significant: bool,
    *,
    policy: str,
    baseline: str,
    n: int = 2,
) -> str:
    """Return the verdict on one paired difference ``policy - baseline`` of a metric.

    Args:
        metric: the metric's name (its direction comes from :func:`better_direction`).
        difference: the mean paired difference ``policy - baseline``.
        significant: whether its confidence interval excludes 0.
        policy: the policy compared with the baseline.
        baseline: the baseline policy.
        n: the number of paired replications behind the difference.

    Returns:
        ``"<policy> better"``, ``"<baseline> better"``, :data:`NO_DIFFERENCE`, or for a
        neutral metric :data:`NO_VERDICT`; :data:`NO_DATA` when the difference is not a number
        and :data:`NO_INTERVAL` with fewer than 2 replications.
    """
    if not math.isfinite(difference):
        return NO_DATA
    direction = better_direction(metric)
    if direction == NEUTRAL:
        return NO_VERDICT
    if n < 2:
        return NO_INTERVAL
    if not significant or difference == 0:
        return NO_DIFFERENCE
    policy_lower = difference < 0
    policy_better = policy_lower == (direction == LOWER_IS_BETTER)
    return f"{policy} better" if policy_better else f"{baseline} better"


def metric_meaning(metric: str) -> str:
    """Return a one-line description of a metric (empty for an unknown one)."""
    if metric in _METRIC_MEANINGS:
        return _METRIC_MEANINGS[metric]
    rater, _, kind = metric.rpartition(".")
    if rater and kind in _RATER_METRIC_MEANINGS:
        return _RATER_METRIC_MEANINGS[kind].format(rater=rater)
    return ""


# --------------------------------------------------------------------------------------------
# Number formatting


def format_number(value: float, *, signed: bool = False) -> str:
    """Return ``value`` to 3 significant digits (``"n/a"`` for NaN, thousands separated)."""
    if not math.isfinite(value):
        return "n/a"
    if value == 0:
        return "0"
    sign = "+" if signed and value > 0 else ""
    magnitude = abs(value)
    if magnitude >= 1000:
        digits = math.floor(math.log10(magnitude)) + 1
        rounded = round(value, 3 - digits)
        return f"{sign}{rounded:,.0f}"
    text = f"{value:#.3g}"
    if "e" not in text:
        text = text.rstrip(".")
    return sign + text


def format_interval(mean: float, low: float, high: float, *, signed: bool = False) -> str:
    """Return ``"mean [low, high]"`` to 3 significant digits (``"mean [n/a]"`` without one)."""
    if not math.isfinite(mean):
        return "n/a"
    centre = format_number(mean, signed=signed)
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{centre} [n/a]"
    return f"{centre} [{format_number(low, signed=signed)}, {format_number(high, signed=signed)}]"


def _minutes(value: float) -> str:
    text = f"{value:g} minutes"
    return text if value < 120 else f"{text} ({value / 60:g} hours)"


# --------------------------------------------------------------------------------------------
# Tables


def metrics_table(result: ExperimentResult) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the "Metrics" table: per metric, one column per policy."""
    summary = result.summary
    header = ["metric", "better", *result.policies]
    rows = []
    for metric in summary["metric"].unique():
        cells = [str(metric), better_direction(str(metric))]
        for policy in result.policies:
            found = summary[(summary["policy"] == policy) & (summary["metric"] == metric)]
            if found.empty:
                cells.append("n/a")
                continue
            row = found.iloc[0]
            cells.append(
                format_interval(float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]))
            )
        rows.append(cells)
    return header, rows


def differences_table(differences: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the "Which policy is better" table.

    One row per non-baseline policy and metric, in the order of ``differences``: the paired
    difference ``policy - baseline`` with its 95% interval, and the :func:`verdict`.
    """
    header = ["metric", "policy vs baseline", "difference [95% CI]", "verdict"]
    rows = []
    for _, row in differences.iterrows():
        policy, baseline, metric = str(row["policy"]), str(row["baseline"]), str(row["metric"])
        mean = float(row["mean"])
        rows.append(
            [
                metric,
                f"{policy} - {baseline}",
                format_interval(mean, float(row["ci_low"]), float(row["ci_high"]), signed=True),
                verdict(
                    metric,
                    mean,
                    bool(row["significant"]),
                    policy=policy,
                    baseline=baseline,
                    n=int(row["n"]),
                ),
            ]
        )
    return header, rows


# --------------------------------------------------------------------------------------------
# Frames pooled over replications


def _frame(run: SimulationResult, kind: str) -> pd.DataFrame | None:
    """Return one record frame of a run, read back from its CSV file if it was streamed."""
    frame: pd.DataFrame | None = getattr(run, kind)
    if frame is None and run.records_dir is not None:
        path = Path(run.records_dir) / f"{kind}.csv"
        if path.exists():
            frame = pd.read_csv(path)
    return frame


class _Frames:
    """The record frames of every run of an experiment, loaded once."""

    def __init__(self, result: ExperimentResult) -> None:
        self._runs = result.runs
        self._cache: dict[tuple[str, int, str], pd.DataFrame | None] = {}

    def get(self, policy: str, replication: int, kind: str) -> pd.DataFrame | None:
        """Return one frame of one replication (0-based) of a policy, or None."""
        key = (policy, replication, kind)
        if key not in self._cache:
            self._cache[key] = _frame(self._runs[policy][replication], kind)
        return self._cache[key]

    def per_run(self, policy: str, *kinds: str) -> list[tuple[pd.DataFrame, ...]]:
        """Return per replication of a policy its frames of these kinds (if it has them all)."""
        out = []
        for r in range(len(self._runs.get(policy, []))):
            frames = [self.get(policy, r, kind) for kind in kinds]
            if all(f is not None for f in frames):
                out.append(tuple(f for f in frames if f is not None))
        return out

    def pooled(self, policy: str, kind: str) -> pd.DataFrame | None:
        """Return the frames of one kind of a policy's replications, concatenated."""
        frames = [f for (f,) in self.per_run(policy, kind) if not f.empty]
        return pd.concat(frames, ignore_index=True) if frames else None


# --------------------------------------------------------------------------------------------
# Statistics helpers


def _binned_means(times: np.ndarray, values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Return the mean of ``values`` per bin of ``times`` (NaN for an empty bin)."""
    bins = len(edges) - 1
    keep = np.isfinite(times) & np.isfinite(values)
    index = np.clip(np.searchsorted(edges, times[keep], side="right") - 1, 0, bins - 1)
    sums = np.bincount(index, weights=values[keep], minlength=bins)
    counts = np.bincount(index, minlength=bins).astype(float)
    means = np.full(bins, np.nan)
    np.divide(sums, counts, out=means, where=counts > 0)
    return means


def mean_and_se(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return per column the mean over rows and its standard error, ignoring NaN.

    The mean is NaN for a column without values, the standard error for one with fewer than
    two (no warnings either way).
    """
    values = np.atleast_2d(np.asarray(values, dtype=float))
    finite = np.isfinite(values)
    count = finite.sum(axis=0).astype(float)
    mean = np.full(values.shape[1], np.nan)
    np.divide(np.where(finite, values, 0.0).sum(axis=0), count, out=mean, where=count > 0)
    squares = np.where(finite, (values - mean) ** 2, 0.0).sum(axis=0)
    se = np.full(values.shape[1], np.nan)
    several = count > 1
    se[several] = np.sqrt(squares[several] / (count[several] - 1) / count[several])
    return mean, se


def _time_edges(result: ExperimentResult) -> np.ndarray:
    return np.linspace(0.0, float(result.scenario.horizon), TIME_BINS + 1)


# --------------------------------------------------------------------------------------------
# Figures


@dataclass(frozen=True)
class FigureOutcome:
    """One figure of the report: written (``path``) or skipped (``skipped`` says why)."""

    file: str
    title: str
    caption: str
    path: Path | None = None
    skipped: str | None = None


def _scenario_line(result: ExperimentResult) -> str:
    replications = len(result.seeds)
    plural = "s" if replications != 1 else ""
    return f'scenario "{result.scenario.name}", {replications} replication{plural} per policy'


def _new_axes() -> tuple[Figure, Axes]:
    fig = Figure(figsize=(8.0, 5.0), layout="constrained")
    return fig, fig.add_subplot()


def save_figure(fig: Figure, path: Path) -> Path:
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    return path


def _shade_warmup(ax: Axes, result: ExperimentResult) -> Patch | None:
    warmup = float(result.scenario.warmup)
    if warmup <= 0:
        return None
    ax.axvspan(0.0, warmup, color="grey", alpha=0.15, linewidth=0)
    return Patch(color="grey", alpha=0.3, label="warm-up (left out of the metrics)")


def _band_line(
    ax: Axes, x: np.ndarray, per_replication: np.ndarray, colour: str, label: str
) -> bool:
    """Draw the mean over replications with a ±1 SE band; return False if all is NaN."""
    mean, se = mean_and_se(per_replication)
    if not np.isfinite(mean).any():
        return False
    ax.fill_between(x, mean - se, mean + se, color=colour, alpha=0.2, linewidth=0)
    ax.plot(x, mean, color=colour, linewidth=1.8, marker="o", markersize=3, label=label)
    return True


def _band_legend(ax: Axes, extra: Sequence[Any]) -> None:
    handles, _ = ax.get_legend_handles_labels()
    handles = [*handles, Patch(color="grey", alpha=0.3, label="band: ±1 SE over replications")]
    handles += [h for h in extra if h is not None]
    ax.legend(handles=handles, fontsize="small", loc="best")


def _queue_times(
    result: ExperimentResult, frames: _Frames, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    file = FIGURE_FILES[0]
    title = "Queue time of matched players"
    caption = (
        "Empirical CDF of the queue time of every matched queueing spell that began after the "
        "warm-up, pooled over replications; circles mark the median (p50), triangles the 90th "
        "percentile (p90)."
    )
    warmup = float(result.scenario.warmup)
    waits: dict[str, np.ndarray] = {}
    for policy in result.policies:
        frame = frames.pooled(policy, "waits")
        if frame is None:
            continue
        chosen = frame[(frame["enqueued"] >= warmup) & (frame["outcome"] == "matched")]
        values = np.sort(chosen["wait"].to_numpy(dtype=float))
        values = values[np.isfinite(values)]
        if values.size:
            waits[policy] = values
    if not waits:
        return FigureOutcome(file, title, caption, skipped="no matched waits after the warm-up")

    fig, ax = _new_axes()
    for policy, values in waits.items():
        n = values.size
        index = np.unique(np.linspace(0, n - 1, min(n, 2000)).astype(np.int64))
        x, y = values[index], (index + 1) / n
        p50, p90 = (float(v) for v in np.percentile(values, [50, 90]))
        label = f"{policy}: p50 {format_number(p50)}, p90 {format_number(p90)} min ({n:,} spells)"
        colour = colours[policy]
        ax.step(np.r_[x[0], x], np.r_[0.0, y], where="post", color=colour, label=label)
        ax.plot([p50], [0.5], marker="o", color=colour, markersize=7, linestyle="none")
        ax.plot([p90], [0.9], marker="^", color=colour, markersize=7, linestyle="none")
    for level in (0.5, 0.9):
        ax.axhline(level, color="grey", linestyle="--", linewidth=0.8)

    pooled = np.concatenate(list(waits.values()))
    positive = pooled[pooled > 0]
    xlabel = "queue time (minutes)"
    threshold = 0.0
    if positive.size:
        low = float(np.percentile(positive, 5))
        if positive.max() / low > 100:
            if positive.size == pooled.size:
                ax.set_xscale("log")
                xlabel = "queue time (minutes, log scale)"
            else:
                threshold = 10.0 ** math.floor(math.log10(low))
                ax.set_xscale("symlog", linthresh=threshold)
                xlabel = (
                    f"queue time (minutes; log scale above {threshold:g}, linear below, "
                    "so that waits of 0 show)"
                )
    if ax.get_xscale() == "symlog":
        ax.set_xlim(left=-0.3 * threshold)  # just left of 0, so the jump at 0 shows
    elif ax.get_xscale() == "linear":
        ax.set_xlim(left=-0.02 * max(float(pooled.max()), 1e-9))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of matched players who waited at most this long")
    ax.set_ylim(0.0, 1.02)
    ax.set_title(f"{title}\n{_scenario_line(result)}")
    ax.grid(True, alpha=0.3)
    handles, _ = ax.get_legend_handles_labels()
    handles += [
        Line2D([], [], marker="o", color="grey", linestyle="none", label="median (p50)"),
        Line2D([], [], marker="^", color="grey", linestyle="none", label="90th percentile (p90)"),
    ]
    ax.legend(handles=handles, fontsize="small", loc="lower right")
    return FigureOutcome(file, title, caption, path=save_figure(fig, out_dir / file))


def _draw_probability(
    result: ExperimentResult, frames: _Frames, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    file = FIGURE_FILES[1]
    title = "True draw probability of the games over time"
    caption = (
        f"Mean true draw probability of the games started in each of {TIME_BINS} time bins "
        "(games still running at the horizon are not recorded, so the last bins are thin): "
        "per replication, then the mean over replications with a ±1 standard-error band."
    )
    edges = _time_edges(result)
    centres = (edges[:-1] + edges[1:]) / 2
    fig, ax = _new_axes()
    drawn = False
    for policy in result.policies:
        rows = [
            _binned_means(
                g["start"].to_numpy(dtype=float), g["draw_prob_true"].to_numpy(dtype=float), edges
            )
            for (g,) in frames.per_run(policy, "games")
            if not g.empty
        ]
        if rows:
            drawn |= _band_line(ax, centres, np.vstack(rows), colours[policy], policy)
    if not drawn:
        return FigureOutcome(file, title, caption, skipped="no games were played")
    warm = _shade_warmup(ax, result)
    ax.set_xlim(0.0, float(result.scenario.horizon))
    ax.set_xlabel("simulated time (minutes since the start)")
    ax.set_ylabel("true draw probability (mean over the games of a bin)")
    ax.set_title(f"{title}\n{_scenario_line(result)}")
    ax.grid(True, alpha=0.3)
    _band_legend(ax, [warm])
    return FigureOutcome(file, title, caption, path=save_figure(fig, out_dir / file))


def driver_on_skill_scale(result: ExperimentResult) -> bool:
    """Return whether the driving rater's ratings live on the true-skill scale.

    Looked up in the rater registry; for a rater that cannot be looked up, whether its
    ``rating_rmse`` metric has any value.
    """
    name = result.scenario.raters.driver.name
    try:
        return bool(RATERS.get(name).skill_scale)
    except (ValueError, KeyError, AttributeError):
        column = f"{name}.rating_rmse"
        if column not in result.metrics.columns:
            return False
        return bool(np.isfinite(result.metrics[column].to_numpy(dtype=float)).any())


def _kendall(ratings: np.ndarray, skills: np.ndarray) -> float:
    if ratings.size < 2 or np.ptp(ratings) == 0 or np.ptp(skills) == 0:
        return math.nan
    return float(kendalltau(ratings, skills).statistic)


def _rating_error_per_time(
    ratings: pd.DataFrame,
    players: pd.DataFrame,
    rater: str,
    horizon: float,
    statistic: Callable[[np.ndarray, np.ndarray], float],
) -> pd.Series:
    """Return per sample time the statistic of one rater's ratings against true skill.

    Only registered players count; the sample at the horizon (of every player seen) is cut
    down to the players still in the lobby, like the periodic samples.
    """
    columns = [c for c in ("player_id", "skill", "registered", "state") if c in players.columns]
    merged = ratings[ratings["rater"] == rater].merge(players[columns], on="player_id", how="inner")
    if "registered" in merged.columns:
        merged = merged[merged["registered"].astype(bool)]
    if "state" in merged.columns:
        last = merged["time"] >= horizon
        merged = merged[~last | merged["state"].isin(_LOBBY_STATES)]
    out = {
        float(time): statistic(
            group["rating"].to_numpy(dtype=float), group["skill"].to_numpy(dtype=float)
        )
        for time, group in merged.groupby("time", sort=True)
    }
    return pd.Series(out, dtype=float)


def _rmse(ratings: np.ndarray, skills: np.ndarray) -> float:
    return float(np.sqrt(np.mean((ratings - skills) ** 2))) if ratings.size else math.nan


def _rating_error(
    result: ExperimentResult, frames: _Frames, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    file = FIGURE_FILES[2]
    driver = result.scenario.raters.driver.name
    on_scale = driver_on_skill_scale(result)
    statistic = _rmse if on_scale else _kendall
    if on_scale:
        title = f"Rating error of the driving rater {driver}: RMSE against true skill"
        ylabel = "RMSE of the rating against true skill (skill units)"
        caption = (
            f"Root mean squared error of the driving rater {driver}'s ratings against the true "
            "skills of the registered players in the lobby at each rating sample; mean over "
            "replications with a ±1 standard-error band."
        )
    else:
        title = (
            f"Rating accuracy of the driving rater {driver}: Kendall's tau against true skill\n"
            f"({driver} is not on the skill scale, so tau instead of RMSE)"
        )
        ylabel = "Kendall's tau between rating and true skill"
        caption = (
            f"{driver} is not on the skill scale, so instead of an RMSE: Kendall's tau between "
            f"its ratings and the true skills of the registered players in the lobby at each "
            "rating sample; mean over replications with a ±1 standard-error band."
        )
    horizon = float(result.scenario.horizon)
    fig, ax = _new_axes()
    drawn = False
    for policy in result.policies:
        series = [
            _rating_error_per_time(ratings, players, driver, horizon, statistic)
            for ratings, players in frames.per_run(policy, "ratings", "players")
        ]
        series = [s for s in series if not s.empty]
        if not series:
            continue
        times = np.array(sorted(set().union(*(s.index for s in series))), dtype=float)
        matrix = np.vstack([s.reindex(times).to_numpy(dtype=float) for s in series])
        drawn |= _band_line(ax, times, matrix, colours[policy], policy)
    if not drawn:
        return FigureOutcome(
            file, title, caption, skipped=f"no rating samples of {driver} to compare"
        )
    warm = _shade_warmup(ax, result)
    ax.set_xlim(0.0, horizon)
    ax.set_xlabel("simulated time (minutes since the start)")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title}\n{_scenario_line(result)}")
    ax.grid(True, alpha=0.3)
    _band_legend(ax, [warm])
    return FigureOutcome(
        file, title.replace("\n", " "), caption, path=save_figure(fig, out_dir / file)
    )


def _fairness(
    result: ExperimentResult, frames: _Frames, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    file = FIGURE_FILES[3]
    title = "Fairness by skill band: distance of the win ratio from 0.5"
    caption = (
        f"Players in {SKILL_BANDS} bands of true skill (quintiles over all players of a policy's "
        f"replications); per band, the mean |win ratio - 0.5| of the players with at least "
        f"{MIN_GAMES_FOR_FAIRNESS} games (over the whole run, warm-up included); lower is "
        "fairer. n = players counted."
    )
    bars: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for policy in result.policies:
        players = frames.pooled(policy, "players")
        if players is None:
            continue
        skill = players["skill"].to_numpy(dtype=float)
        edges = np.quantile(skill, np.linspace(0, 1, SKILL_BANDS + 1)[1:-1])
        band = np.searchsorted(edges, skill, side="right")
        games = players["games"].to_numpy(dtype=float)
        wins = players["wins"].to_numpy(dtype=float)
        enough = games >= MIN_GAMES_FOR_FAIRNESS
        if not enough.any():
            continue
        distance = np.abs(wins[enough] / games[enough] - 0.5)
        counts = np.bincount(band[enough], minlength=SKILL_BANDS)
        sums = np.bincount(band[enough], weights=distance, minlength=SKILL_BANDS)
        means = np.full(SKILL_BANDS, np.nan)
        np.divide(sums, counts, out=means, where=counts > 0)
        bars[policy] = (means, counts)
    if not bars:
        return FigureOutcome(
            file,
            title,
            caption,
            skipped=f"no player played at least {MIN_GAMES_FOR_FAIRNESS} games",
        )
    fig, ax = _new_axes()
    width = 0.8 / len(bars)
    positions = np.arange(SKILL_BANDS, dtype=float)
    for k, (policy, (means, counts)) in enumerate(bars.items()):
        x = positions - 0.4 + width * (k + 0.5)
        shown = np.isfinite(means)
        drawn = ax.bar(x[shown], means[shown], width=width, color=colours[policy], label=policy)
        ax.bar_label(drawn, labels=[f"n={c}" for c in counts[shown]], fontsize="x-small", padding=2)
    labels = [f"band {b + 1}" for b in range(SKILL_BANDS)]
    labels[0] += "\n(lowest skill)"
    labels[-1] += "\n(highest skill)"
    ax.set_xticks(positions, labels)
    ax.set_xlabel(f"true-skill band ({SKILL_BANDS} quantile bands)")
    ax.set_ylabel(f"mean |win ratio - 0.5| (players with >= {MIN_GAMES_FOR_FAIRNESS} games)")
    ax.margins(y=0.15)
    ax.set_title(f"{title}\n{_scenario_line(result)}")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    return FigureOutcome(file, title, caption, path=save_figure(fig, out_dir / file))


def _abandonment(
    result: ExperimentResult, frames: _Frames, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    file = FIGURE_FILES[4]
    title = "Abandonment over time"
    caption = (
        f"Share of the queueing spells begun in each of {TIME_BINS} time bins that ended with "
        "the player giving up (spells still waiting at the horizon left out): per replication, "
        "then the mean over replications with a ±1 standard-error band."
    )
    edges = _time_edges(result)
    centres = (edges[:-1] + edges[1:]) / 2
    fig, ax = _new_axes()
    drawn = False
    for policy in result.policies:
        rows = []
        for (waits,) in frames.per_run(policy, "waits"):
            decided = waits[waits["outcome"].isin(("matched", "abandoned"))]
            if decided.empty:
                continue
            abandoned = (decided["outcome"] == "abandoned").to_numpy(dtype=float)
            rows.append(_binned_means(decided["enqueued"].to_numpy(dtype=float), abandoned, edges))
        if rows:
            drawn |= _band_line(ax, centres, np.vstack(rows), colours[policy], policy)
    if not drawn:
        return FigureOutcome(file, title, caption, skipped="no queueing spell was decided")
    warm = _shade_warmup(ax, result)
    ax.set_xlim(0.0, float(result.scenario.horizon))
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("simulated time the spell began (minutes since the start)")
    ax.set_ylabel("share of queueing spells abandoned")
    ax.set_title(f"{title}\n{_scenario_line(result)}")
    ax.grid(True, alpha=0.3)
    _band_legend(ax, [warm])
    return FigureOutcome(file, title, caption, path=save_figure(fig, out_dir / file))


def write_figures(result: ExperimentResult, out_dir: Path) -> list[FigureOutcome]:
    """Write the report's figures into ``out_dir``; return what became of each."""
    colours = policy_colours(result.policies)
    frames = _Frames(result)
    makers = (_queue_times, _draw_probability, _rating_error, _fairness, _abandonment)
    return [make(result, frames, Path(out_dir), colours) for make in makers]


# --------------------------------------------------------------------------------------------
# Content blocks, rendered to Markdown and HTML


@dataclass(frozen=True)
class Block:
    """One piece of the report: ``kind`` is heading, text, items, code, table or figure."""

    kind: str
    text: str = ""
    level: int = 2
    items: tuple[tuple[str, str], ...] = ()
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    figure: FigureOutcome | None = None


def md_heading(text: str, level: int = 2) -> Block:
    return Block("heading", text=text, level=level)


def md_text(text: str) -> Block:
    return Block("text", text=text)


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> Block:
    return Block("table", header=tuple(header), rows=tuple(tuple(r) for r in rows))


INTERVALS_TEXT = (
    f"Every interval is a {CONFIDENCE:.0%} Student-t confidence interval over the replications: "
    "each replication is one independent run, and the interval is where the mean over many "
    "more replications would likely lie. The paired differences compare a policy and the "
    "baseline replication by replication, on common random numbers (replication r of every "
    "policy sees the same arrivals, players and skills), so the noise both share cancels: the "
    "interval of a difference is much narrower than the two separate intervals in the Metrics "
    "table would suggest, and two overlapping intervals there can still give a significant "
    "difference. 'Significant' means the difference's interval excludes 0. With few "
    "replications the intervals are wide (and a metric with no data in a replication, shown as "
    "n/a when no replication has any, is left out of its interval); run more replications to "
    "narrow them."
)


def _setup_items(result: ExperimentResult) -> list[tuple[str, str]]:
    scenario = result.scenario
    arrivals = scenario.arrivals
    params = ", ".join(f"{k}={v}" for k, v in arrivals.params.items())
    shadows = ", ".join(s.name for s in scenario.raters.shadows) or "none"
    policies = [f"{p} (baseline)" if p == result.baseline else p for p in result.policies]
    seeds = ", ".join(str(s) for s in result.seeds)
    game = scenario.game
    mode = game.mode
    if mode == "team":
        mode = f"team ({game.team_size} vs {game.team_size})"
    elif mode == "ffa":
        mode = f"free-for-all ({game.ffa_size} players)"
    return [
        ("Horizon", _minutes(float(scenario.horizon))),
        (
            "Warm-up",
            f"{_minutes(float(scenario.warmup))}, left out of the metrics and of the "
            "distribution figures",
        ),
        (
            "Replications",
            f"{len(result.seeds)} per policy, on common random numbers (the same seeds for "
            "every policy)",
        ),
        ("Seeds", f"master seed {scenario.seed}; replication seeds {seeds}"),
        ("Policies", ", ".join(policies)),
        ("Games", f"{mode}, {game.length:g} minutes"),
        ("Arrivals", f"{arrivals.name} ({params})" if params else arrivals.name),
        ("Raters", f"driving: {scenario.raters.driver.name}; shadows: {shadows}"),
    ]


def report_blocks(
    result: ExperimentResult, figures: Sequence[FigureOutcome], *, command: str | None = None
) -> list[Block]:
    """Return the report's content, in order, for :func:`render_markdown` and ``render_html``."""
    scenario = result.scenario
    comparison = len(result.policies) >= 2
    blocks = [md_heading(f"Lobby report: {scenario.name}", level=1)]
    description = " ".join(scenario.description.split())
    if description:
        blocks.append(md_text(description))
    if comparison:
        blocks.append(
            md_text(
                f"A comparison of {len(result.policies)} matchmaking policies "
                f"({', '.join(result.policies)}) against the baseline {result.baseline}."
            )
        )
    else:
        blocks.append(md_text(f"A run of the matchmaking policy {result.baseline}."))

    blocks += [md_heading("Set-up"), Block("items", items=tuple(_setup_items(result)))]
    if command:
        blocks += [md_text("Reproduce with:"), Block("code", text=command)]

    header, rows = metrics_table(result)
    blocks += [
        md_heading("Metrics"),
        md_text(
            f"Per metric and policy: the mean over replications [{CONFIDENCE:.0%} confidence "
            "interval]; 'better' says which way the metric is better. n/a: no data (for "
            "example the RMSE of a rater that is not on the skill scale); [n/a]: no interval "
            "(fewer than 2 replications with data)."
        ),
        md_table(header, rows),
    ]
    meanings = [(row[0], metric_meaning(row[0])) for row in rows if metric_meaning(row[0])]
    if meanings:
        blocks.append(Block("items", items=tuple(meanings)))

    if comparison:
        header, rows = differences_table(result.differences)
        blocks += [
            md_heading("Which policy is better"),
            md_text(
                "Per metric, the paired difference policy - baseline (mean over replications "
                f"[{CONFIDENCE:.0%} confidence interval]) and the verdict: the better policy when "
                "the interval excludes 0, otherwise no significant difference. "
                "stronger_side_win_rate has no better direction, so it gets no verdict."
            ),
            md_table(header, rows),
        ]

    blocks += [md_heading("How to read the intervals"), md_text(INTERVALS_TEXT)]
    blocks.append(md_heading("Figures"))
    blocks += [Block("figure", figure=f) for f in figures]
    return blocks


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(blocks: Sequence[Block]) -> str:
    """Return the Markdown text of the report's blocks."""
    lines: list[str] = []
    for block in blocks:
        if block.kind == "heading":
            lines += ["#" * block.level + " " + block.text, ""]
        elif block.kind == "text":
            lines += [block.text, ""]
        elif block.kind == "items":
            lines += [f"- **{label}**: {value}" for label, value in block.items]
            lines.append("")
        elif block.kind == "code":
            lines += ["```", block.text, "```", ""]
        elif block.kind == "table":
            lines.append("| " + " | ".join(_md_cell(h) for h in block.header) + " |")
            lines.append("|" + " --- |" * len(block.header))
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
            lines.append("")
        elif block.kind == "figure" and block.figure is not None:
            figure = block.figure
            if figure.path is not None:
                lines += [f"![{figure.title}]({figure.file})", "", f"*{figure.caption}*", ""]
            else:
                lines += [f"**{figure.title}**: not drawn: {figure.skipped}.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 62rem;
       margin: 2rem auto; padding: 0 1rem; color: #222; line-height: 1.5; }
h1 { border-bottom: 2px solid #ccc; padding-bottom: 0.3rem; }
h2 { margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: left; }
th { background: #f2f2f2; }
tr:nth-child(even) td { background: #fafafa; }
pre { background: #f4f4f4; padding: 0.6rem; overflow-x: auto; }
figure { margin: 1.5rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-style: italic; color: #555; }
.skipped { color: #a33; }
""".strip()


def render_html(blocks: Sequence[Block], title: str) -> str:
    """Return a standalone HTML page of the report's blocks (inline CSS, no scripts)."""
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        f"<style>\n{_CSS}\n</style>",
        "</head>",
        "<body>",
    ]
    for block in blocks:
        if block.kind == "heading":
            parts.append(f"<h{block.level}>{esc(block.text)}</h{block.level}>")
        elif block.kind == "text":
            parts.append(f"<p>{esc(block.text)}</p>")
        elif block.kind == "items":
            parts.append("<ul>")
            parts += [
                f"<li><strong>{esc(label)}</strong>: {esc(value)}</li>"
                for label, value in block.items
            ]
            parts.append("</ul>")
        elif block.kind == "code":
            parts.append(f"<pre><code>{esc(block.text)}</code></pre>")
        elif block.kind == "table":
            parts += ["<table>", "<thead>", "<tr>"]
            parts += [f'<th scope="col">{esc(h)}</th>' for h in block.header]
            parts += ["</tr>", "</thead>", "<tbody>"]
            for row in block.rows:
                cells = "".join(f"<td>{esc(c)}</td>" for c in row)
                parts.append(f"<tr>{cells}</tr>")
            parts += ["</tbody>", "</table>"]
        elif block.kind == "figure" and block.figure is not None:
            figure = block.figure
            if figure.path is not None:
                parts += [
                    "<figure>",
                    f'<img src="{esc(figure.file)}" alt="{esc(figure.title)}">',
                    f"<figcaption>{esc(figure.caption)}</figcaption>",
                    "</figure>",
                ]
            else:
                parts.append(
                    f'<p class="skipped"><strong>{esc(figure.title)}</strong>: not drawn: '
                    f"{esc(str(figure.skipped))}.</p>"
                )
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# The entry point


def write_report(
    result: ExperimentResult, out_dir: Path, *, command: str | None = None
) -> list[Path]:
    """Write the report of an experiment (a run or a policy comparison) into ``out_dir``.

    Args:
        result: what :func:`~lobbysim.experiment.run_experiment` returned.
        out_dir: an existing folder to write into.
        command: the command that reproduces the run, quoted in the set-up if given.

    Returns:
        The files written: the figures that had data (of :data:`FIGURE_FILES`, in that order),
        then ``report.md`` and ``report.html``.
    """
    out_dir = Path(out_dir)
    figures = write_figures(result, out_dir)
    blocks = report_blocks(result, figures, command=command)
    markdown = out_dir / "report.md"
    markdown.write_text(render_markdown(blocks), encoding="utf-8")
    page = out_dir / "report.html"
    page.write_text(render_html(blocks, f"Lobby report: {result.scenario.name}"), encoding="utf-8")
    return [*(f.path for f in figures if f.path is not None), markdown, page]
