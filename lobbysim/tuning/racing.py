"""A tuning study's racing: trials replicated on common seeds within the search's budget, each
next replication given to the trial with the most to gain from it.

**Common random numbers.** Replication r of every trial runs on the same seed (the scenario's
replication seeds), so two trials differ only by their settings, and comparing their means over
the same seeds is comparing their paired differences, much sharper than their separate intervals.

**The design's size** (:func:`design_size`): as many settings as the budget gives their first
rung while leaving room to replicate a third of them to ``most``.

**The prospect of a candidate** (:func:`prospects`): a trial partly run, or in a finite space
a setting not tried yet. Its missing replications are drawn from a model of each metric fitted
to every run so far (:class:`lobbysim.tuning.model.Model`: additive in the dimensions, with a
shared effect per replication seed), its own runs kept as they are; each draw is judged by the
rule that makes a trial feasible (:func:`lobbysim.tuning.trials.feasible`) and by its mean
objective against the best trial's on the same seeds. This gives the chance that it ends
feasible and better, and its expected gain where it does (constrained expected improvement).

**Racing** (:meth:`Race.chase`): while budget is left, one more replication (an untried
setting: its first rung) goes to the candidates with the largest expected gain per run still
needed (:meth:`Race.chances`), so a plausible setting already run is finished before a new one
is started; a candidate whose chance is under :data:`MIN_CHANCE` is not started or replicated
further while another has that much, and one that the budget left cannot replicate fully never
is. In a finite space the whole budget is spent: when nothing has :data:`MIN_CHANCE`, the
likeliest candidate runs (a budget left unspent finds nothing, and few runs make the model's
doubts least sure: on the development blocks of ``benchmarks/bench_tune_grid.py`` stopping
there lost hits at the tighter bound).

Why not successive halving on the objective: at a tight bound what makes a setting feasible is
mostly the spread of its replications, which one replication cannot show; halving promoted the
fairest settings whose single run kept the bound, which were the ones whose later replications
missed it (``benchmarks/bench_tune_grid.py --explain`` shows each study's runs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

from lobbysim.experiments.sweeps import Cell, SweepRun, run_key
from lobbysim.scenario import Scenario, ScenarioError
from lobbysim.tuning.design import setting_key
from lobbysim.tuning.folder import StudyRuns
from lobbysim.tuning.model import Model, features
from lobbysim.tuning.space import Space, apply
from lobbysim.tuning.trials import Trial, feasible

#: The label of a trial's runs (and of the tuned setting's in the fresh-seed evaluation).
TUNED = "tuned"


def _better(space: Space, a: float, b: float) -> bool:
    return a < b if space.minimize else a > b


#: The least chance (:func:`prospects`) a trial must have of keeping every constraint and beating
#: the best so far, once replicated ``most`` times, for racing to give it another replication
#: while another candidate has that much (in a finite space, the likeliest runs when none has).
MIN_CHANCE = 0.05

#: The Monte Carlo draws :func:`prospects` predicts a candidate's missing replications with.
DRAWS = 512


def design_size(space: Space, most: int) -> int:
    """Return how many settings the design tries (at most ``most``): as many as the budget
    gives their first rung while leaving room to replicate a third of them to ``most`` (a
    third: successive halving's usual rate, as in Hyperband); the whole budget where the first
    rung is ``most`` already. A budget of 12 with replications [1, 3] tries 7 settings at 1
    (5 runs left to race them); a budget of 36 tries every one of 16."""
    per_third = 3 * space.first + (space.most - space.first)  # three settings' share, in runs
    return max(1, min(most, 3 * space.search_budget // per_third))


def _observed(t: Trial, metric: str) -> np.ndarray:
    x = np.array(t.metric(metric), dtype=float)
    return x[np.isfinite(x)]


#: Candidates predicted at once by :func:`prospects` (bounds the draws held in memory).
CHUNK = 64


def prospects(
    space: Space,
    trials: Sequence[Trial],
    candidates: Sequence[tuple[Mapping[str, Any], Mapping[int, Mapping[str, float]]]],
    best: Trial | None,
    rng: np.random.Generator,
) -> list[tuple[float, float]]:
    """Return, per candidate (its draw and its runs so far, by replication: none for an untried
    setting), the chance that, replicated ``most`` times, it is feasible (keeps every constraint
    at the pessimistic end of its 95% interval) and better than ``best`` (its mean objective;
    without a best, feasible alone), and its expected gain: the mean over the same predictions
    of how much better than ``best`` it ends (without a best, than the worst mean objective of
    the trials) where it is feasible and better, else 0 (constrained expected improvement).

    Each metric's missing replications are predicted by :class:`lobbysim.tuning.model.Model`
    fitted to every run of ``trials`` (:data:`DRAWS` draws from ``rng``): an untried setting from
    what its neighbours along each dimension gave, a partly-run one from its own runs as well,
    each replication with what its seed did to the other settings (common random numbers)."""
    if not candidates:
        return []
    n = space.most
    t_q = float(stats.t.ppf(0.975, n - 1))
    ran = [t for t in trials if t.error is None and t.runs]
    rows_of = {t.number: features(space, t.drawn) for t in ran}
    runs = [(t, r) for t in ran for r in sorted(t.runs)]
    metrics = list(dict.fromkeys([*(c.metric for c in space.constraints), space.objective]))
    models = {
        m: Model(
            space,
            [rows_of[t.number] for t, _ in runs],
            [r for _, r in runs],
            [float(t.runs[r].get(m, math.nan)) for t, r in runs],
        )
        for m in metrics
    }
    if best is not None:
        ref = best.estimate(space.objective).mean
    else:
        means = [t.estimate(space.objective).mean for t in ran]
        means = [m for m in means if math.isfinite(m)]
        ref = (max(means) if space.minimize else min(means)) if means else math.nan
    out: list[tuple[float, float]] = []
    for lo in range(0, len(candidates), CHUNK):
        chunk = candidates[lo : lo + CHUNK]
        rows = np.array([features(space, d) for d, _ in chunk])
        ok = np.ones((DRAWS, len(chunk)), dtype=bool)
        for c in space.constraints:
            seen = [
                {r: float(v.get(c.metric, math.nan)) for r, v in got.items()} for _, got in chunk
            ]
            full = models[c.metric].complete(rows, seen, DRAWS, rng)
            sd = full.std(axis=2, ddof=1)
            end = full.mean(axis=2) + (t_q if c.op == "<=" else -t_q) * sd / math.sqrt(n)
            ok &= (end - c.bound if c.op == "<=" else c.bound - end) <= 0
        seen = [
            {r: float(v.get(space.objective, math.nan)) for r, v in got.items()} for _, got in chunk
        ]
        mean = models[space.objective].complete(rows, seen, DRAWS, rng).mean(axis=2)
        if not math.isfinite(ref):
            gain = np.zeros_like(mean)
        else:
            gain = ref - mean if space.minimize else mean - ref
        won = ok & (gain > 0) if best is not None else ok
        gain = np.maximum(gain, 0.0)
        for j in range(len(chunk)):
            out.append((float(won[:, j].mean()), float((won[:, j] * gain[:, j]).mean())))
    return out


#: The key of :func:`pooled_spread`'s spread of the objective's paired difference from the best.
PAIRED = "paired difference"
#: Added to a key of :func:`pooled_spread`: the degrees of freedom of that spread.
DOF = " dof"


class Race:
    """The study's trials and their runs, within the search's budget (see the module
    docstring): every setting gets its first rung (:meth:`run`), then :meth:`chase` gives
    replications, one more at a time, to the candidates with the best :func:`prospects`."""

    def __init__(
        self, scenario: Scenario, space: Space, seeds: Sequence[int], runs: StudyRuns
    ) -> None:
        self.scenario = scenario
        self.space = space
        self.seeds = seeds
        self.runs = runs
        self.trials: list[Trial] = []
        self.scenarios: dict[int, Scenario] = {}
        self.by_key: dict[str, Trial] = {}

    def add(self, drawn: dict[str, Any]) -> Trial:
        t = Trial(len(self.trials) + 1, drawn, self.space.values(drawn))
        try:
            self.scenarios[t.number] = apply(self.scenario, t.values)
        except ScenarioError as exc:
            t.error = "; ".join(exc.problems)
        self.trials.append(t)
        self.by_key.setdefault(setting_key(drawn), t)
        return t

    def known(self, drawn: Mapping[str, Any]) -> Trial | None:
        return self.by_key.get(setting_key(drawn))

    def tried(self) -> int:
        return len(self.by_key)

    def left(self) -> int:
        """Return the runs the budget has left."""
        return self.space.search_budget - self.runs.count

    def cost(self, batch: Sequence[Trial], upto: int) -> int:
        """Return the new distinct runs replicating ``batch`` to ``upto`` would make."""
        keys = {
            run_key(self.scenarios[t.number], self.seeds[r])
            for t in batch
            if t.error is None
            for r in range(len(t.runs), upto)
        }
        return len(keys - self.runs.keys)

    def run(self, batch: Sequence[Trial], upto: int) -> None:
        """Replicate each trial of ``batch`` to ``upto`` replications, as many as the budget
        allows (the first of the batch first)."""
        batch = [t for t in batch if t.error is None and len(t.runs) < upto]
        while batch and self.cost(batch, upto) > self.left():
            batch = batch[:-1]
        self.replicate({t.number: upto for t in batch})

    def replicate(self, upto: Mapping[int, int]) -> None:
        """Replicate trial ``number`` to ``upto[number]`` replications, every trial's runs at
        once."""
        batch = [t for t in self.trials if t.number in upto]
        if batch:
            replicate(batch, self.scenarios, upto, self.seeds, self.runs)
        for t in batch:
            if len(t.runs) >= self.space.most:
                t.promoted = True

    def chances(
        self, untried: Sequence[Mapping[str, Any]] = ()
    ) -> list[tuple[tuple[float, float], Trial | dict[str, Any]]]:
        """Return what racing may run next, the largest expected gain per run still needed
        first, each with its chance and expected gain (:func:`prospects`): the trials not at
        ``most`` replications, and the settings of ``untried`` not tried yet, whose chance is at
        least :data:`MIN_CHANCE` and which the budget left can replicate fully (a setting it
        cannot finish cannot be the answer). With ``untried`` (a finite space) and nothing at
        :data:`MIN_CHANCE`, every candidate, the likeliest first: the budget is spent."""
        best = best_trial(self.space, self.trials)
        most = self.space.most
        items: list[Trial | dict[str, Any]] = []
        for t in self.trials:
            if t.error is None and t.runs and len(t.runs) < most <= len(t.runs) + self.left():
                items.append(t)
        if most <= self.left():
            seen: set[str] = set()
            for d in untried:
                key = setting_key(d)
                if self.known(d) is None and key not in seen:
                    seen.add(key)
                    items.append(dict(d))
        if not items:
            return []
        rng = np.random.default_rng([self.space.seed, self.runs.count, len(self.trials)])
        got = prospects(
            self.space,
            self.trials,
            [(i.drawn, i.runs) if isinstance(i, Trial) else (i, {}) for i in items],
            best,
            rng,
        )
        numbered = [(p, i, n) for n, (p, i) in enumerate(zip(got, items, strict=True))]
        scored = [(p, i, n) for p, i, n in numbered if p[0] >= MIN_CHANCE]

        def need(i: Trial | dict[str, Any]) -> int:
            return most - (len(i.runs) if isinstance(i, Trial) else 0)

        scored.sort(key=lambda pin: (-pin[0][1] / need(pin[1]), -pin[0][0], pin[2]))
        if not scored and untried:  # a finite space: spend the budget, the likeliest first
            scored = sorted(numbered, key=lambda pin: (-pin[0][0], -pin[0][1], pin[2]))
        return [(p, i) for p, i, _ in scored]

    def chase(self, untried: Sequence[Mapping[str, Any]] = ()) -> None:
        """While budget is left, give one more replication to what :meth:`chances` ranks first
        (an untried setting: its first rung): one at a time while the budget left is under
        twice ``most`` per setting (each result informs the next choice), up to ``batch`` at
        once otherwise. Ends when the budget is spent, or when nothing is left to run (every
        setting of ``untried`` at ``most``; without ``untried``, no partly-run trial with
        :data:`MIN_CHANCE`)."""
        while self.left() > 0:
            ranked = self.chances(untried)
            if not ranked:
                return
            step = max(1, min(self.space.batch, self.left() // (2 * self.space.most)))
            upto: dict[int, int] = {}
            spend = 0
            for _, item in ranked:
                if len(upto) >= step:
                    break
                if isinstance(item, Trial):
                    cost, t, reps = 1, item, len(item.runs) + 1
                else:
                    cost, reps = self.space.first, self.space.first
                    if spend + self.space.most > self.left():
                        continue
                    t = self.add(item)
                    if t.error is not None:
                        continue
                if spend + cost > self.left():
                    continue
                upto[t.number] = reps
                spend += cost
            if not upto:
                return
            self.replicate(upto)


def pooled_spread(
    space: Space, trials: Sequence[Trial], best: Trial | None = None
) -> dict[str, float]:
    """Return each constraint metric's and the objective's spread between replications, pooled
    over the trials with two or more (NaN with none), and with a ``best``, the spread of the
    objective's paired difference from it (:data:`PAIRED`), pooled over the trials sharing two
    or more seeds with it."""
    out = {}
    for metric in dict.fromkeys([*(c.metric for c in space.constraints), space.objective]):
        out[metric], out[metric + DOF] = _pooled([_observed(t, metric) for t in trials])
    if best is not None:
        diffs = []
        for t in trials:
            if t.number == best.number:
                continue
            shared = sorted(set(t.runs) & set(best.runs))
            a = [t.runs[r].get(space.objective, math.nan) for r in shared]
            b = [best.runs[r].get(space.objective, math.nan) for r in shared]
            d = np.array(a, dtype=float) - np.array(b, dtype=float)
            diffs.append(d[np.isfinite(d)])
        out[PAIRED], out[PAIRED + DOF] = _pooled(diffs)
    return out


def _pooled(samples: Sequence[np.ndarray]) -> tuple[float, float]:
    """Return the spread pooled over the samples of 2 or more, and its degrees of freedom."""
    num, den = 0.0, 0
    for x in samples:
        if len(x) >= 2:
            num += float(((x - x.mean()) ** 2).sum())
            den += len(x) - 1
    return (math.sqrt(num / den) if den else math.nan), float(den)


def _spread(space: Space, t: Trial, metric: str, pooled: Mapping[str, float]) -> float:
    x = np.array(t.metric(metric), dtype=float)
    x = x[np.isfinite(x)]
    own = float(x.std(ddof=1)) if len(x) >= 2 else math.nan
    share = pooled.get(metric, math.nan)
    if math.isfinite(own) and math.isfinite(share):
        return max(own, share) if len(x) < 3 else own
    return own if math.isfinite(own) else share if math.isfinite(share) else 0.0


def expected_miss(space: Space, t: Trial, pooled: Mapping[str, float]) -> float:
    """Return the summed relative misses of the constraints at the pessimistic end of the 95%
    interval ``most`` replications would give, from the trial's means and spreads (0: kept)."""
    total = 0.0
    n = space.most
    t_q = float(stats.t.ppf(0.975, n - 1))
    for c in space.constraints:
        mean = t.estimate(c.metric).mean
        if not math.isfinite(mean):
            return math.inf
        half = t_q * _spread(space, t, c.metric, pooled) / math.sqrt(n)
        end = mean + half if c.op == "<=" else mean - half
        total += max(0.0, c.violation(end)) / max(abs(c.bound), 1e-12)
    return total


def rank(space: Space, t: Trial, pooled: Mapping[str, float]) -> tuple[bool, float, float]:
    """Return a trial's sort key: expected to keep the constraints first, then by objective
    (better first); the rest by how far they are expected to miss."""
    miss = expected_miss(space, t, pooled)
    value = t.estimate(space.objective).mean
    if not math.isfinite(value):
        value = math.inf
    elif not space.minimize:
        value = -value
    return (miss > 0, miss, value)


def replicate(
    batch: Sequence[Trial],
    scenarios: Mapping[int, Scenario],
    upto: Mapping[int, int],
    seeds: Sequence[int],
    runs: StudyRuns,
) -> None:
    """Run each trial of ``batch`` on its first ``upto[number]`` seeds (the runs it has read
    from the store) and record their metrics, or the first failure as its error."""
    planned = [
        SweepRun(
            run_key(scenarios[t.number], seeds[r]),
            Cell(t.number, t.values),
            TUNED,
            r + 1,
            seeds[r],
            scenarios[t.number],
        )
        for t in batch
        if t.error is None
        for r in range(upto[t.number])
    ]
    got = runs.metrics(planned)
    by_trial = {t.number: t for t in batch}
    for run in planned:
        trial = by_trial[run.cell.number]
        result = got[run.key]
        if isinstance(result, str):
            trial.error = f"replication {run.replication} (seed {run.seed}) failed: " + (
                result.strip().splitlines()[-1] if result.strip() else "no message"
            )
        else:
            trial.runs[run.replication] = result


def best_trial(space: Space, trials: Sequence[Trial]) -> Trial | None:
    best = None
    for t in trials:
        if len(t.runs) < space.most or not feasible(space, t):
            continue
        value = t.estimate(space.objective).mean
        if best is None or _better(space, value, best.estimate(space.objective).mean):
            best = t
    return best
