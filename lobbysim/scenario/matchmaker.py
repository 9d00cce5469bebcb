"""The matchmaker section of a scenario (:class:`MatchmakerConfig`): the policy and assignment,
the matchmaking passes, the quality threshold and the latency limits relaxing with the wait,
the focal players, no accidental rematches, an A/B switch of policy, and a rule set with its
search. The section checks its own ranges and schedules; the checks across sections are the
scenario's (:class:`lobbysim.scenario.model.Scenario`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from lobbysim.registry import did_you_mean
from lobbysim.scenario.attributes import RATING, AttributeConfig
from lobbysim.scenario.parties import PartiesConfig
from lobbysim.scenario.plugin_spec import PluginSpec
from lobbysim.scenario.rules import RuleConfig
from lobbysim.scenario.teams import TeamShape
from lobbysim.validation import check, non_negative, positive, whole

#: How FlexMatch's builder may batch tickets before building matches (``matchmaker.batching``).
BATCHINGS = ("none", "fastest_region", "largest_population", "sorted")

#: The batchings that sort the pool on ``matchmaker.batch_sort`` before cutting it into batches.
SORTED_BATCHINGS = ("largest_population", "sorted")


@dataclass(frozen=True)
class MatchmakerConfig:
    """How the matchmaker picks opponents.

    Attributes:
        policy: the opponent-selection policy (``point_estimate``, ``draw_chance``,
            ``knowledge_gradient``, ``random``, ``fifo``, the references ``uniform_random``
            and ``oracle`` (:mod:`lobbysim.policies.baselines`) or a user class). 1v1 only:
            team and free-for-all games are formed from players adjacent in rating (see
            :mod:`lobbysim.policies.groups`), under the same threshold; but ``oracle`` forms
            them adjacent in true skill, and ``uniform_random`` at random.
        assignment: ``sequential`` or ``global``, with its parameters (1v1 only).
        tick: minutes between matchmaking passes (it also wakes when a player queues).
        wake_on_arrival: run a pass as soon as a player queues.
        threshold: ``(wait_minutes, min_quality)`` steps: the quality a match must reach, relaxing
            with the longer wait of the pair.
        focal_players: if set, only these player ids choose opponents (the paper's "player 0"
            view); everybody else is only ever a candidate.
        focal_rank: instead of ids, the focal player by rank of prior mean among the players
            present at the first matchmaking pass: 1 is the highest, -1 the lowest, 25 the 25th
            (the paper's top, bottom and middle cases).
        rematch_games: no accidental rematches: two players who played each other are not
            matched again until each has played this many other games since (0: no such rule;
            None, the default: 1 with a player ``base``, where the same players meet again and
            again, and 0 without one). In team and free-for-all games it holds for any two
            players of a group the matchmaker forms (back-filled seats are not checked). The
            ``uniform_random`` policy, no matchmaking at all, ignores it.
        rematch_minutes: nor within this many minutes of the end of their game (0: no such
            rule; in team and free-for-all games, from when the later of the two left it).
        status_quo: an A/B switch: the policy in force before ``switch_at`` (the scenario's
            ``policy`` from then on), so that two runs differing only in ``policy`` share
            everything up to the switch (None: no switch).
        switch_at: when the policy switches, in minutes (>= 0 and before the horizon; default:
            the warm-up's end). Needs ``status_quo``. The metrics start at the later of the
            warm-up's end and the switch (:attr:`~lobbysim.scenario.model.Scenario.metrics_start`).
        max_latency_ms: ``(wait_minutes, ms)`` steps: the most latency a player may have to the
            game's data centre, relaxing with the player's own wait (None: no limit). Needs a
            ``world``.
        max_delta_ping_ms: ``(wait_minutes, ms)`` steps: the most latency above the player's
            best data centre (None: no limit). Needs a ``world``.
        rules: a rule set (:mod:`lobbysim.scenario.rules`; None: the ``threshold`` alone, which
            is a ``match_quality`` rule). With rules, the threshold is left at its default: a
            ``match_quality`` rule gives it.
        algorithm: how matches are searched with a rule set: ``exact`` (the matchmaker's own
            search, every rule a hard constraint), ``seed_greedy`` or ``flexmatch`` (FlexMatch's
            builder: :mod:`lobbysim.sim.flexmatch_builder`).
        batching: how ``flexmatch`` batches the tickets before building matches (FlexMatch's
            ``batchingPreference``): ``none`` (FlexMatch's ``random``), ``fastest_region`` (by
            the data centre of each ticket's lowest latency; needs a ``world``),
            ``largest_population`` (``balanced`` strategy's default: the pool sorted on the
            ``balancedAttribute``, ``batch_sort``) or ``sorted`` (the pool sorted on
            ``sortByAttributes``, ``batch_sort``). How the pool is ordered matters only once it
            is cut into batches of ``batch_size`` tickets.
        batch_sort: the attributes the pool is sorted on before it is cut into batches (with
            ``largest_population`` or ``sorted``; the first sorts, the next break its ties).
        batch_size: tickets per batch (None: every ticket in one batch, or one batch per data
            centre with ``fastest_region``). FlexMatch forms more batches as its pool grows
            past a size it does not publish: this states one. The ``none`` batching then
            deals the tickets into batches at random.
    """

    policy: PluginSpec = field(default_factory=lambda: PluginSpec("draw_chance"))
    assignment: PluginSpec = field(default_factory=lambda: PluginSpec("global"))
    tick: float = 0.25
    wake_on_arrival: bool = True
    threshold: tuple[tuple[float, float], ...] = field(
        default=((0.0, 0.0),),
        metadata={"expected": "a non-empty list of [wait_minutes, min_quality] pairs of numbers"},
    )
    focal_players: tuple[int, ...] | None = field(
        default=None, metadata={"expected": "a list of player ids (whole numbers >= 0)"}
    )
    focal_rank: int | None = None
    rematch_games: int | None = None
    rematch_minutes: float = 0.0
    status_quo: PluginSpec | None = None
    switch_at: float | None = None
    max_latency_ms: tuple[tuple[float, float], ...] | None = field(
        default=None, metadata={"expected": "a non-empty list of [wait_minutes, ms] pairs"}
    )
    max_delta_ping_ms: tuple[tuple[float, float], ...] | None = field(
        default=None, metadata={"expected": "a non-empty list of [wait_minutes, ms] pairs"}
    )
    rules: tuple[RuleConfig, ...] | None = None
    algorithm: str = "exact"
    batching: str = "none"
    batch_sort: tuple[str, ...] = field(
        default=(), metadata={"expected": "a list of attribute names"}
    )
    batch_size: int | None = None

    def __post_init__(self) -> None:
        check(
            positive("matchmaker.tick", self.tick),
            _limit_problem("matchmaker.max_latency_ms", self.max_latency_ms),
            _limit_problem("matchmaker.max_delta_ping_ms", self.max_delta_ping_ms),
            _threshold_problem(self.threshold),
            f"matchmaker.batching: expected one of {', '.join(BATCHINGS)}, got {self.batching!r}"
            + did_you_mean(str(self.batching), list(BATCHINGS))
            if self.batching not in BATCHINGS
            else None,
            None if self.batch_size is None else whole("matchmaker.batch_size", self.batch_size, 2),
            f"matchmaker.batch_sort: {self.batching} sorts the pool on the attributes of "
            "batch_sort: name at least one"
            if self.batching in SORTED_BATCHINGS and not self.batch_sort
            else None,
            "matchmaker.batch_sort: only with matchmaker.batching largest_population or "
            f"sorted (got batching {self.batching}, batch_sort {list(self.batch_sort)})"
            if self.batch_sort and self.batching not in SORTED_BATCHINGS
            else None,
            "matchmaker.focal_rank: expected a non-zero whole number (1 = highest prior mean, "
            f"-1 = lowest), got {self.focal_rank!r}"
            if self.focal_rank is not None
            and (
                isinstance(self.focal_rank, bool)
                or not isinstance(self.focal_rank, int)
                or self.focal_rank == 0
            )
            else None,
            "matchmaker.focal_rank: give focal_players or focal_rank, not both"
            if self.focal_rank is not None and self.focal_players is not None
            else None,
            "matchmaker.focal_players: expected a list of player ids (whole numbers >= 0), "
            f"got {list(self.focal_players)!r}"
            if self.focal_players is not None and min(self.focal_players, default=0) < 0
            else None,
            None
            if self.rematch_games is None
            else whole("matchmaker.rematch_games", self.rematch_games, 0),
            non_negative("matchmaker.rematch_minutes", self.rematch_minutes),
            None
            if self.switch_at is None
            else non_negative("matchmaker.switch_at", self.switch_at),
            "matchmaker.switch_at: a switch needs matchmaker.status_quo, the policy in force "
            f"before it (got switch_at {self.switch_at!r} without one)"
            if self.switch_at is not None and self.status_quo is None
            else None,
        )

    def switch_problem(self, horizon: float) -> str | None:
        """Return what is wrong with the switch's time given the run's ``horizon``, if anything.

        A switch at or after the horizon would never happen: the run would measure only the
        status quo, under the name of the new policy.
        """
        at = self.switch_at
        if at is None or not math.isfinite(at) or not math.isfinite(horizon) or at < horizon:
            return None
        return (
            f"matchmaker.switch_at: {at!r} must be before the horizon ({horizon!r}): the "
            "policy would never switch"
        )


def _limit_problem(where: str, steps: tuple[tuple[float, float], ...] | None) -> str | None:
    """Return what is wrong with a latency limit's schedule, if anything: waits from 0 up,
    limits in ms that are positive and do not tighten as players wait."""
    if steps is None:
        return None
    shown = [list(step) for step in steps]
    waits = [w for w, _ in steps]
    limits = [ms for _, ms in steps]
    if not steps:
        return f"{where}: expected a non-empty list of [wait_minutes, ms] pairs, got []"
    if not all(math.isfinite(w) for w in waits) or any(math.isnan(ms) for ms in limits):
        return f"{where}: expected numbers (a limit may be .inf), got {shown}"
    if waits[0] != 0.0:
        return f"{where}: the first step must start at wait 0, got {shown}"
    if any(b <= a for a, b in itertools.pairwise(waits)):
        return f"{where}: the waits must increase from step to step, got {shown}"
    if any(ms <= 0 for ms in limits):
        return f"{where}: a limit is a number of ms > 0, got {shown}"
    if any(b < a for a, b in itertools.pairwise(limits)):
        return f"{where}: a limit relaxes as players wait (it may not fall), got {shown}"
    return None


def _threshold_problem(steps: tuple[tuple[float, float], ...]) -> str | None:
    """Return what is wrong with a threshold schedule, if anything."""
    where = "matchmaker.threshold"
    shown = [list(step) for step in steps]
    waits = [w for w, _ in steps]
    if not steps:
        return f"{where}: expected a non-empty list of [wait_minutes, min_quality] pairs, got []"
    if not all(math.isfinite(w) and math.isfinite(q) for w, q in steps):
        return f"{where}: expected finite numbers, got {shown}"
    if waits[0] != 0.0:
        return f"{where}: the first step must start at wait 0, got {shown}"
    if any(b <= a for a, b in itertools.pairwise(waits)):
        return f"{where}: the waits must increase from step to step, got {shown}"
    bad = [q for _, q in steps if not 0.0 <= q <= 1.0]
    if bad:
        return f"{where}: min_quality must be in [0, 1], got {bad[0]!r} in {shown}"
    return None


def batch_problems(
    mm: MatchmakerConfig,
    attributes: Mapping[str, AttributeConfig],
    shape: TeamShape | None,
    parties: PartiesConfig | None,
) -> list[str]:
    """Return what is wrong with FlexMatch's batches given the rest of the scenario: the
    attribute ``largest_population`` balances on must be a number; once the pool is cut into
    batches (``batch_size``), every attribute it sorts on must be bound (``rating`` is built
    in), and a batch must be able to hold a match (the game's ``shape``: None for 1v1; its
    tickets at most the largest of the ``parties``)."""
    least = 2 if shape is None else shape.least_ever
    largest_party = max((int(n) for n, _ in parties.sizes), default=1) if parties else 1
    problems = []
    if mm.batching == "largest_population" and mm.batch_sort:
        first = attributes.get(mm.batch_sort[0])
        if first is not None and first.type != "number":
            problems.append(
                "matchmaker.batch_sort: largest_population sorts on the balancing attribute, a "
                f"number; {mm.batch_sort[0]!r} is a {first.type} attribute"
            )
    if mm.batch_size is None:
        return problems
    if mm.batch_size * largest_party < least:
        problems.append(
            f"matchmaker.batch_size: a batch of {mm.batch_size} tickets"
            + (f" (of at most {largest_party} players)" if largest_party > 1 else "")
            + f" cannot hold a match of {least} players; give at least "
            f"{-(-least // largest_party)}"
        )
    for name in mm.batch_sort:
        config = attributes.get(name)
        if name == RATING or (config is not None and config.type in ("number", "string")):
            continue
        problems.append(
            f"matchmaker.batch_sort: {name!r} is not a bound number or string attribute; bind "
            f"it (attributes.{name}, or matchmaker.rules.attributes.{name} for a FlexMatch "
            "file) to sort the pool on it"
            if config is None
            else f"matchmaker.batch_sort: {name!r} is a {config.type} attribute; the pool sorts "
            "on a number or a string"
        )
    return problems
