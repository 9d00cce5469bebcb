"""The plug-ins of a scenario, built once, and the fast plan they allow.

:class:`Components` builds every plug-in a scenario names (the arrival model, the policy and the
status quo with their capability flags, the assignment, the threshold, the raters, the player
base's visit and retention models) and checks what can be checked without a run: a policy that
needs belief variances from a driving rater that keeps none, an engagement policy without a
retention model, a capability declared with something other than True or False. A run
(:class:`~lobbysim.sim.lobby.LobbySimulation`) and ``lobbysim validate`` build them the same way;
validation stops there, without building a lobby. :meth:`Components.plan` decides the run's
:class:`~lobbysim.sim.fast.plan.FastPlan`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import simpy

from lobbysim.players.arrivals import ARRIVALS, ArrivalModel
from lobbysim.players.latency import LATENCY, LatencyModel
from lobbysim.players.population import Population
from lobbysim.players.retention import RETENTION, RetentionModel
from lobbysim.players.visits import VISITS, VisitModel
from lobbysim.policies import POLICIES, OpponentPolicy, pairing_of
from lobbysim.policies.assignment import ASSIGNMENTS, Assignment
from lobbysim.policies.thresholds import ThresholdSchedule
from lobbysim.raters import Rater
from lobbysim.raters.base import declares, rater_plugin
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario
from lobbysim.scenario.plugins import build_plugin, build_raters
from lobbysim.sim.clock import Clock
from lobbysim.sim.fast.plan import FastPlan
from lobbysim.sim.games import Games
from lobbysim.sim.pairing import InForce, in_force, rematch_games, switch_time
from lobbysim.sim.parties import Parties
from lobbysim.sim.player_base import PlayerBase
from lobbysim.sim.rematch import RematchRule
from lobbysim.sim.rule_pass import RulePass, rules_threshold
from lobbysim.sim.rules import Rule
from lobbysim.sim.seat_rules import SeatRules
from lobbysim.sim.sessions import Lobby
from lobbysim.sim.world import LatencyLimit, World
from lobbysim.streams import Streams


@dataclass
class Components:
    """The built plug-ins of one run of a scenario (see the module docstring).

    Attributes:
        arrivals: the arrival model of guests.
        policy, status_quo: the policy and the status quo (None: no switch), with their flags.
        assignment, threshold: how 1v1 pools are paired, and the quality threshold.
        raters: ``(name, rater)`` of the driving rater then the shadows.
        population: the population model.
        visits, retention: the player base's visit and retention models (None: no base, or
            no retention model).
        latency: the world's latency model (None: no world).
        switch_at: when the policy takes over from the status quo (infinity: never).
        rematch_games, rematch_minutes: games and minutes apart the rematch rule asks for
            (both 0: no rule).
    """

    arrivals: ArrivalModel
    policy: InForce
    status_quo: InForce | None
    assignment: Assignment
    threshold: ThresholdSchedule
    raters: list[tuple[str, Rater]]
    population: Population
    visits: VisitModel | None
    retention: RetentionModel | None
    latency: LatencyModel | None
    switch_at: float
    rematch_games: int
    rematch_minutes: float

    @classmethod
    def build(cls, scenario: Scenario) -> Components:
        """Build the plug-ins of ``scenario``.

        Raises:
            PluginError: a plug-in cannot be built or declares a capability wrongly; the policy
                (or the status quo) needs belief variances the driving rater does not keep; an
                engagement policy without a retention model or outside 1v1 games. The message
                names the scenario field.
        """
        mm = scenario.matchmaker
        arrivals: ArrivalModel = build_plugin(ARRIVALS, scenario.arrivals, "arrivals")
        policy: OpponentPolicy = build_plugin(POLICIES, mm.policy, "matchmaker.policy")
        status_quo: OpponentPolicy | None = (
            None
            if mm.status_quo is None
            else build_plugin(POLICIES, mm.status_quo, "matchmaker.status_quo")
        )
        assignment: Assignment = build_plugin(ASSIGNMENTS, mm.assignment, "matchmaker.assignment")
        raters = build_raters(scenario)
        driver = raters[0]
        for where, spec, chosen in (
            ("matchmaker.policy", mm.policy, policy),
            ("matchmaker.status_quo", mm.status_quo, status_quo),
        ):
            if spec is None or chosen is None:
                continue
            if chosen.needs_variance and not driver.has_variance:
                raise PluginError(
                    f"{where}: '{spec.name}' needs belief variances, but the driving "
                    f"rater '{scenario.raters.driver.name}' has none"
                )
        visits = retention = None
        if scenario.base is not None:
            visits = build_plugin(VISITS, scenario.base.visits, "base.visits")
            spec = scenario.base.retention
            retention = None if spec is None else build_plugin(RETENTION, spec, "base.retention")
        _check_engagement(scenario, retention is not None)
        latency = None
        if scenario.world is not None:
            world = scenario.world
            latency = build_plugin(LATENCY, world.latency, "world.latency")
            check = getattr(latency, "check", None)
            if callable(check):
                problems = check(world.region_names, world.data_centres)
                if problems:
                    raise PluginError("\n".join(problems))
        sq_name = None if mm.status_quo is None else mm.status_quo.name
        built = cls(
            arrivals=arrivals,
            policy=in_force(policy, mm.policy.name, "matchmaker.policy"),
            status_quo=(
                None
                if status_quo is None or sq_name is None
                else in_force(status_quo, sq_name, "matchmaker.status_quo")
            ),
            assignment=assignment,
            threshold=(
                ThresholdSchedule(mm.threshold) if mm.rules is None else rules_threshold(mm.rules)
            ),
            raters=[
                (spec.name, rater)
                for spec, rater in zip(
                    [scenario.raters.driver, *scenario.raters.shadows], raters, strict=True
                )
            ],
            population=Population.from_params(scenario.population),
            visits=visits,
            retention=retention,
            latency=latency,
            switch_at=switch_time(mm, scenario.warmup),
            rematch_games=rematch_games(mm, scenario.base is not None),
            rematch_minutes=mm.rematch_minutes,
        )
        built._check_declarations(scenario)
        return built

    def _check_declarations(self, scenario: Scenario) -> None:
        """Refuse a capability declared with something other than True or False."""
        mm = scenario.matchmaker
        checks: list[tuple[str, str, object, str]] = [
            ("matchmaker.assignment", mm.assignment.name, self.assignment, "exact_small_pools"),
            *[
                ("raters.driver", scenario.raters.driver.name, self.driver, flag)
                for flag in ("float_beliefs", "float_means", "outcome_only")
            ],
        ]
        for p in (self.policy, self.status_quo):
            if p is not None:
                checks.append((p.field, p.name, p.policy, "scores_match_quality"))
        for field_name, name, plugin, flag in checks:
            try:
                declares(plugin, flag)
            except ValueError as exc:
                raise PluginError(f"{field_name}: '{name}': {exc}") from None

    @property
    def driver(self) -> Rater:
        """The driving rater."""
        return self.raters[0][1]

    @property
    def has_rematch_rule(self) -> bool:
        """Whether a rematch rule bars pairs (``matchmaker.rematch_games`` or ``_minutes``)."""
        return self.rematch_games > 0 or self.rematch_minutes > 0

    def rematch_rule(
        self, env: simpy.Environment, minutes: float, has_left: Callable[[int], bool]
    ) -> RematchRule | None:
        """Return the run's rematch rule (None: none)."""
        if not self.has_rematch_rule:
            return None
        return RematchRule(env, self.rematch_games, minutes, has_left)

    @staticmethod
    def rule_pass(
        scenario: Scenario,
        streams: Streams,
        games: Games,
        world: World | None,
        parties: Parties | None,
        rematch: RematchRule | None,
    ) -> RulePass | None:
        """Return the run's rule set at work (None: the scenario has no ``matchmaker.rules``);
        team and free-for-all games are told of it once (their seats keep it too:
        :meth:`GroupGames.follow_rules <lobbysim.sim.group_games.GroupGames.follow_rules>`)."""
        if scenario.matchmaker.rules is None:
            return None
        rule_pass = RulePass(scenario, streams, games, world, parties, rematch)
        if games.groups is not None:
            games.groups.follow_rules(SeatRules(rule_pass, scenario, world, parties))
        return rule_pass

    def plan(self, scenario: Scenario, allowed: FastPlan | None = None) -> FastPlan:
        """Return the run's fast plan (only kernels ``allowed`` allows, if given)."""
        mm = scenario.matchmaker
        policies: list[tuple[object, bool]] = [
            (p.policy, not (p.uniform or p.engagement or p.truth))
            for p in (self.policy, self.status_quo)
            if p is not None
        ]
        return FastPlan.decide(
            mode=scenario.game.mode,
            wake_on_arrival=mm.wake_on_arrival,
            policies=policies,
            assignment=self.assignment,
            driver=self.driver,
            rematch=self.has_rematch_rule,
            latency_limits=mm.max_latency_ms is not None or mm.max_delta_ping_ms is not None,
            rule_set=mm.rules is not None,
            has_base=scenario.base is not None,
            drifts=self.population.skill_drift_per_day > 0,
            allowed=allowed,
        )

    def world(self, scenario: Scenario, streams: Streams) -> World | None:
        """Return the run's world (None: the scenario has none), drawing from ``streams``."""
        if scenario.world is None or self.latency is None:
            return None
        mm = scenario.matchmaker
        return World(
            scenario.world,
            self.latency,
            streams,
            max_latency=None if mm.max_latency_ms is None else LatencyLimit(mm.max_latency_ms),
            max_delta_ping=(
                None if mm.max_delta_ping_ms is None else LatencyLimit(mm.max_delta_ping_ms)
            ),
            metrics_start=scenario.metrics_start,
            host_rules=() if mm.rules is None else [Rule(rule) for rule in mm.rules],
        )

    def player_base(
        self,
        scenario: Scenario,
        streams: Streams,
        clock: Clock,
        lobby: Lobby,
        world: World | None,
        parties: Parties | None,
    ) -> PlayerBase | None:
        """Return the run's player base (None: the scenario has none), its members visiting
        ``lobby``, which then serves it (:meth:`Lobby.serve_base
        <lobbysim.sim.sessions.Lobby.serve_base>`: each visit's end to the base, each queueing
        spell to its retention model). The base joins members and starts their visits through
        the lobby, so it is built after the lobby: this one hand-over is the wiring."""
        if scenario.base is None:
            return None
        assert self.visits is not None
        base = PlayerBase(
            scenario.base,
            self.visits,
            clock,
            lobby,
            self.population,
            streams,
            scenario.horizon,
            retention=self.retention,
            metrics_start=scenario.metrics_start,
            world=world,
            parties=parties,
        )
        lobby.serve_base(
            base.visit_ended, None if base.retention is None else base.retention.waited
        )
        return base

    @staticmethod
    def parties(scenario: Scenario, streams: Streams) -> Parties | None:
        """Return the run's parties (None: the scenario has none), drawing from ``streams``."""
        if scenario.parties is None:
            return None
        return Parties(scenario.parties, streams, scenario.metrics_start)

    def beta2(self) -> float:
        """Return the driving rater's ``beta2`` (a failure names the rater)."""
        driver = self.driver
        return float(rater_plugin(0, self.raters[0][0]).call("beta2", lambda: driver.beta2))


def _check_engagement(scenario: Scenario, has_retention: bool) -> None:
    """Refuse an engagement policy without a base with a retention model, or outside 1v1."""
    mm = scenario.matchmaker
    for field_name, spec in (
        ("matchmaker.policy", mm.policy),
        ("matchmaker.status_quo", mm.status_quo),
    ):
        if spec is None or pairing_of(POLICIES.get(spec.name)) != "engagement":
            continue
        if not has_retention:
            raise PluginError(
                f"{field_name}: '{spec.name}' predicts churn with the retention model of a "
                "player base: it needs base.retention"
            )
        if scenario.game.mode != "1v1":
            raise PluginError(
                f"{field_name}: '{spec.name}' pairs players for 1v1 games only, got game.mode "
                f"{scenario.game.mode}"
            )
