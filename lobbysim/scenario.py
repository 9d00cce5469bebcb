"""The scenario: a typed, immutable description of one simulated lobby.

This is the minimal schema the simulator needs; every field has a default so that a short YAML file
runs. ``Scenario.from_dict`` builds one from plain data (as loaded from YAML) and rejects unknown
keys with the field path and a "did you mean". Plug-ins (arrival model, policy, assignment, raters)
are named by a :class:`PluginSpec` and validated against their own declared parameters when the
simulation is built.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lobbysim.registry import did_you_mean
from lobbysim.yaml_input import YamlInputError, read_yaml_file

MAX_HORIZON = 10 * 365 * 24 * 60.0  # minutes: 10 years
MAX_TICKS = 100_000_000  # matchmaking ticks over the horizon
MAX_RATING_SAMPLES = 1_000_000  # rating snapshots over the horizon
MAX_REPLICATIONS = 10_000
MAX_NAME = 80
_FOLDER_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


class ScenarioError(ValueError):
    """Problems in a scenario, one line each, naming the field path, the value and what was
    expected. ``problems`` lists them; ``str()`` joins them with newlines."""

    def __init__(self, problems: str | list[str]) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class PluginSpec:
    """A plug-in by name (registered, or "package.module:Class") with its parameters."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)


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
        beta2: true performance-noise variance: performance ~ N(skill, beta2) per game.
        quit_rate: hazard of leaving mid-match, per minute (0: nobody quits).
        quit_behind_multiplier: the quit hazard of the player who is behind (lower performance)
            is multiplied by this.
        score_rate: points per minute scored at average performance.
        score_gain: the score rate is ``score_rate * exp(score_gain * z)`` with z the
            performance in population standard deviations from the population mean.
        backfill: in team and free-for-all games, seats left open by a quitter are filled from
            the lobby mid-match.
        backfill_min_remaining: minutes a game must still have to run for a seat to be filled.
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

    def __post_init__(self) -> None:
        modes = ["1v1", "team", "ffa"]
        _check(
            None
            if self.mode in modes
            else f"game.mode: expected 1v1, team or ffa, got {self.mode!r}"
            + did_you_mean(str(self.mode), modes),
            None if self.team_size is None else _whole("game.team_size", self.team_size, 1),
            None if self.ffa_size is None else _whole("game.ffa_size", self.ffa_size, 2),
            self._size_problem(),
            _non_negative("game.backfill_min_remaining", self.backfill_min_remaining),
            _positive("game.length", self.length),
            _positive("game.beta2", self.beta2),
            _non_negative("game.quit_rate", self.quit_rate),
            _positive("game.quit_behind_multiplier", self.quit_behind_multiplier),
            _non_negative("game.score_rate", self.score_rate),
            _finite("game.score_gain", self.score_gain),
        )
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
        """Return the players a game of this mode holds."""
        if self.mode == "team":
            return 2 * (self.team_size or 2)
        if self.mode == "ffa":
            return self.ffa_size or 8
        return 2


@dataclass(frozen=True)
class MatchmakerConfig:
    """How the matchmaker picks opponents.

    Attributes:
        policy: the opponent-selection policy (``point_estimate``, ``draw_chance``,
            ``knowledge_gradient``, ``random``, ``fifo`` or a user class). 1v1 only: team and
            free-for-all games are formed from players adjacent in rating (see
            :mod:`lobbysim.policies.groups`), under the same threshold.
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
    """

    policy: PluginSpec = field(default_factory=lambda: PluginSpec("draw_chance"))
    assignment: PluginSpec = field(default_factory=lambda: PluginSpec("global"))
    tick: float = 0.25
    wake_on_arrival: bool = True
    threshold: tuple[tuple[float, float], ...] = ((0.0, 0.0),)
    focal_players: tuple[int, ...] | None = None
    focal_rank: int | None = None

    def __post_init__(self) -> None:
        _check(
            _positive("matchmaker.tick", self.tick),
            _threshold_problem(self.threshold),
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
        )


@dataclass(frozen=True)
class RatersConfig:
    """The rater whose beliefs drive matchmaking, and shadow raters kept alongside."""

    driver: PluginSpec = field(default_factory=lambda: PluginSpec("bayesian"))
    shadows: tuple[PluginSpec, ...] = field(default_factory=lambda: (PluginSpec("sph_elo"),))


@dataclass(frozen=True)
class RecordsConfig:
    """What is recorded, and where it is kept.

    Attributes:
        ratings_every: minutes between samples of every rater's rating of every player.
        stream: write the records to disk as the run goes (CSV files in the run's records
            folder) instead of keeping them in memory, so that memory stays flat however long
            the run; departed players are written out and forgotten too.
        flush_rows: with ``stream``, rows buffered per record kind before they are written.
    """

    ratings_every: float = 60.0
    stream: bool = False
    flush_rows: int = 50_000

    def __post_init__(self) -> None:
        _check(
            _positive("records.ratings_every", self.ratings_every),
            _whole("records.flush_rows", self.flush_rows, 1),
        )


@dataclass(frozen=True)
class SweepConfig:
    """A parameter sweep over this scenario (``lobbysim sweep``; ``--grid`` replaces ``grid``).

    Attributes:
        grid: scenario field paths (``matchmaker.tick``, ``arrivals.rate``) mapped to the values
            to try; the sweep runs every combination (a cell).
        policies: the policies to run in every cell (default: the scenario's own).
    """

    grid: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    policies: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scenario:
    """One simulated lobby.

    Attributes:
        name, description: for humans and output folder names.
        horizon: simulated minutes.
        warmup: minutes at the start excluded from the metrics.
        seed: the master seed of the run.
        population: parameters of :class:`lobbysim.population.Population`.
        arrivals: the arrival model.
        game, matchmaker, raters, records: see their classes.
        replications: replications a run makes (each with its own seed).
        sweep: an optional parameter sweep (see :class:`SweepConfig`); ``run`` and ``compare``
            ignore it.
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

    def __post_init__(self) -> None:
        _check(
            name_problem(self.name),
            _positive("horizon", self.horizon)
            or (
                f"horizon: at most {MAX_HORIZON:,.0f} minutes (10 years), got {self.horizon!r}"
                if self.horizon > MAX_HORIZON
                else None
            ),
            _non_negative("warmup", self.warmup),
            f"warmup: {self.warmup} must be shorter than the horizon ({self.horizon})"
            if self.warmup >= self.horizon
            else None,
            _whole("seed", self.seed, 0),
            replications_problem("replications", self.replications),
            *self._step_problems(),
        )

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
        """Build a scenario from plain data (e.g. parsed YAML)."""
        return _build(cls, data, "")

    def replace(self, **changes: Any) -> Scenario:
        """Return a copy with some top-level fields replaced."""
        return dataclasses.replace(self, **changes)


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate a scenario from a YAML file."""
    data = read_scenario_data(path)
    try:
        return Scenario.from_dict(data)
    except ScenarioError as exc:
        raise ScenarioError([f"{path}: {problem}" for problem in exc.problems]) from None


def read_scenario_data(path: str | Path) -> dict[str, Any]:
    """Read a scenario file's YAML as plain data (not yet validated).

    Raises:
        ScenarioError: the file cannot be read, is too large or not UTF-8, has a YAML syntax
            error (with its line and column), a duplicate key or an alias chain (see
            :mod:`lobbysim.yaml_input`), holds no fields, or is not a mapping.
    """
    path = Path(path)
    try:
        data = read_yaml_file(path)
    except YamlInputError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    if data is None:
        raise ScenarioError(
            f"{path}: the file holds no fields (it is empty or only comments); "
            "write at least one field, e.g. 'name: my_lobby'"
        )
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{path}: expected a mapping of fields at the top level")
    return dict(data)


_SECTIONS = (
    "GameRules",
    "MatchmakerConfig",
    "RatersConfig",
    "RecordsConfig",
    "SweepConfig | None",
)


def _build(cls: type, data: Any, path: str) -> Any:
    """Build ``cls`` from a mapping, reporting every problem found (not only the first)."""
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{path or 'scenario'}: expected a mapping, got {data!r}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    kwargs: dict[str, Any] = {}
    problems: list[str] = []
    failed_scalars = False
    for key, value in data.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in fields:
            problems.append(f"{where}: unknown field" + did_you_mean(str(key), list(fields)))
            continue
        try:
            kwargs[key] = _convert(fields[key].type, value, where)
        except ScenarioError as exc:
            problems.extend(exc.problems)
            failed_scalars = failed_scalars or str(fields[key].type) not in _SECTIONS
    # Range and cross-field checks run too, unless a plain field of this level failed (its
    # default would stand in and could give a misleading complaint).
    if not failed_scalars:
        try:
            built = cls(**kwargs)
        except ScenarioError as exc:
            problems.extend(exc.problems)
        except (TypeError, ValueError) as exc:
            problems.append(f"{path or 'scenario'}: {exc}")
        else:
            if not problems:
                return built
    raise ScenarioError(problems)


def plugin_spec(value: Any, where: str) -> PluginSpec:
    """Return the plug-in named by ``value`` (a name or a mapping with ``name``)."""
    return _plugin(value, where)


def _plugin(value: Any, where: str) -> PluginSpec:
    if isinstance(value, str):
        return PluginSpec(value)
    if isinstance(value, Mapping):
        if "name" not in value:
            raise ScenarioError(f"{where}: a plug-in needs a 'name'")
        params = {k: v for k, v in value.items() if k != "name"}
        return PluginSpec(str(value["name"]), params)
    raise ScenarioError(f"{where}: expected a plug-in name or a mapping with 'name', got {value!r}")


def _convert(annotation: Any, value: Any, where: str) -> Any:
    text = str(annotation)
    if text in ("GameRules", "MatchmakerConfig", "RatersConfig", "RecordsConfig"):
        return _build(globals()[text], value, where)
    if text == "SweepConfig | None":
        return None if value is None else _build(SweepConfig, value, where)
    if text == "Mapping[str, tuple[Any, ...]]":
        if not isinstance(value, Mapping):
            raise ScenarioError(
                f"{where}: expected a mapping of field paths to lists, got {value!r}"
            )
        problems = [
            f"{where}.{key}: expected a non-empty list of values, got {values!r}"
            for key, values in value.items()
            if not isinstance(values, list | tuple) or not values
        ]
        if problems:
            raise ScenarioError(problems)
        return {str(key): tuple(values) for key, values in value.items()}
    if text == "tuple[str, ...]":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ScenarioError(f"{where}: expected a list of names, got {value!r}")
        return tuple(value)
    if text == "PluginSpec":
        return _plugin(value, where)
    if text == "tuple[PluginSpec, ...]":
        if not isinstance(value, list | tuple):
            raise ScenarioError(f"{where}: expected a list of plug-ins, got {value!r}")
        return tuple(_plugin(v, f"{where}[{i}]") for i, v in enumerate(value))
    if text == "tuple[tuple[float, float], ...]":
        if not (
            isinstance(value, list | tuple)
            and value
            and all(
                isinstance(step, list | tuple)
                and len(step) == 2
                and all(_is_number(x) for x in step)
                for step in value
            )
        ):
            raise ScenarioError(
                f"{where}: expected a non-empty list of [wait_minutes, min_quality] pairs of "
                f"numbers, got {value!r}"
            )
        return tuple((float(w), float(q)) for w, q in value)
    if text == "tuple[int, ...] | None":
        if value is None:
            return None
        if not isinstance(value, list | tuple) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
        ):
            raise ScenarioError(
                f"{where}: expected a list of player ids (whole numbers >= 0), got {value!r}"
            )
        return tuple(value)
    if text == "int | None":
        if value is None:
            return None
        return _convert("int", value, where)
    if text == "float":
        if not _is_number(value):
            raise ScenarioError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if text == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ScenarioError(f"{where}: expected a whole number, got {value!r}")
        return value
    if text == "bool":
        if not isinstance(value, bool):
            raise ScenarioError(f"{where}: expected true or false, got {value!r}")
        return value
    if text == "str":
        if not isinstance(value, str):
            raise ScenarioError(f"{where}: expected text, got {value!r}")
        return value
    return value


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


def replications_problem(where: str, value: object) -> str | None:
    """Return what is wrong with a number of replications, if anything."""
    problem = _whole(where, value, 1)
    if problem is None and isinstance(value, int) and value > MAX_REPLICATIONS:
        return (
            f"{where}: at most {MAX_REPLICATIONS:,} replications, got {value:,}; intervals "
            "narrow with the square root of the replications, so a few dozen usually suffice"
        )
    return problem


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check(*problems: str | None) -> None:
    """Raise every problem found at once (None means that check passed)."""
    found = [p for p in problems if p is not None]
    if found:
        raise ScenarioError(found)


def _threshold_problem(steps: tuple[tuple[float, float], ...]) -> str | None:
    """Return what is wrong with a threshold schedule, if anything."""
    where = "matchmaker.threshold"
    shown = [list(step) for step in steps]
    waits = [w for w, _ in steps]
    if not steps:
        return f"{where}: expected at least one [wait_minutes, min_quality] pair, got []"
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


def _finite(name: str, value: float) -> str | None:
    return None if math.isfinite(value) else f"{name}: expected a finite number, got {value!r}"


def _positive(name: str, value: float) -> str | None:
    if math.isfinite(value) and value > 0:
        return None
    return f"{name}: expected a number > 0, got {value!r}"


def _non_negative(name: str, value: float) -> str | None:
    if math.isfinite(value) and value >= 0:
        return None
    return f"{name}: expected a number >= 0, got {value!r}"


def _whole(name: str, value: object, minimum: int) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
        return None
    return f"{name}: expected a whole number >= {minimum}, got {value!r}"
