"""The library behind ``lobbysim run``, ``compare``, ``validate`` and ``plugins``.

Each command is one function here that the tests call directly; :mod:`lobbysim.cli` only parses
arguments. A run's folder holds everything needed to understand and repeat it: the resolved
scenario (``scenario.yaml``, loadable as it is), the metrics of every replication
(``replications.csv``), the summary with 95% intervals (``summary.csv``), for a comparison the
paired differences from the baseline (``differences.csv``), the record frames of each policy's first
replication (``records/<policy>/``, Parquet where pyarrow is installed, CSV otherwise; with
``records.stream``, every replication's CSV files under ``records/<policy>/rep-<r>/``) and the
report (``report.md``, ``report.html`` and figures). It is written atomically
(:mod:`lobbysim.outputs`).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from lobbysim.arrivals import ARRIVALS
from lobbysim.experiments.replications import ExperimentResult, run_experiment, with_policy
from lobbysim.outputs import out_folder_problem, timestamped, write_atomically
from lobbysim.policies import POLICIES
from lobbysim.policies.assignment import ASSIGNMENTS
from lobbysim.population import Population
from lobbysim.raters import RATERS
from lobbysim.registry import PluginError, Registry, declared_parameters
from lobbysim.retention import RETENTION
from lobbysim.scenario import (
    GameRules,
    Scenario,
    ScenarioError,
    apply_overrides,
    folder_label,
    plugin_spec,
    read_scenario_data,
)
from lobbysim.sim import LobbySimulation
from lobbysim.sim.lobby import build_plugin, build_raters
from lobbysim.streams import Streams
from lobbysim.validation import check_run_options
from lobbysim.visits import VISITS

Progress = Callable[[int, int], None]


class RunError(ValueError):
    """A problem with a run's arguments; the message names the argument and the value."""


def load_run_scenario(path: str | Path, sets: Sequence[str] = ()) -> Scenario:
    """Load a scenario file and apply ``--set`` overrides; errors name the file and field.

    When the file breaks the schema, the problems of its plug-ins (unknown names, bad
    parameters) are reported with the schema's, so that every problem comes out at once.
    """
    scenario = _from_data(read_scenario_data(path), str(path))
    if not sets:
        return scenario
    # on the resolved scenario, so that the defaults are there to override
    data = scenario.to_dict()
    apply_overrides(data, sets)
    return _from_data(data, f"{path} (with --set)")


def _from_data(data: Mapping[str, Any], where: str) -> Scenario:
    try:
        return Scenario.from_dict(data)
    except ScenarioError as exc:
        problems = exc.problems + plugin_problems(data)
        raise ScenarioError([f"{where}: {problem}" for problem in problems]) from None


def _at(data: Mapping[str, Any], *path: str) -> Any:
    """Return the value at ``path`` in nested mappings, or None where it is missing."""
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def plugin_problems(data: Mapping[str, Any]) -> list[str]:
    """Return the problems of every plug-in named in scenario data (one line each).

    Works on plain data, even when the rest of the scenario is invalid; a plug-in field that is
    missing (its default is valid) or malformed (the schema reports it) is skipped.
    """
    fields: list[tuple[Registry[Any], str, Any]] = [
        (ARRIVALS, "arrivals", _at(data, "arrivals")),
        (POLICIES, "matchmaker.policy", _at(data, "matchmaker", "policy")),
        (POLICIES, "matchmaker.status_quo", _at(data, "matchmaker", "status_quo")),
        (ASSIGNMENTS, "matchmaker.assignment", _at(data, "matchmaker", "assignment")),
        (RATERS, "raters.driver", _at(data, "raters", "driver")),
        (VISITS, "base.visits", _at(data, "base", "visits")),
        (RETENTION, "base.retention", _at(data, "base", "retention")),
    ]
    shadows = _at(data, "raters", "shadows")
    if isinstance(shadows, list | tuple):
        fields += [(RATERS, f"raters.shadows[{i}]", v) for i, v in enumerate(shadows)]
    problems = []
    # raters get the game's beta2 unless they set their own, as in the lobby (an invalid one is
    # the schema's problem: the default stands in)
    beta2 = _at(data, "game", "beta2")
    if isinstance(beta2, bool) or not isinstance(beta2, int | float) or not 0 < beta2 < math.inf:
        beta2 = GameRules.beta2
    for registry, field_name, value in fields:
        if value is None:
            continue
        defaults = {"beta2": beta2} if registry is RATERS else None
        try:
            build_plugin(registry, plugin_spec(value, field_name), field_name, defaults)
        except ScenarioError:
            continue  # malformed: the schema's problem
        except PluginError as exc:
            problems.append(str(exc))
    population = _at(data, "population")
    if isinstance(population, Mapping):
        try:
            Population.from_params(population)
        except PluginError as exc:
            problems.append(str(exc))
    return problems


def check_scenario(scenario: Scenario, policies: Sequence[str] = ()) -> None:
    """Build every plug-in, then the simulation once per policy, so that every plug-in problem
    and impossible combination is reported now, all at once (one line each)."""
    mm = scenario.matchmaker
    problems = plugin_problems(scenario.to_dict())
    rank, arrivals = mm.focal_rank, scenario.arrivals
    size = arrivals.params.get("size")
    if (
        rank is not None
        and arrivals.name == "cohort"
        and isinstance(size, int)
        and abs(rank) > size
    ):
        problems.append(
            f"matchmaker.focal_rank: expected a rank within the cohort of {size} players "
            f"(1..{size} or -1..-{size}), got {rank}"
        )
    if not problems:
        for name in policies or [mm.policy.name]:
            checked = with_policy(scenario, name) if policies else scenario
            try:
                LobbySimulation(checked, Streams(0), sink=lambda kind, rows: None)  # never runs
            except PluginError as exc:
                problems.append(str(exc))
    if problems:
        raise PluginError("\n".join(problems))


def newcomer_threshold_warning(scenario: Scenario) -> str | None:
    """Return a warning if two newcomers cannot reach the first step of the quality threshold.

    A newcomer's belief is the population prior; the driving rater's match quality of two
    newcomers with the same prior mean and the smallest prior variance is the best any newcomer
    pair can reach. Below the threshold's first step, every newcomer must wait for the threshold
    to relax (or for a better-known opponent, whose quality against a newcomer is not higher by
    much), and with little patience many give up in their first queue, an artefact of the
    threshold rather than of the policy compared.
    """
    population = Population.from_params(scenario.population)
    mean = population.skill_mean
    var = population.prior_var_low if population.prior == "informative" else population.skill_sd**2
    driver = build_raters(scenario)[0]
    driver.add_players(np.array([0, 1]), np.array([mean, mean]), np.array([var, var]))
    quality = float(driver.quality(np.array([0]), np.array([1]))[0])
    steps = scenario.matchmaker.threshold
    if quality >= steps[0][1]:
        return None
    wait = next((w for w, q in steps if q <= quality), None)
    then = (
        f"no newcomer is matched by it before waiting {wait:g} minutes"
        if wait is not None
        else "no two newcomers are ever matched with each other"
    )
    return (
        f"matchmaker.threshold: two newcomers (prior variance {var:g}) reach a match quality of "
        f"at most {quality:.3f} with each other, below the first step's {steps[0][1]:g}: {then}; "
        "start the threshold at or below that quality"
    )


def scenario_warnings(scenario: Scenario) -> list[str]:
    """Return one line per setting that is valid but probably not what was meant."""
    warnings = [newcomer_threshold_warning(scenario)]
    return [w for w in warnings if w is not None]


def validate_warnings(paths: Sequence[str | Path]) -> list[str]:
    """Return the warnings of the given (valid) scenario files, each prefixed by its path."""
    lines = []
    for path in paths:
        lines += [f"{path}: {line}" for line in scenario_warnings(load_run_scenario(path))]
    return lines


def validate(paths: Sequence[str | Path]) -> list[str]:
    """Return one line per problem in the given scenario files (empty: all valid)."""
    problems = []
    for path in paths:
        try:
            check_scenario(load_run_scenario(path))
        except (ScenarioError, PluginError) as exc:
            for text in str(exc).splitlines():
                problems.append(text if text.startswith(str(path)) else f"{path}: {text}")
    return problems


def run(
    path: str | Path,
    *,
    seed: int | None = None,
    replications: int | None = None,
    policies: Sequence[str] = (),
    out: str | Path | None = None,
    sets: Sequence[str] = (),
    jobs: int = 1,
    progress: Progress | None = None,
    command: str | None = None,
) -> tuple[Path, ExperimentResult]:
    """Run (or, with ``policies``, compare) a scenario and write its folder; return both.

    Args:
        path: the scenario file.
        seed: replaces the scenario's seed.
        replications: replaces the scenario's replications.
        policies: compare these policies on common random numbers (the first is the baseline).
        out: the output folder (default ``outputs/<scenario name>-<UTC time>``); must be new or
            empty.
        sets: ``key.path=value`` overrides.
        jobs: worker processes.
        progress: called as ``progress(done, total)``.
        command: the command line, recorded in the report.
    """
    check_run_options(seed=seed, replications=replications, jobs=jobs)
    scenario = load_run_scenario(path, sets)
    if seed is not None:
        scenario = scenario.replace(seed=seed)
    for name in policies:
        try:
            POLICIES.get(name)
        except PluginError as exc:
            raise RunError(f"--policies: {exc}") from None
    try:
        check_scenario(scenario, policies)
    except PluginError as exc:
        raise PluginError("\n".join(f"{path}: {line}" for line in str(exc).splitlines())) from None
    out_path = (
        Path(out) if out is not None else timestamped(Path("outputs"), folder_label(scenario.name))
    )
    problem = out_folder_problem(out_path)
    if problem is not None:
        raise RunError(f"--out: {problem}")
    holder: list[ExperimentResult] = []

    def run_and_write(tmp: Path) -> None:
        # streamed records go straight into the temporary folder's records/
        result = run_experiment(
            scenario,
            policies or None,
            replications,
            jobs=jobs,
            progress=progress,
            records_root=tmp / "records" if scenario.records.stream else None,
        )
        holder.append(result)
        write_run_folder(result, tmp, command)

    try:
        write_atomically(out_path, run_and_write)
    except FileExistsError as exc:
        raise RunError(f"--out: {exc}") from None
    return out_path, holder[0]


def write_run_folder(result: ExperimentResult, folder: Path, command: str | None) -> None:
    """Write a run's files into ``folder`` (see the module docstring)."""
    from lobbysim.reporting.run import write_report

    scenario = result.scenario.replace(replications=len(result.seeds))
    (folder / "scenario.yaml").write_text(
        "# The resolved scenario of this run: lobbysim run scenario.yaml repeats it.\n"
        + yaml.safe_dump(scenario.to_dict(), sort_keys=False),
        encoding="utf-8",
    )
    result.metrics.to_csv(folder / "replications.csv", index=False)
    result.summary.to_csv(folder / "summary.csv", index=False)
    if len(result.policies) > 1:
        result.differences.to_csv(folder / "differences.csv", index=False)
    parquet = importlib.util.find_spec("pyarrow") is not None
    for policy in result.policies:
        first = result.runs[policy][0]
        if first.records_dir is not None:
            continue  # streamed: already under records/<policy>/rep-<r>/
        target = folder / "records" / policy
        target.mkdir(parents=True)
        for kind in ("games", "participants", "waits", "ratings", "players"):
            frame = getattr(first, kind)
            if frame is None:
                continue
            if parquet:
                frame.to_parquet(target / f"{kind}.parquet", index=False)
            else:
                frame.to_csv(target / f"{kind}.csv", index=False)
    write_report(result, folder, command=command)


def plugins_text() -> str:
    """Return every registered plug-in of every family with its parameters, for humans."""
    lines: list[str] = []
    families: list[tuple[str, Registry[Any]]] = [
        ("arrival models (arrivals)", ARRIVALS),
        ("policies (matchmaker.policy)", POLICIES),
        ("assignment strategies (matchmaker.assignment)", ASSIGNMENTS),
        ("raters (raters.driver, raters.shadows)", RATERS),
        ("visit models (base.visits)", VISITS),
        ("retention models (base.retention)", RETENTION),
    ]
    for title, registry in families:
        lines.append(f"{title}:")
        for name, cls in registry:
            lines.append(f"  {name}{_parameters(cls)}")
    lines.append("game modes (game.mode):")
    lines.append("  1v1, team (game.team_size), ffa (game.ffa_size)")
    lines.append('user classes: "package.module:Class" wherever a plug-in name goes')
    return "\n".join(lines)


def _parameters(cls: type) -> str:
    params = []
    for name, f in declared_parameters(cls).items():
        if name.startswith("_"):
            continue
        if f.default is not dataclasses.MISSING:
            params.append(f"{name}={f.default!r}")
        elif f.default_factory is not dataclasses.MISSING:
            params.append(f"{name}={f.default_factory()!r}")
        else:
            params.append(f"{name} (required)")
    return f": {', '.join(params)}" if params else ""
