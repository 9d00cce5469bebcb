"""A model of a metric over a study's space, fitted to every run so far: what racing and the
choice of the next setting predict untried and partly-run settings with.

**The model.** A run's value of a metric is additive in the space's dimensions, plus an effect of
its replication seed, plus noise::

    value(setting, replication r) = mean + sum over dimensions of effect(level) + seed(r) + noise

* an ordered dimension (``levels``, a whole-number or stepped range of at most
  :data:`MAX_STEPS_ORDERED` values) has one step between each two neighbouring values, so the
  effect of a level is the sum of the steps up to it (neighbouring levels are alike a priori,
  distant ones may differ more); a continuous range, or one with more values, has
  :data:`RAMPS` such steps over its range (scaled to [0, 1], on its log scale where it has one);
  an unordered ``choices`` dimension has one effect per choice;
* ``seed(r)``: every setting's replication r runs on the same seed (common random numbers), so
  what that seed does to every setting alike is estimated once and shared: an untried setting's
  replication r is predicted with it, the paired comparison the study makes;
* each step, choice and seed effect has a normal prior (their spreads ``tau`` and ``seed``), the
  noise its spread ``noise``; the mean a flat one.

The three spreads are not fixed: the posterior is averaged over a grid of them
(:data:`FACTORS` times the spread of the values seen), each weighted by how well it explains the
runs (its marginal likelihood), so before any setting has two replications the noise is not
taken as known (a spread that replications later show is small then weighs most).

**Predictions** (:meth:`Model.complete`): for each candidate, :data:`DRAWS` draws of its
``most`` replications, its runs so far as they are and the missing ones drawn from the
posterior (the grid point, the effects, the noise), by a Generator the caller seeds: what the
study's rule (:func:`lobbysim.tuning.trials.feasible`) and its objective will make of them once
it is replicated fully (:func:`lobbysim.tuning.racing.prospects`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lobbysim.tuning.design import setting_key
from lobbysim.tuning.dimensions import Choices, Range
from lobbysim.tuning.space import Space

#: An ordered dimension with at most this many values has one step between each two.
MAX_STEPS_ORDERED = 12
#: The steps of a continuous range (or one with more values): ramps over equal parts of it.
RAMPS = 4
#: The grid of each prior spread (effects, seeds, noise), as multiples of the values' spread. It
#: reaches 10: after a few runs the values' spread can be small by chance (two similar settings),
#: and a grid ending at 3 then all but ruled out effects a step of the space can have (on the
#: development blocks of ``benchmarks/bench_tune_grid.py``, ending at 10 found the grid's best
#: more often at both bounds; dropping 0.01 instead lost hits at the tighter bound).
FACTORS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
#: The mean's prior spread, as a multiple of the values' spread (flat, in effect).
FLAT = 100.0


def _index(values: Sequence[Any], value: Any) -> int:
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        for i, v in enumerate(values):  # a number or a word: the same type, the same value
            if type(v) is type(value) and v == value:
                return i
    key = setting_key({"v": value})
    for i, v in enumerate(values):
        if setting_key({"v": v}) == key:
            return i
    return min(range(len(values)), key=lambda i: abs(float(values[i]) - float(value)))


def features(space: Space, drawn: Mapping[str, Any]) -> np.ndarray:
    """Return a setting's row of the model's design matrix (without the mean and seeds): each
    dimension's steps (1 where the setting is at or past the step), ramps or choice."""
    out: list[float] = []
    for name, dim in space.dimensions().items():
        value = drawn[name]
        options = dim.values if isinstance(dim, Choices) else _allowed(dim)
        if isinstance(dim, Choices) and not dim.ordered:
            i = _index(dim.values, value)
            out.extend(1.0 if j == i else 0.0 for j in range(len(dim.values)))
        elif options is not None and len(options) <= MAX_STEPS_ORDERED:
            i = _index(options, value)
            out.extend(1.0 if i >= k else 0.0 for k in range(1, len(options)))
        else:
            if isinstance(dim, Choices):  # levels beyond the steps' limit: their ranks
                u = _index(dim.values, value) / max(1, len(dim.values) - 1)
            elif dim.log:
                u = math.log(float(value) / dim.low) / math.log(dim.high / dim.low)
            else:
                u = (float(value) - dim.low) / (dim.high - dim.low)
            out.extend(min(1.0, max(0.0, (u - k / RAMPS) * RAMPS)) for k in range(RAMPS))
    return np.array(out, dtype=float)


class Model:
    """The model of one metric (see the module docstring), fitted to the runs given.

    Args:
        space: the study's space (its dimensions and ``most``).
        rows: each run's setting features (:func:`features`), one row per run.
        replications: each run's replication (1-based; its seed).
        values: each run's value of the metric (non-finite ones are left out).
    """

    def __init__(
        self,
        space: Space,
        rows: Sequence[np.ndarray],
        replications: Sequence[int],
        values: Sequence[float],
    ) -> None:
        self.most = space.most
        y = np.asarray(values, dtype=float)
        keep = np.isfinite(y)
        self.width = len(features(space, {n: _first(d) for n, d in space.dimensions().items()}))
        x = np.zeros((int(keep.sum()), 1 + self.width + self.most))
        for i, (row, r) in enumerate(
            (row, r) for row, r, k in zip(rows, replications, keep, strict=True) if k
        ):
            x[i, 0] = 1.0
            x[i, 1 : 1 + self.width] = row
            x[i, 1 + self.width + r - 1] = 1.0
        y = y[keep]
        self.n = len(y)
        self.center = float(y.mean()) if self.n else 0.0
        spread = float(y.std()) if self.n >= 2 else 0.0
        if not spread > 0:
            spread = 0.1 * abs(self.center) if self.center else 1.0
        self.scale = spread
        self.fits: list[tuple[float, np.ndarray, np.ndarray, float]] = []
        logs: list[float] = []
        yc = y - self.center
        for tau in FACTORS:
            for seed in FACTORS:
                for noise in FACTORS:
                    prior = np.concatenate(
                        [
                            [(FLAT * spread) ** 2],
                            np.full(self.width, (tau * spread) ** 2),
                            np.full(self.most, (seed * spread) ** 2),
                        ]
                    )
                    s2 = (noise * spread) ** 2
                    a = x.T @ x / s2 + np.diag(1.0 / prior)
                    chol = np.linalg.cholesky(a)
                    rhs = x.T @ yc / s2
                    mean = np.linalg.solve(a, rhs)
                    quad = float(yc @ yc / s2 - rhs @ mean)
                    logdet = (
                        2 * float(np.log(np.diag(chol)).sum())
                        + float(np.log(prior).sum())
                        + self.n * math.log(s2)
                    )
                    logs.append(-0.5 * (quad + logdet))
                    self.fits.append((math.sqrt(s2), mean, chol, float(noise)))
        w = np.exp(np.array(logs) - max(logs))
        self.weights = w / w.sum()
        self._drawn: tuple[np.ndarray, np.ndarray] | None = None

    def complete(
        self,
        rows: np.ndarray,
        observed: Sequence[Mapping[int, float]],
        draws: int,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Return ``draws`` draws of each candidate's ``most`` replications (shape
        draws x candidates x most): its observed ones (replication -> value) as they are, the
        others drawn from the posterior (see the module docstring). The posterior's draws (the
        grid point, the effects) are made on the first call and shared by later ones (candidates
        predicted in parts: the same draws, only the noise new)."""
        if self._drawn is None or len(self._drawn[1]) != draws:
            k = len(self.fits)
            picks = rng.choice(k, size=draws, p=self.weights)
            coef = np.empty((draws, 1 + self.width + self.most))
            sigma = np.empty(draws)
            for j in np.unique(picks):
                at = np.flatnonzero(picks == j)
                s, mean, chol, _ = self.fits[j]
                z = rng.standard_normal((len(at), len(mean)))
                # A = L L^T; the posterior's covariance is A^-1: mean + L^-T z
                coef[at] = mean + np.linalg.solve(chol.T, z.T).T
                sigma[at] = s
            self._drawn = (coef, sigma)
        coef, sigma = self._drawn
        rows = np.atleast_2d(rows)
        settings = coef[:, :1] + coef[:, 1 : 1 + self.width] @ rows.T  # draws x candidates
        seeds = coef[:, 1 + self.width :]  # draws x most
        noise = rng.standard_normal((draws, len(rows), self.most)) * sigma[:, None, None]
        out = self.center + settings[:, :, None] + seeds[:, None, :] + noise
        for c, obs in enumerate(observed):
            for r, v in obs.items():
                if 1 <= r <= self.most and math.isfinite(v):
                    out[:, c, r - 1] = v
        return out


@functools.lru_cache(maxsize=256)
def _allowed(dim: Range) -> tuple[float | int, ...] | None:
    """Return a range's allowed values (None: continuous), worked out once."""
    return dim.values()


def _first(dim: Any) -> Any:
    if isinstance(dim, Choices):
        return dim.values[0]
    options = dim.values()
    return options[0] if options is not None else dim.low
