"""The scenario of a run checked before it runs, for ``lobbysim run``, ``compare``, ``sweep``,
``tune`` and the Python API: every problem of its plug-ins, its memory and its lobby reported at
once (user classes checked by reference unless imported), the policies a comparison runs, and the
settings that are valid but probably not what was meant; the scenarios of a comparison of
FlexMatch rule sets (:func:`rule_variants`: ``lobbysim compare --rules a.json,b.json``, or a
``compare: {rules: [...]}`` section). Loading the file is the scenario's
(:func:`lobbysim.scenario.loading.load_run_scenario`); building the lobby is the engine's
(:mod:`lobbysim.sim.components`), and the policies of a comparison the experiments'
(:mod:`lobbysim.experiments.replications`), so this sits above both.
:mod:`lobbysim.commands.run` runs what passes; :mod:`lobbysim.commands.validate` prints it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lobbysim.experiments.replications import (
    ORACLE_POLICY,
    UNIFORM_POLICY,
    policy_scenarios,
    with_policy,
)
from lobbysim.experiments.variants import RULE_SET, Variants
from lobbysim.players.population import Population
from lobbysim.records.files import format_problem
from lobbysim.registry import PluginError
from lobbysim.scenario import (
    PluginSpec,
    Scenario,
    ScenarioError,
)
from lobbysim.scenario.inputs import as_scenario
from lobbysim.scenario.loading import key_in, load_run_scenario, plugin_problems
from lobbysim.scenario.parse import parse_override
from lobbysim.scenario.plugin_fields import policy_problems, user_plugins
from lobbysim.scenario.plugins import build_raters
from lobbysim.scenario.specs import resolve_policies, spec_label
from lobbysim.sim.components import Components


class RunError(ValueError):
    """A problem with a run's arguments; the message names the argument and the value."""


def check_scenario(
    scenario: Scenario,
    policies: Sequence[str | PluginSpec] = (),
    *,
    variants: Mapping[str, Scenario] | None = None,
    held_runs: int | None = None,
    import_plugins: bool = True,
) -> None:
    """Build every plug-in, then the simulation once per policy, so that every plug-in problem
    and impossible combination is reported now, all at once (one line each); a records format
    whose library is not installed (Parquet without pyarrow) is one too, and so is a run that
    needs more memory than there is (:func:`lobbysim.scenario.sizing.memory_problems`: the
    records of ``held_runs`` runs kept, by default the scenario's replications per policy; a
    user's arrival or visit model sized by the capabilities it declares, if imported).

    The policies are names or specs (:func:`~lobbysim.experiments.replications.policy_scenarios`),
    or ``variants``, each policy's scenario by label, if given. Without ``import_plugins``
    (``lobbysim validate``), user classes are not imported, only their references checked, and
    the simulation is not built if the scenario names one.
    """
    from lobbysim.scenario.sizing import memory_problems

    mm = scenario.matchmaker
    if held_runs is None:
        held_runs = scenario.replications * max(len(variants or policies), 1)
    data = scenario.to_dict()
    problems = plugin_problems(data, import_plugins=import_plugins)
    # a user's arrival or visit model is sized by what it declares, once it imports cleanly
    problems[:0] = memory_problems(
        scenario, held_runs, import_plugins=import_plugins and not problems
    )
    problems += filter(None, [format_problem(scenario.records.format)])
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
    if not problems and (import_plugins or not user_plugins(data)):
        if variants is None:
            variants = policy_scenarios(scenario, policies)
        for label, checked in variants.items():
            problem = build_problem(checked)
            if problem is not None:
                named = label != checked.matchmaker.policy.name  # a spec with parameters
                problems.append(f"{label}: {problem}" if named else problem)
    if problems:
        raise PluginError("\n".join(problems))


def build_problem(scenario: Scenario) -> str | None:
    """Return why the lobby of ``scenario`` cannot be built (a plug-in problem), or None.

    Its plug-ins are built as a run builds them (:class:`~lobbysim.sim.components.Components`),
    without building a lobby."""
    try:
        Components.build(scenario)
    except PluginError as exc:
        return str(exc)
    return None


#: The reference policies a comparison adds by default: no matchmaking, and matching on truth.
BASELINES = (UNIFORM_POLICY, ORACLE_POLICY)


def compare_policies(
    scenario: Scenario,
    policies: Sequence[str | PluginSpec | Mapping[str, Any]] = (),
    where: str = "--policies",
) -> tuple[list[PluginSpec], str]:
    """Return the policies a comparison of ``scenario`` runs, and a line saying why those.

    ``policies`` (``--policies``, or what ``where`` names in errors) if given; else the
    scenario's ``compare:`` section; else the scenario's own policy, the reference, and the
    baselines :data:`BASELINES` that its lobby can run (one that cannot, say for its game mode,
    is left out and the line says why).

    Raises:
        RunError: a spec of ``policies`` that cannot be read or that the registry refuses.
        ScenarioError: the same for the ``compare:`` section.
    """
    own = scenario.matchmaker.policy
    if policies:
        try:
            specs = resolve_policies(own, policies, where)
        except ScenarioError as exc:
            raise RunError(str(exc)) from None
        problems = policy_problems(specs, where)
        if problems:
            raise RunError("\n".join(problems))
        return specs, f"compare: {', '.join(spec_label(s) for s in specs)} ({where})"
    if scenario.compare is not None and scenario.compare.rules:
        raise RunError(
            "compare.rules: a comparison of rule sets reads the scenario's file with each rule "
            "set: give the file (lobbysim compare FILE), or --policies to compare policies"
        )
    if scenario.compare is not None:
        specs = resolve_policies(own, scenario.compare.policies, "compare.policies")
        problems = policy_problems(specs, "compare.policies")
        if problems:
            raise ScenarioError(problems)
        labels = ", ".join(spec_label(s) for s in specs)
        return specs, f"compare: {labels}, from the scenario's compare: section"
    specs = [own]
    left_out = []
    for name in BASELINES:
        spec = PluginSpec(name)
        if spec in specs:
            continue
        problem = build_problem(with_policy(scenario, spec))
        if problem is None:
            specs.append(spec)
        else:
            left_out.append(f"{name} is left out: {problem}")
    what = {UNIFORM_POLICY: "no matchmaking", ORACLE_POLICY: "matching on true skill"}
    chosen = [f"{spec_label(s)} ({what[s.name]})" for s in specs[1:]]
    why = (
        f"compare: {spec_label(own)} (the scenario's policy, the reference of the differences)"
        + (f" against the bounds {' and '.join(chosen)}" if chosen else "")
        + "; choose others with --policies or a compare: section"
    )
    return specs, "; ".join([why, *left_out])


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


RULE_FILE_KEY = "matchmaker.rules.flexmatch"
"""The field a comparison of rule sets sets per variant, as ``--set`` of it does."""


def rule_labels(files: Sequence[str | Path]) -> list[str]:
    """Return the label of each rule-set file: its stem (``fair_teams_low_ping``), or where
    stems collide, as many of the last parts of its absolute path as tell the colliding files
    apart (``tight/rules`` and ``loose/rules``), without the extension."""
    parts = [Path(os.path.abspath(f)).with_suffix("").parts for f in files]
    depth = [1] * len(parts)

    def label(i: int) -> str:
        return "/".join(parts[i][-depth[i] :])

    while True:
        labels = [label(i) for i in range(len(parts))]
        clashes = [i for i, text in enumerate(labels) if labels.count(text) > 1]
        grown = [i for i in clashes if depth[i] < len(parts[i])]
        if not grown:
            return labels
        for i in grown:
            depth[i] += 1


def rule_variants(
    path: str | Path,
    files: Sequence[str | Path],
    sets: Sequence[str] = (),
    *,
    seed: int | None = None,
    where: str = "--rules",
    overrides: Any = None,
) -> Variants:
    """Return the variants of a comparison of FlexMatch rule sets: per file (labelled by
    :func:`rule_labels`), the scenario file ``path`` read with ``sets`` and that file as its
    ``matchmaker.rules.flexmatch`` (:func:`lobbysim.scenario.loading.load_run_scenario`'s
    ``values``: exactly the scenario ``--set matchmaker.rules.flexmatch=FILE`` gives, the game's
    team fields the file implies and its attribute bindings with it); ``overrides`` (the
    Python API's, :func:`lobbysim.scenario.inputs.as_scenario`'s) apply to each after, and
    ``seed`` replaces each one's. The policy is the scenario's own for all; the first file is
    the baseline.

    A scenario without a rule set of its own gets each file's in place of its rules, as ``--set``
    gives it (its attributes then need bindings: ``--set
    matchmaker.rules.attributes.NAME=...``).

    Raises:
        RunError: no file, a file given twice, or a ``--set`` of the rule-set file too.
        ScenarioError: every file that cannot be read or that the rule-set reader or the
            scenario refuses, one line per problem naming the file.
    """
    if not files:
        raise RunError(f"{where}: expected one or more FlexMatch rule-set files (JSON)")
    if any(key_in(parse_override(item)[0], (RULE_FILE_KEY,)) for item in sets):
        raise RunError(
            f"{where} and --set {RULE_FILE_KEY} both name the rule set: give the files to "
            f"{where} only"
        )
    seen: dict[str, str] = {}
    for file in files:
        resolved = os.path.realpath(file)
        if resolved in seen:
            raise RunError(f"{where}: {file} is given twice (as {seen[resolved]} too)")
        seen[resolved] = str(file)
    labels = rule_labels(files)
    scenarios: dict[str, Scenario] = {}
    problems: list[str] = []
    prefix = f"{path} (with --set): "
    for label, file in zip(labels, files, strict=True):
        try:
            scenario = load_run_scenario(path, sets, values={RULE_FILE_KEY: str(file)})
            if overrides:
                scenario = as_scenario(scenario, overrides, source=f"{path} (with --set)")
        except ScenarioError as exc:
            for line in exc.problems:
                text = line[len(prefix) :] if line.startswith(prefix) else line
                named = text.startswith(f"{file}:")
                problems.append(f"{where}: {text}" if named else f"{path} ({where} {file}): {text}")
            continue
        scenarios[label] = scenario if seed is None else scenario.replace(seed=seed)
    if problems:
        raise ScenarioError(problems)
    sources = dict(zip(labels, map(str, files), strict=True))
    return Variants(RULE_SET, scenarios, sources)


def api_rule_variants(
    scenario: Any, rules: Any, policies: Any, overrides: Any, seed: Any
) -> Variants | None:
    """Return the variants of :func:`lobbysim.compare`'s ``rules`` (files, or one
    comma-separated text) read with ``scenario`` (a file's path or a bundled name) and the
    ``overrides`` (:func:`rule_variants`), or None without ``rules``.

    Raises:
        TypeError: ``scenario`` is not a path, or a file is not one.
        ValueError: ``rules`` with ``policies``, a file refused (:func:`rule_variants`).
    """
    if rules is None:
        return None
    items = rules.split(",") if isinstance(rules, str) else list(rules)
    if not all(isinstance(f, str | os.PathLike) and str(f).strip() for f in items):
        raise TypeError(
            "rules: expected FlexMatch rule-set files (a list, or one comma-separated text), "
            f"got {rules!r}"
        )
    if policies:
        raise ValueError("rules, policies: compare rule sets or policies, not both")
    if not isinstance(scenario, str | os.PathLike):
        raise TypeError(
            "scenario: a comparison of rule sets reads the scenario's file with each rule "
            f"set: give its path or a bundled name, got {type(scenario).__name__}"
        )
    files = [str(f).strip() for f in items]
    try:
        return rule_variants(Path(scenario), files, overrides=overrides, seed=seed, where="rules")
    except RunError as exc:
        raise ValueError(str(exc)) from None
