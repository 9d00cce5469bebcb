"""Raters scored on a match log: each rater replayed over the log in time order, no queue.

:func:`score_log` replays every rater over a :class:`~lobbysim.calibration.matchlog.MatchLog` and
scores the predictions it made of matches it had not yet seen; :func:`scores_text` puts the
scores in a few terminal lines. docs/calibrate.md ("Raters scored on the log") is the user's
account of the method; this docstring is the exact one, with those of
:mod:`lobbysim.calibration.replay`, which holds the replay (its timing rule, the games the raters
see, their predictions and the oracle's from a :class:`Truth`), and of
:mod:`lobbysim.calibration.grid` (the grids and the tuning).

**Scores** of predictions ``p`` against outcomes ``y``: log loss ``-(y ln p + (1 - y) ln(1 - p))``
(``p`` clipped to ``[1e-15, 1 - 1e-15]``), Brier score ``(p - y)^2``, both averaged over the
pairs, draws included; pair-order accuracy, the share of decided pairs (no draw) where the side
given ``p > 1/2`` won, an exact 1/2 counting half; a calibration curve of 10 bins of ``p``
(``[0, 0.1)``, ..., ``[0.9, 1]``): mean ``p`` against the mean outcome, with the pairs in each.
Each score is given on every match (``all``) and, because a rater cannot know a newcomer, on the
matches whose every player had at least ``experienced`` (default 10) earlier finished matches in
the log (``all_experienced``).

**Tuning** (the log's ``first`` and ``second`` parts, each rater's grid tuned on the first's
pairs of experienced players, the held-out score on the second) is stated in the docstring of
:mod:`lobbysim.calibration.grid`, which holds the grids and their walk past their ends.
"""

from __future__ import annotations

import math
import textwrap
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from lobbysim.calibration.grid import GRIDS, RANGES, edge_notes, extend, params_label
from lobbysim.calibration.matchlog import MatchLog
from lobbysim.calibration.replay import FloatArray, LogArrays, Truth, oracle_predictions, replay
from lobbysim.raters import RATERS, Rater
from lobbysim.scenario import PluginSpec

__all__ = [
    "CLIP",
    "DEFAULT_RATERS",
    "METRICS",
    "ORACLE",
    "PARTS",
    "RaterScores",
    "calibration_curve",
    "pair_scores",
    "ranking",
    "score_log",
    "scores_text",
    "zero_length_warning",
]


#: The raters scored by default, in this order (``openskill`` only where its package is
#: installed: it is an optional extra).
DEFAULT_RATERS = ("bayesian", "sph_elo", "glicko2", "openskill")

#: The parts of the log a score can be on (see the module docstring).
PARTS = ("all", "first", "second", "all_experienced", "second_experienced")

#: The metrics of :attr:`RaterScores.scores`.
METRICS = ("log_loss", "brier", "pair_order")

#: Predictions are clipped this far from 0 and 1 for the log loss.
CLIP = 1e-15

ORACLE = "oracle"

#: The tuning loss counts the first part's pairs whose every player had at least this many
#: earlier finished matches in the log (:func:`score_log`'s ``tune_experienced``), where the
#: first part holds :data:`MIN_TUNE_PAIRS` of them: the grid module's docstring says why.
TUNE_EXPERIENCED = 5

#: The fewest pairs the tuning loss counts: with fewer experienced pairs in the first part, it
#: counts all of the first part's pairs (and a note says so).
MIN_TUNE_PAIRS = 200


# ----------------------------------------------------------------------------------------------
# Scores


def pair_scores(p: FloatArray, y: FloatArray) -> list[tuple[str, float, int]]:
    """Return ``(metric, value, n)`` of predictions ``p`` against outcomes ``y`` (see the module
    docstring): log loss and Brier score on every pair, pair order on the decided ones."""
    n = int(p.size)
    if n == 0:
        return [(metric, math.nan, 0) for metric in METRICS]
    q = np.clip(p, CLIP, 1.0 - CLIP)
    log_loss = float(np.mean(-(y * np.log(q) + (1.0 - y) * np.log1p(-q))))
    brier = float(np.mean((p - y) ** 2))
    decided = y != 0.5
    pd_, yd = p[decided], y[decided]
    right = np.where(pd_ == 0.5, 0.5, ((pd_ > 0.5) == (yd == 1.0)).astype(np.float64))
    order = float(right.mean()) if right.size else math.nan
    return [("log_loss", log_loss, n), ("brier", brier, n), ("pair_order", order, int(right.size))]


def calibration_curve(
    p: FloatArray, y: FloatArray, bins: int = 10, *, symmetric: bool = False
) -> pd.DataFrame:
    """Return ``bin, lo, hi, predicted, observed, n``: ``bins`` equal bins of ``p`` on [0, 1]
    (the last one closed), the mean prediction and mean outcome in each (NaN where empty).

    ``symmetric``: count every pair both ways, (p, y) for the first side and (1 - p, 1 - y) for
    the second, so that the curve does not depend on which side a log lists first (lobbysim's
    own records, for one, usually list the weaker-rated side first).
    """
    if symmetric:
        p, y = np.concatenate([p, 1.0 - p]), np.concatenate([y, 1.0 - y])
    index = np.minimum((p * bins).astype(np.int64), bins - 1)
    n = np.bincount(index, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        predicted = np.bincount(index, weights=p, minlength=bins) / n
        observed = np.bincount(index, weights=y, minlength=bins) / n
    edges = np.arange(bins + 1) / bins
    return pd.DataFrame(
        {
            "bin": np.arange(bins),
            "lo": edges[:-1],
            "hi": edges[1:],
            "predicted": predicted,
            "observed": observed,
            "n": n,
        }
    )


# ----------------------------------------------------------------------------------------------
# The whole method


@dataclass
class RaterScores:
    """What :func:`score_log` found.

    Attributes:
        scores: ``rater, part, metric, value, n`` (tidy): every rater's, and the oracle's with a
            truth, on every part of :data:`PARTS` (metrics :data:`METRICS`).
        calibration: ``rater, part, bin, lo, hi, predicted, observed, n`` on ``all`` and
            ``second`` (10 bins of predicted probability).
        grid: ``rater, setting, params, log_loss, n, seconds, chosen``: each setting tried and
            its tuning loss (the log loss on the first part's pairs the tuning counts, ``n``).
        chosen: each rater's parameters as replayed over the whole log.
        labels: each rater's name with its chosen parameters, as the terminal lines show it.
        speed: ``rater, setting, matches, seconds, matches_per_s`` of every replay.
        pairs: one row per pair of sides (``match, side_a, side_b, outcome, part,
            experienced``) and each rater's (and the oracle's) prediction in a column.
        split, first_matches, experienced: the split fraction, the matches in the first part,
            and the earlier matches every player needs for the ``*_experienced`` parts.
        matches, players, duel: the log's size, and whether every match is one player against
            one (then ``n`` counts matches).
        tuned: whether the grids were searched (else every rater ran as given).
        tuning_pairs, tune_experienced: the first part's pairs the tuning loss counted, and
            the earlier matches each of their players had (0: every pair of the first part).
        notes: what was left out or assumed (e.g. openskill not installed).
        warnings: what may mislead (matches of zero recorded length, and the length they
            are replayed at).
    """

    scores: pd.DataFrame
    calibration: pd.DataFrame
    grid: pd.DataFrame
    chosen: dict[str, dict[str, Any]]
    labels: dict[str, str]
    speed: pd.DataFrame
    pairs: pd.DataFrame
    split: float
    first_matches: int
    experienced: int
    matches: int
    players: int
    duel: bool
    tuned: bool = True
    tuning_pairs: int = 0
    tune_experienced: int = 0
    source: str = "log"
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def value(self, rater: str, part: str, metric: str) -> float:
        """Return one score (NaN if absent)."""
        rows = self.scores[
            (self.scores["rater"] == rater)
            & (self.scores["part"] == part)
            & (self.scores["metric"] == metric)
        ]
        return float(rows["value"].iloc[0]) if len(rows) else math.nan

    def count(self, rater: str, part: str, metric: str = "log_loss") -> int:
        """Return the ``n`` of one score (0 if absent)."""
        rows = self.scores[
            (self.scores["rater"] == rater)
            & (self.scores["part"] == part)
            & (self.scores["metric"] == metric)
        ]
        return int(rows["n"].iloc[0]) if len(rows) else 0


def _spec(rater: str | PluginSpec) -> PluginSpec:
    return PluginSpec(rater) if isinstance(rater, str) else rater


def _settings(spec: PluginSpec, grid: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """Return the settings to try: the grid's over the spec's parameters, a grid key the spec
    sets held at the spec's value (distinct settings only)."""
    base = dict(spec.params)
    if not grid:
        return [base]
    out: list[dict[str, Any]] = []
    for setting in grid:
        merged = {**setting, **base}
        if merged not in out:
            out.append(merged)
    return out


def _build(spec: PluginSpec, params: Mapping[str, Any]) -> Rater:
    """Return a fresh rater (no player added: each enters the replay at their first match)."""
    return RATERS.create(spec.name, params)


def _timed_replay(
    spec: PluginSpec,
    params: Mapping[str, Any],
    arrays: LogArrays,
    events: list[int],
    prior: tuple[float, float],
) -> tuple[FloatArray, float]:
    rater = _build(spec, params)
    started = time.perf_counter()
    p = replay(rater, arrays, events, prior)
    return p, time.perf_counter() - started


def score_log(
    log: MatchLog,
    raters: Iterable[str | PluginSpec] | None = None,
    *,
    truth: Truth | None = None,
    split: float = 0.5,
    tune: bool = True,
    grids: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    experienced: int = 10,
    prior: tuple[float, float] = (0.0, 4.0),
    tune_experienced: int = TUNE_EXPERIENCED,
    bins: int = 10,
    progress: Callable[[str], None] | None = None,
    step: Callable[[int, int], None] | None = None,
) -> RaterScores:
    """Score raters on a match log (the method is the module docstring's).

    Args:
        log: the match log.
        raters: rater names or specs (a scenario's ``raters.driver`` and ``raters.shadows``);
            default :data:`DEFAULT_RATERS`. A spec's parameters are held fixed; the grid tunes
            the others. openskill is skipped, with a note, where its package is not installed.
        truth: the true skills and performance variance, for the oracle's scores.
        split: the share of the matches (by start) in the first part, in (0, 1).
        tune: grid-search each rater on the first part (else replay the specs as given).
        grids: settings to try per rater name, instead of :data:`GRIDS`.
        experienced: the earlier finished matches every player of a match needs for the
            ``*_experienced`` parts.
        prior: the prior ``(mu0, var0)`` every player starts with.
        tune_experienced: the earlier finished matches every player of a first-part pair
            needs to count in the tuning loss (0: every pair of the first part; fewer than
            :data:`MIN_TUNE_PAIRS` such pairs: every pair too, with a note).
        bins: calibration bins.
        progress: called with a line as each rater's replays finish.
        step: called as ``step(done, planned)`` after each replay (a grid's settings, the
            steps past its end, each rater's whole log), ``planned`` growing as steps are added.

    Raises:
        ValueError: a split outside (0, 1), a negative ``experienced``, or a rater the
            registry does not know (openskill without its package is skipped instead).
    """
    if not 0.0 < split < 1.0:
        raise ValueError(f"split must be in (0, 1), got {split!r}")
    if experienced < 0:
        raise ValueError(f"experienced must be >= 0, got {experienced!r}")
    if tune_experienced < 0:
        raise ValueError(f"tune_experienced must be >= 0, got {tune_experienced!r}")
    specs = [_spec(r) for r in (DEFAULT_RATERS if raters is None else raters)]
    arrays = LogArrays.from_log(log)
    n_first = math.floor(split * arrays.matches)
    grids = GRIDS if grids is None else grids
    notes: list[str] = []
    warnings = [zero_length_warning(arrays)] if arrays.zero_length else []
    predictions: dict[str, FloatArray] = {}
    chosen: dict[str, dict[str, Any]] = {}
    labels: dict[str, str] = {}
    grid_rows: list[dict[str, Any]] = []
    speed_rows: list[dict[str, Any]] = []
    first_events = arrays.events_before(n_first)
    first_pairs = arrays.pair_match < n_first
    tune_pairs = first_pairs & (arrays.seen[arrays.pair_match] >= tune_experienced)
    if tune and int(tune_pairs.sum()) < min(MIN_TUNE_PAIRS, int(first_pairs.sum())):
        notes.append(
            f"tuned on every pair of the first part: {int(tune_pairs.sum()):,} of its "
            f"{int(first_pairs.sum()):,} pairs have players with {tune_experienced} or more "
            f"earlier matches, fewer than {MIN_TUNE_PAIRS}"
        )
        tune_pairs = first_pairs
    plans = [_settings(spec, grids.get(spec.name) if tune else None) for spec in specs]
    counter = _Counter(step, sum(len(p) if len(p) > 1 and n_first else 0 for p in plans))
    counter.planned += len(specs)
    for spec, settings in zip(specs, plans, strict=True):
        try:
            _build(spec, settings[0])
        except ValueError as exc:
            if spec.name == "openskill" and "not installed" in str(exc):
                notes.append(f"openskill skipped: {exc}")
                counter.planned -= 1 + (len(settings) if len(settings) > 1 and n_first else 0)
                counter.tell()
                continue
            raise
        label = spec.name
        while label in predictions:  # the same rater twice: named by its own parameters
            label = f"{label} ({params_label(spec.params) or 'again'})"
        best = settings[0]
        if tune and len(settings) > 1 and n_first > 0:
            search = _Search(spec, label, arrays, first_events, tune_pairs, prior, n_first)
            search.counter = counter
            best = search.run(settings)
            grid_rows.extend(search.rows)
            speed_rows.extend(search.speed)
            notes.extend(
                edge_notes(spec.name, label, search.tried, search.losses, best, spec.params)
            )
        p, seconds = _timed_replay(spec, best, arrays, arrays.events, prior)
        counter.done_one()
        speed_rows.append(_speed(label, params_label(best), arrays.matches, seconds))
        predictions[label] = p
        chosen[label] = dict(best)
        labels[label] = f"{spec.name} ({params_label(best)})" if best else spec.name
        for row in grid_rows:
            if row["rater"] == label:
                row["chosen"] = row["params"] == params_label(best)
        if progress is not None:
            progress(f"{label}: {arrays.matches / max(seconds, 1e-9):,.0f} matches/s")
    if truth is not None:
        predictions[ORACLE] = oracle_predictions(arrays, truth)
    if truth is not None:
        labels[ORACLE] = f"{ORACLE} (true skills, beta^2 {truth.beta2:g})"
    pair_part = np.where(first_pairs, "first", "second")
    seasoned = arrays.seen[arrays.pair_match] >= experienced
    masks = {
        "all": np.ones(arrays.pair_y.size, dtype=bool),
        "first": first_pairs,
        "second": ~first_pairs,
        "all_experienced": seasoned,
        "second_experienced": seasoned & ~first_pairs,
    }
    rows = []
    curves = []
    y = arrays.pair_y
    for name, p in predictions.items():
        for part, mask in masks.items():
            for metric, value, n in pair_scores(p[mask], y[mask]):
                rows.append({"rater": name, "part": part, "metric": metric, "value": value, "n": n})
        for part in ("all", "second"):
            curve = calibration_curve(p[masks[part]], y[masks[part]], bins, symmetric=True)
            curve.insert(0, "part", part)
            curve.insert(0, "rater", name)
            curves.append(curve)
    pairs = pd.DataFrame(
        {
            "match": arrays.pair_match,
            "side_a": arrays.pair_a - arrays.side_lo[arrays.pair_match],
            "side_b": arrays.pair_b - arrays.side_lo[arrays.pair_match],
            "outcome": y,
            "part": pair_part,
            "experienced": seasoned,
            **predictions,
        }
    )
    if not arrays.duel and arrays.matches:
        notes.append("scored on pairs of sides: a match of k sides counts k (k - 1) / 2 pairs")
    draws = int((y == 0.5).sum())
    if draws:
        notes.append(
            f"{draws:,} drawn pairs: outcome 1/2 in log loss and Brier, left out of pair order"
        )
    grid_frame = pd.DataFrame(
        grid_rows,
        columns=["rater", "setting", "params", "log_loss", "n", "seconds", "chosen"],
    )
    return RaterScores(
        scores=pd.DataFrame(rows, columns=["rater", "part", "metric", "value", "n"]),
        calibration=pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(),
        grid=grid_frame,
        chosen=chosen,
        labels=labels,
        speed=pd.DataFrame(
            speed_rows, columns=["rater", "setting", "matches", "seconds", "matches_per_s"]
        ),
        pairs=pairs,
        split=split,
        first_matches=n_first,
        experienced=experienced,
        matches=arrays.matches,
        players=arrays.players,
        duel=arrays.duel,
        tuned=tune and n_first > 0,
        tuning_pairs=int(tune_pairs.sum()),
        tune_experienced=tune_experienced if tune_pairs is not first_pairs else 0,
        source=log.source,
        notes=notes,
        warnings=warnings,
    )


def zero_length_warning(arrays: LogArrays) -> str:
    """Return the warning for the matches of zero recorded length (the module docstring of
    :mod:`lobbysim.calibration.replay` gives the rule)."""
    return (
        f"{arrays.zero_share:.1%} of the matches ({arrays.zero_length:,}) have a recorded length "
        "of 0 (rounded or missing times); the SPH Elo's update is per minute, so they are "
        f"replayed as {arrays.replay_length:.3g} minutes, the median length of the others"
    )


class _Counter:
    """The replays done and planned, told to ``step`` after each (see :func:`score_log`)."""

    def __init__(self, step: Callable[[int, int], None] | None, planned: int) -> None:
        self.step, self.done, self.planned = step, 0, planned

    def done_one(self, extra: bool = False) -> None:
        """Count one replay done (``extra``: one past the plan, a grid's extension)."""
        self.done += 1
        self.planned += int(extra)
        self.tell()

    def tell(self) -> None:
        """Call ``step`` with the replays done and planned."""
        if self.step is not None:
            self.step(self.done, max(self.planned, self.done))


class _Search:
    """A rater's grid search on the first part: each setting replayed over it and scored by log
    loss (:attr:`rows`, :attr:`speed`), the grid extended past a chosen value at its end."""

    def __init__(
        self,
        spec: PluginSpec,
        label: str,
        arrays: LogArrays,
        events: list[int],
        pairs: NDArray[np.bool_],
        prior: tuple[float, float],
        matches: int,
    ) -> None:
        self.spec, self.label, self.arrays, self.matches = spec, label, arrays, matches
        self.events, self.pairs, self.prior = events, pairs, prior
        self.tried: list[dict[str, Any]] = []
        self.losses: list[float] = []
        self.rows: list[dict[str, Any]] = []
        self.speed: list[dict[str, Any]] = []
        self.counter = _Counter(None, 0)
        self.planned = 0  # the grid's own settings (the first replays)

    def loss(self, setting: dict[str, Any]) -> float:
        """Return ``setting``'s log loss on the first part (and record it)."""
        p, seconds = _timed_replay(self.spec, setting, self.arrays, self.events, self.prior)
        ((_, loss, n), *_rest) = pair_scores(p[self.pairs], self.arrays.pair_y[self.pairs])
        self.rows.append(
            {
                "rater": self.label,
                "setting": len(self.tried),
                "params": params_label(setting),
                "log_loss": loss,
                "n": n,
                "seconds": seconds,
            }
        )
        self.tried.append(setting)
        self.losses.append(loss)
        self.counter.done_one(extra=len(self.tried) > self.planned)
        self.speed.append(_speed(self.label, params_label(setting), self.matches, seconds))
        return loss

    def valid(self, setting: dict[str, Any]) -> bool:
        """Return whether ``setting`` is within :data:`RANGES` and builds a rater."""
        ranges = RANGES.get(self.spec.name, {})
        for key, (lo, hi) in ranges.items():
            if key in setting and not lo <= setting[key] <= hi:
                return False
        try:
            _build(self.spec, setting)
        except ValueError:
            return False
        return True

    def run(self, settings: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Return the best of ``settings`` (the first on a tie), extended (:func:`extend`)."""
        self.planned = len(settings)
        losses = [self.loss(setting) for setting in settings]
        best = settings[losses.index(min(losses))]
        best, _ = extend(best, min(losses), settings, self.spec.params, self.loss, self.valid)
        return best


def _speed(rater: str, setting: str, matches: int, seconds: float) -> dict[str, Any]:
    return {
        "rater": rater,
        "setting": setting,
        "matches": matches,
        "seconds": seconds,
        "matches_per_s": matches / seconds if seconds > 0 else math.inf,
    }


def ranking(result: RaterScores, part: str = "second") -> list[tuple[str, float]]:
    """Return the raters (not the oracle) and their log loss on ``part``, best first."""
    pairs = [(name, result.value(name, part, "log_loss")) for name in result.labels]
    kept = [(name, loss) for name, loss in pairs if name != ORACLE and math.isfinite(loss)]
    return sorted(kept, key=lambda item: item[1])


def scores_text(result: RaterScores, width: int = 100) -> list[str]:
    """Return the scores as terminal lines of at most ``width`` characters: the held-out
    (second part) log loss, Brier score and pair order of each rater beside the oracle's, the
    same on experienced players, the replay speed and the notes."""
    unit = "matches" if result.duel else "pairs"
    first = next(iter(result.labels), "")
    n_second = result.count(first, "second")
    n_exp = result.count(first, "second_experienced")
    how = (
        f"tuned on the first {result.first_matches:,} matches by start (least log loss"
        + (
            f" on their {result.tuning_pairs:,} {unit} of players with "
            f"{result.tune_experienced} or more earlier matches)"
            if result.tune_experienced
            else ")"
        )
        if result.tuned
        else f"as given (not tuned); the first part is {result.first_matches:,} matches"
    )
    lines = textwrap.wrap(
        f"Raters on {result.source}: {result.matches:,} matches, {result.players:,} players; "
        f"{how}; scored on the {n_second:,} {unit} of the second part, each predicted before "
        "it was rated.",
        width,
    )
    oracle = ORACLE in result.labels

    def metrics(name: str, part: str) -> str:
        text = f"log loss {result.value(name, part, 'log_loss'):.3f}"
        if oracle and name != ORACLE:
            text += f" (oracle {result.value(ORACLE, part, 'log_loss'):.3f})"
        return (
            f"{text}, Brier {result.value(name, part, 'brier'):.3f}, "
            f"pair order {result.value(name, part, 'pair_order'):.3f}"
        )

    def line(head: str, body: str, indent: str = "") -> list[str]:
        if len(indent) + len(head) + len(body) <= width:
            return [indent + head + body]
        return [*textwrap.wrap(indent + head, width), *textwrap.wrap(indent + "  " + body, width)]

    names = [n for n in result.labels if n != ORACLE] + ([ORACLE] if oracle else [])
    for name in names:
        lines += line(f"{result.labels[name]}: ", metrics(name, "second"))
    ranked = ranking(result)
    if len(ranked) > 1:
        lines += textwrap.wrap(
            "Ranking by held-out log loss (lower is better): "
            + ", ".join(f"{k}. {name} {loss:.4f}" for k, (name, loss) in enumerate(ranked, 1)),
            width,
            subsequent_indent="  ",
        )
    if n_exp:
        lines += textwrap.wrap(
            f"Players with >= {result.experienced} earlier matches, {n_exp:,} {unit} of the "
            "second part (a rater cannot know a newcomer):",
            width,
        )
        for name in names:
            lines += line(f"{name}: ", metrics(name, "second_experienced"), "  ")
    full = result.speed[result.speed["matches"] == result.matches]
    if len(full):
        speeds = ", ".join(
            f"{row.rater} {row.matches_per_s:,.0f}" for row in full.itertuples(index=False)
        )
        lines += textwrap.wrap(f"Replay speed (matches/s): {speeds}", width)
    for warning in result.warnings:
        lines += textwrap.wrap(f"Warning: {warning}", width, subsequent_indent="  ")
    for note in result.notes:
        lines += textwrap.wrap(f"Note: {note}", width, subsequent_indent="  ")
    return lines
