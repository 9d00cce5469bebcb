"""The scenario's model: typed, immutable, validated descriptions of one simulated lobby.

Every field has a default so that a short YAML file runs. Each section checks its own ranges and
cross-field rules in ``__post_init__``, reporting every problem at once (:func:`lobbysim.validation
.check`); :mod:`lobbysim.scenario.parse` builds the sections from plain data by their type hints.
Plug-ins (arrival model, policy, assignment, raters) are named by a :class:`PluginSpec` and
validated against their own declared parameters when the simulation is built.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lobbysim.records.rows import DEFAULT_RECORD_FORMAT, RECORD_FORMATS
from lobbysim.registry import did_you_mean
from lobbysim.scenario.attributes import AttributeConfig
from lobbysim.scenario.matchmaker import MatchmakerConfig, batch_problems
from lobbysim.scenario.metrics import MetricsConfig
from lobbysim.scenario.parties import PartiesConfig
from lobbysim.scenario.plugin_spec import PluginSpec
from lobbysim.scenario.rules import rule_set_problems
from lobbysim.scenario.teams import (
    TeamConfig,
    TeamShape,
    describe_shape,
    team_shape,
    teams_problems,
)
from lobbysim.scenario.world import WorldConfig
from lobbysim.validation import (
    MAX_SKILL_VARIANCE,
    ScenarioError,
    check,
    finite,
    non_negative,
    positive,
    replications_problem,
    whole,
)

MAX_HORIZON = 10 * 365 * 24 * 60.0  # minutes: 10 years
MAX_TICKS = 100_000_000  # matchmaking ticks over the horizon
MAX_RATING_SAMPLES = 1_000_000  # rating snapshots over the horizon
MAX_NAME = 80
_FOLDER_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class GameRules:
    """How games are played.

    Attributes:
        mode: ``"1v1"``, ``"team"`` (``team_size`` vs ``team_size``) or ``"ffa"`` (``ffa_size``
            players, everyone for themselves).
        team_size: players per team, for mode ``team`` only (>= 1; default 2). In mode
            ``1v1`` it may only be 1.
        ffa_size: players in a free-for-all game, for mode ``ffa`` only (>= 2; default 8).
        length: scheduled game length in minutes (ZoneStats-style lobbies: 20, MAX_GAME_LENGTH).
        beta2: true performance-noise variance: performance ~ N(skill, beta2) per game (> 0,
            at most 1e8: :data:`~lobbysim.validation.MAX_SKILL_VARIANCE`; the raters assume it
            by default, and square and sum it).
        quit_rate: hazard of leaving mid-match, per minute (0: nobody quits).
        quit_behind_multiplier: the quit hazard of the player who is behind (lower performance)
            is multiplied by this.
        score_rate: points per minute scored at average performance.
        score_gain: the score rate is ``score_rate * exp(score_gain * z)`` with z the
            performance in population standard deviations from the population mean.
        backfill: in team and free-for-all games, seats left open by a quitter are filled from
            the lobby mid-match.
        backfill_min_remaining: minutes a game must still have to run for a seat to be filled.
        teams: the teams one by one, as a FlexMatch rule set gives them (instead of
            ``team_size`` or ``ffa_size``): ranges of players, uneven teams, more than two
            teams, expansions of a team's minimum (:mod:`lobbysim.scenario.teams`).
    """

    mode: str = "1v1"
    team_size: int | None = None
    ffa_size: int | None = None
    length: float = 10.0
    beta2: float = 2.5
    quit_rate: float = 0.0
    quit_behind_multiplier: float = 1.0
    score_rate: float = 10.0
    score_gain: float = 0.5
    backfill: bool = True
    backfill_min_remaining: float = 2.0
    teams: tuple[TeamConfig, ...] = ()

    def __post_init__(self) -> None:
        modes = ["1v1", "team", "ffa"]
        check(
            None
            if self.mode in modes
            else f"game.mode: expected 1v1, team or ffa, got {self.mode!r}"
            + did_you_mean(str(self.mode), modes),
            None if self.team_size is None else whole("game.team_size", self.team_size, 1),
            None if self.ffa_size is None else whole("game.ffa_size", self.ffa_size, 2),
            self._size_problem(),
            *(
                teams_problems(self.mode, self.team_size, self.ffa_size, self.teams)
                if self.mode in modes
                else []
            ),
            non_negative("game.backfill_min_remaining", self.backfill_min_remaining),
            positive("game.length", self.length),
            positive("game.beta2", self.beta2)
            or (
                f"game.beta2: at most {MAX_SKILL_VARIANCE:g} (a noise sd of 10,000 skill points; "
                f"larger variances overflow the raters' arithmetic), got {self.beta2!r}"
                if self.beta2 > MAX_SKILL_VARIANCE
                else None
            ),
            non_negative("game.quit_rate", self.quit_rate),
            positive("game.quit_behind_multiplier", self.quit_behind_multiplier),
            non_negative("game.score_rate", self.score_rate),
            finite("game.score_gain", self.score_gain),
        )
        if self.teams:
            return  # the teams give the sizes
        if self.mode == "team" and self.team_size is None:
            object.__setattr__(self, "team_size", 2)
        if self.mode == "ffa" and self.ffa_size is None:
            object.__setattr__(self, "ffa_size", 8)

    def _size_problem(self) -> str | None:
        """Return the problem of a team or game size that the mode cannot hold, if any."""
        if self.mode == "1v1" and self.team_size not in (None, 1):
            return (
                f"game.team_size: mode 1v1 has one player a side, got {self.team_size!r}; "
                "use mode: team for teams"
            )
        if self.mode in ("1v1", "team") and self.ffa_size is not None:
            return (
                f"game.ffa_size: mode {self.mode} has two sides, got {self.ffa_size!r}; "
                "ffa_size is for mode: ffa"
            )
        if self.mode == "ffa" and self.team_size is not None:
            return (
                f"game.team_size: mode ffa has no teams, got {self.team_size!r}; "
                "use ffa_size for the players in a game"
            )
        return None

    @property
    def seats(self) -> int:
        """Return the most players a game of this mode holds."""
        shape = self.shape
        return 2 if shape is None else shape.seats

    @functools.cached_property
    def shape(self) -> TeamShape | None:
        """Return the game's teams one by one (None: 1v1; :func:`~lobbysim.scenario.teams
        .team_shape`)."""
        return team_shape(self.mode, self.team_size, self.ffa_size, self.teams)

    def describe(self) -> str:
        """Return the game's mode and teams in words (``team (5 vs 5)``, ``free-for-all (4-8
        players)``: :func:`~lobbysim.scenario.teams.describe_shape`)."""
        return describe_shape(self.mode, self.shape)


@dataclass(frozen=True)
class RatersConfig:
    """The rater whose beliefs drive matchmaking, and shadow raters kept alongside.

    Attributes:
        driver: the rater whose beliefs (means, and variances where it has them) drive
            matchmaking (default ``bayesian``).
        shadows: raters kept alongside on the same games, never used to match (default
            ``[sph_elo]``).
    """

    driver: PluginSpec = field(default_factory=lambda: PluginSpec("bayesian"))
    shadows: tuple[PluginSpec, ...] = field(
        default_factory=lambda: (PluginSpec("sph_elo"),),
        metadata={"expected": "a list of plug-ins"},
    )


@dataclass(frozen=True)
class RecordsConfig:
    """What is recorded, and where it is kept.

    Attributes:
        ratings_every: minutes between samples of every rater's rating of every player.
        stream: write the records to disk as the run goes (files in the run's records
            folder) instead of keeping them in memory, so that memory stays flat however long
            the run; departed players are written out and forgotten too.
        flush_rows: with ``stream``, rows buffered per record kind before they are written
            (at most; a writer process is handed them in batches of at most 5,000 rows,
            :data:`lobbysim.records.writer.WRITER_BATCH_ROWS`). Results do not depend on it.
        format: the format of the record files, streamed or written at the end of a run:
            ``csv`` (the default) or ``parquet`` (needs pyarrow: ``pip install
            'lobbysim[parquet]'``); see :mod:`lobbysim.records.files`. Left out of the scenario's
            plain data when ``csv``, so that the sweep run keys of scenarios without it stay.
    """

    ratings_every: float = 60.0
    stream: bool = False
    flush_rows: int = 50_000
    format: str = DEFAULT_RECORD_FORMAT

    def __post_init__(self) -> None:
        check(
            positive("records.ratings_every", self.ratings_every),
            whole("records.flush_rows", self.flush_rows, 1),
            None
            if self.format in RECORD_FORMATS
            else f"records.format: expected {' or '.join(RECORD_FORMATS)}, got {self.format!r}"
            + did_you_mean(str(self.format), list(RECORD_FORMATS)),
        )


@dataclass(frozen=True)
class SweepConfig:
    """A parameter sweep over this scenario (``lobbysim sweep``; ``--grid`` replaces ``grid``).

    Attributes:
        grid: scenario field paths (``matchmaker.tick``, ``arrivals.rate``) mapped to the values
            to try; the sweep runs every combination (a cell).
        policies: the policies to run in every cell (default: the scenario's own).
    """

    grid: Mapping[str, tuple[Any, ...]] = field(
        default_factory=dict,
        metadata={"expected": "a mapping of field paths to non-empty lists of values"},
    )
    policies: tuple[str, ...] = field(default=(), metadata={"expected": "a list of names"})

    def __post_init__(self) -> None:
        check(
            *(
                f"sweep.grid.{key}: expected a non-empty list of values, got []"
                for key, values in self.grid.items()
                if not values
            )
        )


@dataclass(frozen=True)
class CompareConfig:
    """The policies, or the FlexMatch rule sets, ``lobbysim compare`` runs when neither
    ``--policies`` nor ``--rules`` is given (one of the two lists, not both).

    Attributes:
        policies: each a name (``draw_chance``), a spec with parameters
            (``"knowledge_gradient(gamma=0.95)"``) or a mapping (``{name: knowledge_gradient,
            gamma: 0.95}``), read by :func:`lobbysim.scenario.specs.policy_spec` into
            :class:`PluginSpec` values; the first is the reference of the paired differences.
        rules: FlexMatch rule-set files (JSON), a relative one named from the scenario file's
            folder: the scenario runs under each in place of its rules, with its own policy,
            as ``--set matchmaker.rules.flexmatch=FILE`` runs it; the first is the reference.
    """

    policies: tuple[Any, ...] = field(
        default=(),
        metadata={
            "expected": "a non-empty list of policies: names, name(key=value, ...) or "
            "mappings with a name"
        },
    )

    rules: tuple[str, ...] | None = field(
        default=None,
        metadata={"expected": "a non-empty list of FlexMatch rule-set files (JSON)"},
    )

    def __post_init__(self) -> None:
        from lobbysim.scenario.specs import policy_spec

        specs: list[PluginSpec] = []
        problems: list[str | None] = []
        for i, value in enumerate(self.policies):
            try:
                specs.append(policy_spec(value, f"compare.policies[{i}]"))
            except ScenarioError as exc:
                problems += exc.problems
        if self.rules is None and not self.policies:
            problems.append("compare.policies: expected a non-empty list of policies, got []")
        if self.rules is not None:
            if not self.rules:
                problems.append(
                    "compare.rules: expected a non-empty list of FlexMatch rule-set files, got []"
                )
            problems += [
                f"compare.rules[{i}]: expected a file name, got {value!r}"
                for i, value in enumerate(self.rules)
                if not isinstance(value, str) or not value.strip()
            ]
            if self.policies:
                problems.append(
                    "compare: policies and rules together; give one (a comparison of rule sets "
                    "runs the scenario's own policy)"
                )
        check(*problems)
        object.__setattr__(self, "policies", tuple(specs))


@dataclass(frozen=True)
class BaseConfig:
    """A persistent base of registered players who visit the lobby again and again.

    Without a base (the default) every arrival of ``arrivals`` is a new player who plays one
    visit. With one, ``size`` players are registered at time 0 and each visits by the visit
    model (a rate per day shaped by a time-of-day profile, or a user class); newcomers join the
    base at ``newcomers_per_day`` and members leave it for good at the hazard ``leave_per_day``.
    A member keeps one id, one true skill and every rater's belief across visits. The arrivals
    of ``arrivals`` still come, as guests of one visit each.

    Attributes:
        size: registered players at the start (>= 1).
        visits: the visit model (default ``daily``: see :mod:`lobbysim.players.visits`).
        newcomers_per_day: new members joining per day (shaped by the visit model's profile).
        leave_per_day: each member's hazard of leaving the base for good, per day.
        newcomer_games: a player's first ``newcomer_games`` games count as a newcomer's in the
            metrics by tenure (>= 1).
        retention: a retention model (``experience``, or a user class: see
            :mod:`lobbysim.players.retention`): after each visit, whether the member leaves for
            good and
            how soon they come back depend on the visit's experience (None: only
            ``leave_per_day``). It also adds the retention metrics.
    """

    size: int = 1000
    visits: PluginSpec = field(default_factory=lambda: PluginSpec("daily"))
    newcomers_per_day: float = 0.0
    leave_per_day: float = 0.0
    newcomer_games: int = 20
    retention: PluginSpec | None = None

    def __post_init__(self) -> None:
        check(
            whole("base.size", self.size, 1),
            non_negative("base.newcomers_per_day", self.newcomers_per_day),
            non_negative("base.leave_per_day", self.leave_per_day),
            whole("base.newcomer_games", self.newcomer_games, 1),
        )


@dataclass(frozen=True)
class Scenario:
    """One simulated lobby.

    Attributes:
        name, description: for humans and output folder names.
        horizon: simulated minutes.
        warmup: minutes at the start excluded from the metrics.
        seed: the master seed of the run.
        population: parameters of :class:`lobbysim.players.population.Population`.
        arrivals: the arrival model.
        game, matchmaker, raters, records: see their classes.
        replications: replications a run makes (each with its own seed).
        sweep: an optional parameter sweep (see :class:`SweepConfig`); ``run`` and ``compare``
            ignore it.
        base: an optional persistent player base (see :class:`BaseConfig`); without one every
            arrival is a new player of one visit.
        compare: the policies ``lobbysim compare`` runs without ``--policies`` (see
            :class:`CompareConfig`); ``run`` and ``sweep`` ignore it.
        world: optional data centres, regions and latencies (see :class:`WorldConfig`);
            without one, anyone can play anyone at no cost.
        parties: optional parties of guests, one ticket each (see
            :class:`~lobbysim.scenario.parties.PartiesConfig`); team and free-for-all games.
        attributes: optional player attributes beyond skill, by name, that a rule set reads
            (see :class:`~lobbysim.scenario.rules.AttributeConfig`).
        metrics: optional settings of the measures (see
            :class:`~lobbysim.scenario.metrics.MetricsConfig`; None: the defaults).
    """

    name: str = "scenario"
    description: str = ""
    horizon: float = 600.0
    warmup: float = 60.0
    seed: int = 0
    population: Mapping[str, Any] = field(default_factory=dict)
    arrivals: PluginSpec = field(default_factory=lambda: PluginSpec("poisson", {"rate": 5.0}))
    game: GameRules = field(default_factory=GameRules)
    matchmaker: MatchmakerConfig = field(default_factory=MatchmakerConfig)
    raters: RatersConfig = field(default_factory=RatersConfig)
    records: RecordsConfig = field(default_factory=RecordsConfig)
    replications: int = 1
    sweep: SweepConfig | None = None
    base: BaseConfig | None = None
    compare: CompareConfig | None = None
    world: WorldConfig | None = None
    parties: PartiesConfig | None = None
    attributes: Mapping[str, AttributeConfig] | None = None
    metrics: MetricsConfig | None = None

    def __post_init__(self) -> None:
        mm = self.matchmaker
        check(
            *rule_set_problems(
                mm.rules, self.attributes, mm.algorithm, self.game.mode, self.world is not None
            ),
            "matchmaker.threshold: with matchmaker.rules the threshold is a match_quality rule; "
            f"leave threshold out (got {[list(s) for s in mm.threshold]})"
            if mm.rules is not None and mm.threshold != ((0.0, 0.0),)
            else None,
            f"matchmaker.algorithm: {mm.algorithm} searches a rule set: give matchmaker.rules"
            if mm.algorithm in ("seed_greedy", "flexmatch") and mm.rules is None
            else None,
            f"game.teams: {self.game.describe()} is formed by the rule matchmaker's builders: "
            "set matchmaker.algorithm: flexmatch (or seed_greedy) with matchmaker.rules "
            f"(got algorithm {mm.algorithm}" + (")" if mm.rules is not None else ", no rules)")
            if self.game.shape is not None
            and not self.game.shape.fixed
            and (mm.algorithm not in ("seed_greedy", "flexmatch") or mm.rules is None)
            else None,
            "matchmaker.batching: fastest_region batches tickets by the data centre of their "
            "lowest latency: give a world"
            if mm.batching == "fastest_region" and self.world is None
            else None,
            f"matchmaker.batching: {mm.batching} is how FlexMatch's builder batches tickets: "
            f"set matchmaker.algorithm: flexmatch (got {mm.algorithm})"
            if mm.batching != "none" and mm.algorithm != "flexmatch"
            else None,
            "matchmaker.batch_size: FlexMatch's builder cuts its pool into batches: set "
            f"matchmaker.algorithm: flexmatch (got {mm.algorithm})"
            if mm.batch_size is not None and mm.algorithm != "flexmatch"
            else None,
            *batch_problems(mm, self.attributes or {}, self.game.shape, self.parties),
        )
        check(
            name_problem(self.name),
            positive("horizon", self.horizon)
            or (
                f"horizon: at most {MAX_HORIZON:,.0f} minutes (10 years), got {self.horizon!r}"
                if self.horizon > MAX_HORIZON
                else None
            ),
            non_negative("warmup", self.warmup),
            f"warmup: {self.warmup} must be shorter than the horizon ({self.horizon})"
            if self.warmup >= self.horizon
            else None,
            whole("seed", self.seed, 0),
            replications_problem("replications", self.replications),
            self.matchmaker.switch_problem(self.horizon),
            *self._step_problems(),
            *[
                f"matchmaker.{name}: a latency limit needs a world: section (data centres and "
                "regions)"
                for name in ("max_latency_ms", "max_delta_ping_ms")
                if getattr(self.matchmaker, name) is not None and self.world is None
            ],
            *self._party_problems(),
        )

    def _party_problems(self) -> list[str]:
        """Return what is wrong with the parties given the game, if anything."""
        parties, game = self.parties, self.game
        if parties is None:
            return []
        if game.mode == "1v1":
            return ["parties: parties play team or free-for-all games; game.mode is 1v1"]
        problems = []
        shape = game.shape
        assert shape is not None
        room = max(shape.highs)
        if parties.largest > room:
            what = "a team" if game.mode == "team" else "a game"
            problems.append(
                f"parties.sizes: a party of {parties.largest} does not fit {what} of {room}"
            )
        if parties.parity is not None and game.mode != "team":
            problems.append(f"parties.parity: team games only; game.mode is {game.mode}")
        return problems

    def _step_problems(self) -> list[str | None]:
        """Return problems of periodic steps so short that the run would never end."""
        if not (math.isfinite(self.horizon) and self.horizon <= MAX_HORIZON):
            return []  # reported above
        problems: list[str | None] = []
        for name, step, limit in (
            ("matchmaker.tick", self.matchmaker.tick, MAX_TICKS),
            ("records.ratings_every", self.records.ratings_every, MAX_RATING_SAMPLES),
        ):
            if self.horizon / step > limit:
                problems.append(
                    f"{name}: {step!r} minutes gives {self.horizon / step:.3g} steps over the "
                    f"horizon of {self.horizon:g} minutes; at most {limit:,}"
                )
        return problems

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        """Build a scenario from plain data (e.g. parsed YAML), reporting every problem."""
        from lobbysim.flexmatch.expand import expand_scenario_data
        from lobbysim.scenario.parse import build

        if cls is Scenario and isinstance(data, Mapping):
            # matchmaker.rules: {flexmatch: FILE, ...} read into plain rules
            data = expand_scenario_data(data)
        scenario: Scenario = build(cls, data, "")
        return scenario

    def to_dict(self) -> dict[str, Any]:
        """Return the scenario as plain data in the form :meth:`from_dict` reads."""
        return to_data(self)

    @property
    def metrics_start(self) -> float:
        """Return when the metrics start: the end of the warm-up, or the policy switch if later."""
        switch = getattr(self.matchmaker, "switch_at", None)
        return self.warmup if switch is None else max(self.warmup, switch)

    def replace(self, **changes: Any) -> Scenario:
        """Return a copy with some top-level fields replaced."""
        return dataclasses.replace(self, **changes)


def name_problem(name: object) -> str | None:
    """Return what is wrong with a scenario name, if anything.

    A name is a label for reports and output folder names, not a path: at most 80 characters on
    one line, without ``/`` or ``\\``, not starting with ``.``. Folder names use
    :func:`folder_label`.
    """
    if (
        isinstance(name, str)
        and name.strip()
        and len(name) <= MAX_NAME
        and name.isprintable()
        and not name.startswith(".")
        and "/" not in name
        and "\\" not in name
    ):
        return None
    shown = (
        repr(name)
        if not isinstance(name, str) or len(name) <= MAX_NAME
        else (f"{name[:40]!r}... ({len(name)} characters)")
    )
    return (
        f"name: expected a label of at most {MAX_NAME} characters on one line, without / or "
        f"\\ and not starting with '.' (it names reports and output folders; choose a folder "
        f"with --out), got {shown}"
    )


def folder_label(name: str) -> str:
    """Return ``name`` as a safe folder-name part: letters, digits, ``_`` and ``-``."""
    return _FOLDER_UNSAFE.sub("-", name).strip("-")[:64] or "scenario"


#: Optional top-level sections left out of :func:`to_data` when unset, so that the plain data (and
#: the sweep run keys hashed from it) of a scenario without them is what it was before they existed.
OMITTED_WHEN_UNSET = ("sweep", "base", "compare", "world", "parties", "attributes", "metrics")
#: Fields left out of :func:`to_data` at their default, for the same reason: (section, field).
OMITTED_AT_DEFAULT = (
    ("records", "format"),
    ("matchmaker", "max_latency_ms"),
    ("matchmaker", "max_delta_ping_ms"),
    ("matchmaker", "rules"),
    ("matchmaker", "algorithm"),
    ("game", "teams"),
)


def to_data(scenario: Scenario) -> dict[str, Any]:
    """Return the scenario as plain data in the form :func:`lobbysim.scenario.parse.build` reads
    (no ``sweep`` if unset)."""

    def plain(value: Any) -> Any:
        if isinstance(value, PluginSpec):
            return {"name": value.name, **{k: plain(v) for k, v in value.params.items()}}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, Mapping):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        return value

    result: dict[str, Any] = plain(scenario)
    for optional in OMITTED_WHEN_UNSET:
        if result.get(optional) is None:
            result.pop(optional, None)
    for section, name in OMITTED_AT_DEFAULT:
        fields = {f.name: f for f in dataclasses.fields(getattr(scenario, section))}
        if result[section].get(name) == plain(fields[name].default):
            del result[section][name]
    rules = result["matchmaker"].get("rules")
    for rule in rules if isinstance(rules, list) else ():  # a rule of lobbysim's own language
        if rule.get("read_from") is None:
            rule.pop("read_from", None)
    compare = result.get("compare")
    if isinstance(compare, dict):  # of policies and rules, only the list given
        for name in ("policies", "rules"):
            if not compare.get(name):
                del compare[name]
    return result
