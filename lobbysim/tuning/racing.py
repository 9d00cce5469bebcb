"""A tuning study's racing: trials replicated on common seeds within the search's budget,
ranked by what they are expected to keep and by paired differences, and successive halving.

**Common random numbers.** Replication r of every trial runs on the same seed (the scenario's
replication seeds), so two trials differ only by their settings, and comparing their means over
the same seeds is comparing their paired differences, much sharper than their separate intervals.

**Ranking** (:func:`rank`): first the trials expected to keep every constraint at the
pessimistic end of the 95% interval that ``most`` replications would give (their own spread
between replications, or the spread pooled over every trial while they have too few), by mean
objective; then the rest, by how far they are expected to miss.

**Successive halving** (:meth:`Race.halve`): every setting of the design gets ``first``
replications; the best-ranked half go on to the next rung (double the replications, at least
one more), and so on to ``most``; a budget too small for that lets a third or a quarter (at
least 2) go straight from ``first`` to ``most`` instead, whichever races the most settings
(:func:`plan_halving`).

**Racing on** (:meth:`Race.extend`): while budget is left, the best-ranked trials that may still
beat the best so far get their next rung: those whose optimistic interval end keeps every
constraint and whose paired difference from the best over their shared seeds leaves them a
chance of being better (:func:`ahead`: the better end of the difference's 50% interval,
:data:`RACE_CONFIDENCE`, on the better side of 0; with one shared seed, better on it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from lobbysim.experiments.sweeps import Cell, SweepRun, run_key
from lobbysim.scenario import Scenario, ScenarioError
from lobbysim.tuning.design import setting_key
from lobbysim.tuning.folder import StudyRuns
from lobbysim.tuning.space import Space, apply
from lobbysim.tuning.trials import Trial, feasible

#: The label of a trial's runs (and of the tuned setting's in the fresh-seed evaluation).
TUNED = "tuned"


def _better(space: Space, a: float, b: float) -> bool:
    return a < b if space.minimize else a > b


#: The two-sided level of the racing interval: a candidate is promoted while the better end of
#: the 50% interval of its paired difference from its rival (the mean less one quartile of the
#: t distribution's spread) is on the better side of 0. With the 2 or 3 replications of a first
#: rung a 95% interval would promote nearly everything; the final answer does not rest on
#: this choice (it is measured on fresh seeds).
RACE_CONFIDENCE = 0.5


def may_beat(space: Space, trial: Trial, best: Trial) -> bool:
    """Whether the paired difference from ``best`` over shared seeds leaves it a chance of being
    better (:data:`RACE_CONFIDENCE`)."""
    shared = sorted(set(trial.runs) & set(best.runs))
    a = np.array([trial.runs[r].get(space.objective, math.nan) for r in shared], dtype=float)
    b = np.array([best.runs[r].get(space.objective, math.nan) for r in shared], dtype=float)
    d = (a - b) if space.minimize else (b - a)  # positive: worse than the rival
    d = d[np.isfinite(d)]
    if len(d) < 2:
        return False
    half = stats.t.ppf(0.5 + RACE_CONFIDENCE / 2, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    return bool(d.mean() - half < 0)


@dataclass(frozen=True)
class Halving:
    """A successive halving: ``size`` settings at ``rungs[0]`` replications, and at each next
    rung the best-ranked 1 in ``eta`` of them (at least 2) with that rung's replications."""

    rungs: tuple[int, ...]
    eta: int
    size: int

    def survivors(self, n: int) -> int:
        """Return how many of ``n`` settings go on to the next rung."""
        return min(n, max(2, math.ceil(n / self.eta)))

    def cost(self, n: int) -> int:
        """Return the runs the halving of ``n`` settings makes."""
        total, previous = 0, 0
        for r in self.rungs:
            total += n * (r - previous)
            previous = r
            n = self.survivors(n)
        return total


def rungs_of(space: Space, doubling: bool = True) -> tuple[int, ...]:
    """Return the replications of the rungs from ``first`` to ``most``: doubling (at least one
    more each rung), or straight from ``first`` to ``most``."""
    if not doubling:
        return (space.first, space.most) if space.first < space.most else (space.most,)
    out = [space.first]
    while out[-1] < space.most:
        out.append(min(space.most, max(out[-1] + 1, 2 * out[-1])))
    return tuple(out)


#: The halvings a study chooses among, gentlest first: (doubling rungs, eta).
SCHEMES = ((True, 2), (False, 2), (False, 3), (False, 4))


def plan_halving(space: Space, most: int) -> Halving:
    """Return the halving that races the most settings (at most ``most``) within the budget:
    of :data:`SCHEMES`, the one whose design is the largest, the gentlest among equals (a
    budget of 12 with replications [1, 3] races 8 settings at 1 and the best 2 to 3; a budget
    of 36 races 16 at 1, 8 to 2 and 4 to 3)."""
    best: Halving | None = None
    for doubling, eta in SCHEMES:
        plan = Halving(rungs_of(space, doubling), eta, max(1, most))
        n = plan.size
        while n > 1 and plan.cost(n) > space.search_budget:
            n -= 1
        if best is None or n > best.size:
            best = Halving(plan.rungs, eta, n)
    assert best is not None
    return best


class Race:
    """The study's trials and their runs, within the search's budget.

    Trials are ranked by :func:`rank`: first those expected to keep every constraint at the
    pessimistic end of its interval once replicated ``most`` times (their own spread, or the
    spread pooled over every trial where they have one replication), by objective; then the
    rest, by how far they miss. Replication r of every trial runs on the same seed, so ranking by
    means over the same seeds is ranking by paired differences."""

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
        """Replicate each trial of ``batch`` to ``upto`` replications."""
        todo = [t for t in batch if t.error is None and len(t.runs) < upto]
        if todo:
            replicate(todo, self.scenarios, range(upto), self.seeds, self.runs)
        for t in batch:
            if len(t.runs) >= self.space.most:
                t.promoted = True

    def halve(self, batch: list[Trial], plan: Halving) -> None:
        """Successive halving: every trial of ``batch`` to the first rung, then the best-ranked
        (:func:`rank`) to each next rung, as far as the budget allows."""
        for k, r in enumerate(plan.rungs):
            batch = [t for t in batch if t.error is None]
            if k > 0:
                pooled = pooled_spread(self.space, self.trials)
                batch = sorted(batch, key=lambda t: rank(self.space, t, pooled))
                batch = batch[: plan.survivors(len(batch))]
            while batch and self.cost(batch, r) > self.left():
                batch = batch[:-1]
            if not batch:
                return
            self.run(batch, r)

    def extend(self) -> None:
        """Race on: while the budget allows, give the next rung to the best-ranked trials that
        may still beat the best so far on their paired differences (or, before there is a
        best, that may keep the constraints)."""
        rungs = rungs_of(self.space)
        while self.left() > 0:
            best = best_trial(self.space, self.trials)
            pooled = pooled_spread(self.space, self.trials)
            open_ = [
                t
                for t in self.trials
                if t.error is None
                and t.runs
                and len(t.runs) < self.space.most
                and may_keep(self.space, t, pooled)
                and expected_miss(self.space, t, pooled) <= 0
                and (best is None or ahead(self.space, t, best))
            ]
            if not open_:
                return
            open_.sort(key=lambda t: rank(self.space, t, pooled))
            batch = open_[: self.space.batch]
            upto = {t.number: next(r for r in rungs if r > len(t.runs)) for t in batch}
            chosen = []
            spent = 0
            for t in batch:
                extra = self.cost([t], upto[t.number])
                if spent + extra <= self.left():
                    chosen.append(t)
                    spent += extra
            if not chosen:
                return
            for t in chosen:
                self.run([t], upto[t.number])


def pooled_spread(space: Space, trials: Sequence[Trial]) -> dict[str, float]:
    """Return each constraint metric's spread between replications, pooled over the trials
    with two or more (NaN with none)."""
    out = {}
    for c in space.constraints:
        num, den = 0.0, 0
        for t in trials:
            x = np.array(t.metric(c.metric), dtype=float)
            x = x[np.isfinite(x)]
            if len(x) >= 2:
                num += float(((x - x.mean()) ** 2).sum())
                den += len(x) - 1
        out[c.metric] = math.sqrt(num / den) if den else math.nan
    return out


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


def may_keep(space: Space, t: Trial, pooled: Mapping[str, float]) -> bool:
    """Whether the trial may keep every constraint: at the optimistic end of its 95% interval
    (its own spread, or the pooled one while it has one replication)."""
    for c in space.constraints:
        e = t.estimate(c.metric)
        if not math.isfinite(e.mean):
            return False
        if e.n >= 2:
            end = e.low if c.op == "<=" else e.high
        else:
            share = pooled.get(c.metric, math.nan)
            if not math.isfinite(share):
                continue
            half = float(stats.t.ppf(0.975, max(1, space.most - 1))) * share
            end = e.mean - half if c.op == "<=" else e.mean + half
        if c.violation(end) > 0:
            return False
    return True


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


def ahead(space: Space, trial: Trial, best: Trial) -> bool:
    """Whether the trial may beat ``best``: on their shared seeds its paired difference leaves
    it a chance (:func:`_may_beat`; with one shared seed, it was better there)."""
    shared = sorted(set(trial.runs) & set(best.runs))
    if trial.number == best.number:
        return False
    if len(shared) >= 2:
        return may_beat(space, trial, best)
    if not shared:
        return True
    r = shared[0]
    a = trial.runs[r].get(space.objective, math.nan)
    b = best.runs[r].get(space.objective, math.nan)
    return bool(a < b) if space.minimize else bool(a > b)


def replicate(
    batch: Sequence[Trial],
    scenarios: Mapping[int, Scenario],
    replications: range,
    seeds: Sequence[int],
    runs: StudyRuns,
) -> None:
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
        for r in replications
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
