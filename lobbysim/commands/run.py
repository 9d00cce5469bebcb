"""The library behind ``lobbysim run`` and ``compare`` (the scenario loaded and checked by
:mod:`lobbysim.commands.run_scenario`).

Each command is one function that the tests call directly; :mod:`lobbysim.cli.main` only parses
arguments. A run's folder holds everything needed to understand and repeat it: the resolved
scenario (``scenario.yaml``, loadable as it is), the metrics of every replication
(``replications.csv``), the summary with 95% intervals (``summary.csv``), for a comparison the
paired differences from the baseline (``differences.csv``), the record frames of each policy's first
replication (``records/<policy>/``; with ``records.stream``, every replication's, under
``records/<policy>/rep-<r>/``), one file per kind in the scenario's ``records.format``: CSV by
default, or Parquet (``--records-format``; :mod:`lobbysim.records.files`), and the
report (``report.md``, ``report.html`` and figures). It is written atomically
(:mod:`lobbysim.records.outputs`). Of each replication, once it has run, the command keeps only
what the
folder needs: its metrics and the small parts of it that the report's figures draw
(:mod:`lobbysim.experiments.figure_data`), computed in its worker, which drops its record
frames (but the first replication's of each policy, its ``records/<policy>/`` unless streamed),
so that a comparison's memory does not grow with its replications.

Policies are names or specs with parameters, ``knowledge_gradient(gamma=0.95)``
(:mod:`lobbysim.scenario.specs`); each goes by its spec's text in the tables, and its records
folder is that label made a safe folder name (``records/knowledge_gradient-gamma=0.95/``).
:func:`~lobbysim.commands.run_scenario.compare_policies` says what ``compare`` runs without
``--policies``.

A comparison of FlexMatch rule sets (``compare --rules a.json,b.json``, ``run(rules=...)``, or a
``compare: {rules: [...]}`` section) compares *variants* of another kind: the scenario read
with each file as its rule set (:func:`~lobbysim.commands.run_scenario.rule_variants`), its own
policy for all, each labelled by the file's stem; the tables, records and report are a policy
comparison's, the labels the rule sets'. Its folder keeps a copy of each file,
``rules/<label>.json``, and its ``scenario.yaml`` names the first copy as its rule set
(``matchmaker.rules: {flexmatch: rules/<first>.json, attributes: ...}``) and every copy in a
``compare: {rules: [...]}`` section, so that ``lobbysim run scenario.yaml`` runs the baseline and
``lobbysim compare scenario.yaml`` repeats the comparison: :func:`write_run_folder` says why
copies.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from lobbysim.commands.run_folder import rule_copy
from lobbysim.commands.run_scenario import (
    RunError,
    check_scenario,
    compare_policies,
    rule_variants,
)
from lobbysim.experiments.replications import ExperimentResult, run_experiment
from lobbysim.experiments.sequential import (
    DEFAULT_MAX_REPLICATIONS,
    DEFAULT_PRECISION,
    Rule,
    check_rule,
    first_batch,
    run_until_precise,
)
from lobbysim.experiments.variants import RULE_SET, Variants
from lobbysim.records.files import write_frames
from lobbysim.records.outputs import out_folder_problem, timestamped, write_atomically
from lobbysim.records.rows import RECORD_COLUMNS
from lobbysim.registry import PluginError
from lobbysim.running.progress import Progress, ProgressLike, as_progress
from lobbysim.running.time_left import RemainingTime
from lobbysim.scenario import CompareConfig, PluginSpec, Scenario, ScenarioError, folder_label
from lobbysim.scenario.attributes import RATING
from lobbysim.scenario.bundled import find_scenario
from lobbysim.scenario.inputs import as_scenario
from lobbysim.scenario.loading import load_run_scenario
from lobbysim.scenario.specs import policy_spec, record_folders
from lobbysim.stats.metrics import metric_names
from lobbysim.validation import check_run_options

AUTO = "auto"
"""``--replications auto``: replications until the headline is precise
(:mod:`lobbysim.experiments.sequential`)."""


def auto_rule(
    scenario: Scenario,
    precision: object = None,
    max_replications: object = None,
    where: str = "--",
) -> tuple[Rule, list[str]]:
    """Return the stopping rule of ``--replications auto`` for ``scenario`` and the headline
    metrics it makes precise; ``where`` prefixes the options' names in errors (``--`` on the
    command line, nothing in the Python API).

    Raises:
        RunError: a precision that is not a number > 0, a cap below the first batch (the
            scenario's replications, at least 5), no headline metric (one line each).
    """
    from lobbysim.reporting.headline import RETENTION_HEADLINE, headline_metrics

    first = first_batch(scenario.replications)
    precision = DEFAULT_PRECISION if precision is None else precision
    cap = DEFAULT_MAX_REPLICATIONS if max_replications is None else max_replications
    raters = [scenario.raters.driver.name, *(s.name for s in scenario.raters.shadows)]
    columns = [
        *metric_names(raters, base=scenario.base is not None, teams=scenario.game.mode == "team"),
        *RETENTION_HEADLINE,
    ]
    headline = headline_metrics(columns, scenario.raters.driver.name)
    problems = check_rule(first, precision, cap, headline, where)
    if problems:
        raise RunError("\n".join(problems))
    assert isinstance(precision, int | float) and isinstance(cap, int)
    return Rule(first, float(precision), cap), headline


def run(
    path: str | Path | Scenario,
    *,
    seed: int | None = None,
    replications: int | str | None = None,
    precision: float | None = None,
    max_replications: int | None = None,
    policies: Sequence[str | PluginSpec] = (),
    out: str | Path | None = None,
    sets: Sequence[str] = (),
    jobs: int = 1,
    progress: ProgressLike = None,
    command: str | None = None,
    compare: bool = False,
    report: bool = True,
    note: Callable[[str], None] | None = None,
    rules: Sequence[str | Path] = (),
    variants: Variants | None = None,
) -> tuple[Path, ExperimentResult]:
    """Run (or, with ``policies`` or ``compare``, compare) a scenario and write its folder;
    return both.

    Args:
        path: the scenario file, a bundled scenario's name, or a :class:`Scenario`.
        seed: replaces the scenario's seed.
        replications: replaces the scenario's replications; ``"auto"``: the scenario's (at
            least 5), then more until the headline's intervals are precise
            (:mod:`lobbysim.experiments.sequential`: the rule, said through ``note``, and
            ``precision.csv`` in the folder).
        precision: with ``"auto"``: the largest half-width of a headline interval, relative to
            its mean (and, for a captured share, absolute); default 0.1.
        max_replications: with ``"auto"``: the cap (default 50).
        policies: compare these policies on common random numbers (the first is the baseline):
            names or specs with parameters (:mod:`lobbysim.scenario.specs`).
        out: the output folder (default ``outputs/<scenario name>-<UTC time>``); must be new or
            empty.
        sets: ``key.path=value`` overrides.
        jobs: worker processes.
        progress: a :class:`lobbysim.running.progress.Progress` (the runs, the simulated time inside
            them, the records and the report), or a callback ``progress(done, total)`` of the
            finished runs.
        command: the command line, recorded in the report.
        compare: without ``policies``, compare the policies of :func:`compare_policies`.
        report: write the report (``report.md``, ``report.html``, figures) too.
        note: called with one line saying which policies a comparison without ``policies``
            runs, and why, and with ``"auto"`` with the lines of the procedure.
        rules: compare these FlexMatch rule-set files (the first is the baseline) on common
            random numbers, each in place of the scenario's rules with its own policy, as
            ``--set matchmaker.rules.flexmatch=FILE`` runs it (see the module docstring); not
            with ``policies``. Without ``rules`` or ``policies``, a comparison runs the
            scenario's ``compare: {rules: [...]}`` section if it has one.
        variants: compare these, already read (:func:`lobbysim.commands.run_scenario.
            rule_variants`: the Python API's, with its overrides), instead of ``rules`` or
            ``policies``; ``path`` is then their first scenario.

    Raises:
        RunError, ScenarioError, PluginError: a problem with the arguments, the scenario or a
            rule-set file (one line each, naming it); nothing is written then.
    """
    auto = replications == AUTO
    if not auto and (precision is not None or max_replications is not None):
        given = "--precision" if precision is not None else "--max-replications"
        value = precision if precision is not None else max_replications
        asked = "not given" if replications is None else f"{replications}"
        raise RunError(
            f"{given}: {value} is for --replications auto only (--replications: {asked})"
        )
    check_run_options(seed=seed, replications=None if auto else replications, jobs=jobs)
    if rules and policies:
        raise RunError(
            "--rules and --policies together: compare rule sets (each with the scenario's "
            "policy) or policies, not both"
        )
    if variants is not None and (rules or policies):
        raise RunError("variants: not with rules or policies")
    prebuilt = variants is not None
    if isinstance(path, Scenario):
        if rules:
            raise RunError(
                "--rules: a comparison of rule sets reads the scenario's file with each (as --set "
                "matchmaker.rules.flexmatch=FILE does): give its path, not a Scenario"
            )
        scenario = as_scenario(path, list(sets)) if sets else path
        path = f"scenario {path.name!r}"
    elif rules:
        variants = rule_variants(path, [str(r) for r in rules], sets, seed=seed)
    else:
        scenario = load_run_scenario(path, sets)
        listed = scenario.compare.rules if scenario.compare is not None else None
        if listed:  # named from the scenario file's folder
            files = [os.path.join(find_scenario(path).parent, f) for f in listed]
            if compare and not policies:
                variants = rule_variants(path, files, sets, seed=seed, where="compare.rules")
            else:  # kept resolved, for the folder's scenario.yaml
                scenario = scenario.replace(compare=CompareConfig(rules=tuple(files)))
    if variants is not None:
        scenario = next(iter(variants.scenarios.values()))
        if note is not None:
            source = "the scenario's compare: section"
            source = "--rules" if rules else "rules" if prebuilt else source
            note(_rules_note(variants, source))
    if seed is not None:
        scenario = scenario.replace(seed=seed)
    specs: list[PluginSpec] = []
    if variants is None and (policies or compare):
        try:
            specs, why = compare_policies(scenario, policies)
        except ScenarioError as exc:
            raise ScenarioError([f"{path}: {line}" for line in exc.problems]) from None
        if note is not None and not policies:
            note(why)
    rule, headline = auto_rule(scenario, precision, max_replications) if auto else (None, [])
    if rule is not None:
        count = rule.max_replications
    else:
        count = scenario.replications if replications is None else int(replications)
    try:
        # the record frames kept until the folder is written: the first replication's of each
        # policy (its records/<policy>/); the others keep their metrics and figure data only
        held = len(variants.scenarios) if variants is not None else len(specs or [1])
        check_scenario(
            scenario,
            specs,
            variants=variants.scenarios if variants is not None else None,
            held_runs=held,
        )
    except PluginError as exc:
        raise PluginError("\n".join(f"{path}: {line}" for line in str(exc).splitlines())) from None
    out_path = (
        Path(out) if out is not None else timestamped(Path("outputs"), folder_label(scenario.name))
    )
    # the rule-set files as read now, copied into the folder (write_run_folder)
    texts = _rule_texts(variants) if variants is not None else None
    problem = out_folder_problem(out_path)
    if problem is not None:
        raise RunError(f"--out: {problem}")
    holder: list[ExperimentResult] = []
    # each replication's worker keeps its metrics and what the report draws, not its frames
    keep = "report" if report else "metrics"

    display = as_progress(progress)

    def run_and_write(tmp: Path) -> None:
        # streamed records go straight into the temporary folder's records/
        compared = len(variants.scenarios) if variants is not None else len(specs)
        what = "compare" if compared > 1 else "run"
        records_root = tmp / "records" if scenario.records.stream else None
        if rule is not None:
            try:
                result, reached = run_until_precise(
                    scenario,
                    specs or None,
                    rule,
                    headline,
                    jobs=jobs,
                    progress=display,
                    desc=what,
                    records_root=records_root,
                    note=note,
                    keep=keep,
                    variants=variants,
                )
            except ValueError as exc:
                raise RunError(f"--replications auto: {exc}") from None
            holder.append(result)
            write_run_folder(
                result, tmp, command, report=report, progress=display, rule_texts=texts
            )
            reached.frame().to_csv(tmp / "precision.csv", index=False)
            return
        total = max(compared, 1) * count
        decimals = 1 if display.fine else 0
        estimate = RemainingTime() if display.fine else None
        left = None if estimate is None else estimate.left
        with display.stage(what, "runs", total, decimals=decimals, estimate=left) as update:
            result = run_experiment(
                scenario,
                specs or None,
                count,
                jobs=jobs,
                progress=update,
                records_root=records_root,
                partial=display.fine,
                estimate=estimate,
                keep=keep,
                variants=variants,
            )
        holder.append(result)
        write_run_folder(result, tmp, command, report=report, progress=display, rule_texts=texts)

    try:
        write_atomically(out_path, run_and_write)
    except FileExistsError as exc:
        raise RunError(f"--out: {exc}") from None
    return out_path, holder[0]


def write_run_folder(
    result: ExperimentResult,
    folder: Path,
    command: str | None,
    *,
    report: bool = True,
    progress: ProgressLike = None,
    rule_texts: Mapping[str, bytes] | None = None,
) -> None:
    """Write a run's files into ``folder`` (see the module docstring); ``report=False`` leaves
    out the report, ``progress`` shows the records and the report being written.

    The records of a policy go to ``records/<folder>/``, its label made a safe folder name
    (:func:`lobbysim.scenario.specs.record_folders`). A comparison's ``scenario.yaml`` lists
    its policies in a ``compare:`` section, so that ``lobbysim compare scenario.yaml`` repeats
    it.

    A comparison of rule sets (``result.kind``) copies each rule-set file (``rule_texts``, its
    bytes as read for the run, by label; default: read from ``result.sources`` now) to
    ``rules/<label>.json`` and names the copies (:func:`_rule_set_data`). Copies rather than
    absolute paths: the folder is then whole, as the rest of it is: it repeats the comparison
    after it is moved, shared or archived, and with the rule sets as they were run, not as the
    files read after a later edit (an absolute path would break on the first and silently
    change on the second).
    """
    from lobbysim.reporting.run import write_report

    display = as_progress(progress)
    scenario = result.scenario.replace(replications=len(result.seeds))
    if result.kind == RULE_SET:
        data = _rule_set_data(result, folder, scenario, rule_texts)
        head = (
            "# The scenario of this comparison of FlexMatch rule sets, as run under the first, "
            f"{result.baseline}:\n# lobbysim run scenario.yaml runs it; lobbysim compare "
            "scenario.yaml repeats the comparison\n# (compare.rules: the rule sets, copied into "
            "rules/).\n"
        )
    else:
        if len(result.policies) > 1:
            compared = tuple(policy_spec(label) for label in result.policies)
            scenario = scenario.replace(compare=CompareConfig(compared))
        data = scenario.to_dict()
        head = "# The resolved scenario of this run: lobbysim run scenario.yaml repeats it.\n"
    (folder / "scenario.yaml").write_text(
        head + yaml.safe_dump(data, sort_keys=False), encoding="utf-8"
    )
    result.metrics.to_csv(folder / "replications.csv", index=False)
    result.summary.to_csv(folder / "summary.csv", index=False)
    if len(result.policies) > 1:
        result.differences.to_csv(folder / "differences.csv", index=False)
    folders = record_folders(result.policies)
    with display.stage("records", "policies", len(result.policies)) as update:
        for done, policy in enumerate(result.policies, start=1):
            first = result.runs[policy][0]
            if first.records_dir is None:  # streamed: already under records/<folder>/rep-<r>/
                target = folder / "records" / folders[policy]
                target.mkdir(parents=True)
                frames = {kind: getattr(first, kind, None) for kind in RECORD_COLUMNS}
                kept = {kind: frame for kind, frame in frames.items() if frame is not None}
                write_frames(kept, target, result.scenario.records.format)
            update(done)
    if report:
        with display.stage("report", "steps") as update:
            write_report(result, folder, command=command, progress=update)


def run_summary(result: ExperimentResult, folder: Path) -> str:
    """Return what ``lobbysim run`` and ``compare`` print once ``folder`` is written.

    The headline (per headline metric the best policy with its paired difference, interval and
    adjusted p-value, or the values of a single run), a table of the headline metrics with
    units, and where the tables and ``report.html`` are
    (:func:`lobbysim.reporting.tables.terminal_summary`); "n/a" where one replication gives no
    interval.
    """
    from lobbysim.reporting.tables import terminal_summary

    return terminal_summary(result, folder)


def _rules_note(variants: Variants, source: str) -> str:
    """Return the line saying which rule sets a comparison runs, from where, with which
    policy."""
    labels = list(variants.scenarios)
    policy = next(iter(variants.scenarios.values())).matchmaker.policy.name
    files = ", ".join(f"{label} ({variants.sources[label]})" for label in labels)
    return (
        f"compare: the FlexMatch rule sets {files} ({source}), each with the scenario's policy "
        f"{policy}; the reference of the differences: {labels[0]}"
    )


def _rule_texts(variants: Variants) -> dict[str, bytes]:
    """Return each rule set's file as it is now (just read for the run), by label."""
    try:
        return {label: Path(file).read_bytes() for label, file in variants.sources.items()}
    except OSError as exc:
        raise RunError(f"--rules: {exc.filename}: cannot read the file: {exc.strerror}") from None


def _rule_set_data(
    result: ExperimentResult,
    folder: Path,
    scenario: Scenario,
    texts: Mapping[str, bytes] | None,
) -> dict[str, Any]:
    """Copy a comparison's rule sets into ``folder/rules/`` and return the data of its
    ``scenario.yaml``: ``scenario`` (the first rule set's, as run) with its rules named as that
    rule set's copy, ``matchmaker.rules: {flexmatch: rules/<first>.json, attributes: ...}``,
    and every copy in ``compare.rules``.

    The attributes the rule set declares move from the scenario's ``attributes`` into the
    reference's bindings, and the game fields its teams give (equal to the scenario's) are left
    to it, so that the file reads back into ``scenario`` and another rule set read with it
    (``compare.rules``) binds its attributes and gives its teams as ``--set
    matchmaker.rules.flexmatch=`` does.
    """
    from lobbysim.flexmatch import read_flexmatch

    if texts is None:
        texts = {label: Path(file).read_bytes() for label, file in result.sources.items()}
    copies = {label: rule_copy(result.policies, label) for label in result.policies}
    (folder / "rules").mkdir()
    for label, copy in copies.items():
        (folder / copy).write_bytes(texts[label])
    first = copies[result.baseline]
    imported = read_flexmatch(json.loads(texts[result.baseline]), None, label=first)
    data = scenario.replace(compare=None).to_dict()
    own = dict(data.get("attributes") or {})
    bindings = {name: own.pop(name) for name in imported.declared if name in own}
    if RATING in imported.declared:
        bindings[RATING] = {"source": "rating"}
    data.pop("attributes", None)
    if own:
        data["attributes"] = own
    game = data["game"]
    for key, value in imported.game.items():
        if game.get(key) == value:
            del game[key]
    reference: dict[str, Any] = {"flexmatch": first}
    if bindings:
        reference["attributes"] = bindings
    data["matchmaker"]["rules"] = reference
    data["compare"] = {"rules": list(copies.values())}
    return data


def run_in_memory(
    scenario: Scenario,
    specs: Sequence[PluginSpec],
    variants: Variants | None,
    replications: int | None,
    rule: Rule | None,
    headline: Sequence[str],
    *,
    jobs: int,
    progress: Progress,
) -> ExperimentResult:
    """Run a comparison without writing a folder (:func:`lobbysim.compare` without ``out``):
    ``specs`` (the policies) or ``variants`` (rule sets, say), checked first; with ``rule``,
    until the ``headline`` metrics are precise (:func:`run_until_precise`), else
    ``replications`` (None: the scenario's)."""
    compared = dict(variants.scenarios) if variants is not None else None
    policies = None if variants is not None else specs
    count = len(compared) if compared is not None else len(specs)
    if rule is not None:
        held = rule.max_replications * count
        check_scenario(scenario, specs, variants=compared, held_runs=held)
        try:
            result, _ = run_until_precise(
                scenario,
                policies,
                rule,
                headline,
                jobs=jobs,
                progress=progress,
                note=progress.note,
                variants=variants,
            )
        except ValueError as exc:
            raise ValueError(f"replications auto: {exc}") from None
        return result
    check_scenario(scenario, specs, variants=compared)
    estimate = RemainingTime() if progress.fine else None
    left = None if estimate is None else estimate.left
    decimals = 1 if progress.fine else 0
    with progress.stage("compare", "runs", decimals=decimals, estimate=left) as update:
        return run_experiment(
            scenario,
            policies,
            replications,
            jobs=jobs,
            progress=update,
            partial=progress.fine,
            estimate=estimate,
            variants=variants,
        )
