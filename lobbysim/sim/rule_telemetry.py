"""The rules' telemetry: at which expansion step each game formed, and whether it needed to.

:class:`RuleTelemetry` is kept by the rule pass (:class:`~lobbysim.sim.rule_pass.RulePass`), which
notes every game it forms (back-fills included) from the metrics' start. Per rule, the metrics
(docs/model.md, section 10):

* ``rule_rejected_share@<rule>``: of the candidates turned down, the share this rule turned down
  first;
* ``rule_relaxed_share@<rule>``: the share of games formed with the rule's clock past its first
  step (a later limit was in force);
* ``rule_needed_share@<rule>``: the share of games that needed a relaxed limit: they would have
  broken the rule's first limit (of the games whose players the pass could show; a 1v1 game of
  the exact search, formed without a view of its pool, is not counted in it). A rule whose
  relaxed share is high and needed share low is relaxed by the clock, not by the matches;
* ``rule_step_mean@<rule>``; per step k, ``rule_games_share@<rule>@step<k>`` and
  ``rule_queue_time@<rule>@step<k>`` (the mean wait of those games' players).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from lobbysim.sim.entities import FloatArray
from lobbysim.sim.rules import RuleSet, View


class RuleTelemetry:
    """The tallies of :mod:`lobbysim.sim.rule_telemetry` for a rule set.

    Args:
        rule_set: the rule set (its rejections are counted from the metrics' start).
        start: the metrics' start, minutes.
    """

    def __init__(self, rule_set: RuleSet, start: float) -> None:
        self.rule_set, self._start = rule_set, start
        rules = rule_set.rules
        self._steps = [np.zeros(r.steps) for r in rules]  # games formed at each step
        self._waits = [np.zeros(r.steps) for r in rules]  # their players' waits, summed
        self._players = [np.zeros(r.steps) for r in rules]
        self._needed = np.zeros(len(rules))  # games that needed a relaxed limit
        self._seen = 0  # games whose need was checked (every rule's, at once)
        self._counted = [0] * len(rules)  # rejections at the metrics' start
        self._started = False

    def formed(
        self,
        waited: FloatArray,
        tickets: Sequence[Sequence[int]],
        now: float,
        view: View | None = None,
        teams: Sequence[int] | None = None,
    ) -> None:
        """Note a game formed of ``tickets`` now (``waited``: the pool's waits): each rule's
        step, its players' waits, and, given the pass's ``view`` (and each ticket's team),
        whether each rule past its first step needed it."""
        if now < self._start:
            return
        if not self._started:  # rejections count from the metrics' start
            self._started = True
            self._counted = list(self.rule_set.rejections)
        players = [p for t in tickets for p in t]
        wait = float(waited[players].sum())
        steps = self.rule_set.steps(waited, tickets)
        for k, step in enumerate(steps):
            self._steps[k][step] += 1
            self._waits[k][step] += wait
            self._players[k][step] += len(players)
        if view is None:
            return
        self._seen += 1
        rules = self.rule_set
        for k, step in enumerate(steps):
            rule = rules.rules[k]
            if step == 0 or k in rules.children:
                continue
            first = [rule.limit_at(0.0)] * len(tickets)
            if not rules.holds(rule, first, view, tickets, teams):
                self._needed[k] += 1

    @property
    def matches_noted(self) -> int:
        """The matches :meth:`formed` has noted since the metrics' start (back-fills too)."""
        return int(self._steps[0].sum()) if self._steps else 0

    def metrics(self) -> dict[str, float]:
        """Return the rules' telemetry (see the module docstring)."""
        out: dict[str, float] = {}
        rules = self.rule_set.rules
        rejected = [r - c for r, c in zip(self.rule_set.rejections, self._counted, strict=True)]
        total = sum(rejected) if self._started else 0
        for k, rule in enumerate(rules):
            name = rule.name
            games = self._steps[k]
            n = games.sum()
            out[f"rule_rejected_share@{name}"] = rejected[k] / total if total else math.nan
            out[f"rule_relaxed_share@{name}"] = float(games[1:].sum() / n) if n else math.nan
            out[f"rule_needed_share@{name}"] = (
                float(self._needed[k] / self._seen) if self._seen else math.nan
            )
            out[f"rule_step_mean@{name}"] = (
                float((games * np.arange(games.size)).sum() / n) if n else math.nan
            )
            for step in range(games.size):
                out[f"rule_games_share@{name}@step{step}"] = (
                    float(games[step] / n) if n else math.nan
                )
                players = self._players[k][step]
                out[f"rule_queue_time@{name}@step{step}"] = (
                    float(self._waits[k][step] / players) if players else math.nan
                )
        return out
