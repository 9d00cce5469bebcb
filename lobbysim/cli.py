"""The ``lobbysim`` command: a thin shell over library functions.

``build_parser()`` builds the argument parser and ``main(argv) -> int`` runs one subcommand; every
subcommand is one library call that the tests can also make directly. User errors go to stderr as
one line each with a non-zero exit status and no traceback.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lobbysim import __version__
from lobbysim.progress import Progress
from lobbysim.validation import ScenarioError


class UserError(Exception):
    """A problem with what the user asked for: reported as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    """Build the ``lobbysim`` argument parser with all its subcommands."""
    parser = argparse.ArgumentParser(
        prog="lobbysim",
        description=(
            "Simulate a matchmaking lobby: queue times, match fairness and rating accuracy "
            "for matchmaking policies compared on the same random numbers."
        ),
    )
    parser.add_argument("--version", action="version", version=f"lobbysim {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_run_parsers(subparsers)
    _add_sweep_parser(subparsers)
    _add_tune_parser(subparsers)
    _add_paper_parser(subparsers)
    _add_init_parser(subparsers)
    from lobbysim.commands.log import add_log_parser
    from lobbysim.commands.rules import add_rules_parser
    from lobbysim.commands.schema import add_schema_parser

    add_rules_parser(subparsers)
    add_schema_parser(subparsers)
    add_log_parser(subparsers)
    _add_calibrate_parser(subparsers)
    return parser


class _SetField(argparse.Action):
    """An option standing for ``--set FIELD=VALUE``: appended to ``sets`` in command-line order."""

    def __init__(self, option_strings: Sequence[str], dest: str, field: str, **kwargs: Any):
        super().__init__(option_strings, dest, **kwargs)
        self.field = field

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        sets = [*getattr(namespace, self.dest, []), f"{self.field}={values}"]
        setattr(namespace, self.dest, sets)


def _scenario_options(*, auto: bool = False) -> argparse.ArgumentParser:
    """Return the parent parser of the options every command running a scenario file shares;
    ``auto``: with ``--replications auto`` and its options (``run`` and ``compare``)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "scenario",
        type=Path,
        help="the scenario YAML file, or a bundled scenario's name (lobbysim init --list)",
    )
    if auto:
        common.add_argument(
            "--replications",
            default=None,
            metavar="N|auto",
            help="replications per policy (default: the scenario's); auto: the scenario's (at "
            "least 5), then more in batches until, for every headline metric and policy, the "
            "95%% interval's half-width is at most --precision times its mean and, with "
            "uniform_random and oracle compared, each captured share's half-width at most "
            "--precision (absolute), or until --max-replications; the output says which rule "
            "stopped it and the half-widths reached (precision.csv lists them); the same as "
            "--replications N for the N it stops at",
        )
        common.add_argument(
            "--precision",
            default=None,
            metavar="P",
            help="with --replications auto: the largest half-width of a headline interval as a "
            "share of its mean, and of a captured share (default: 0.1, i.e. ±10%% of the mean "
            "and ±10 points)",
        )
        common.add_argument(
            "--max-replications",
            default=None,
            metavar="N",
            help="with --replications auto: the cap per policy (default: 50)",
        )
    else:
        common.add_argument(
            "--replications",
            default=None,
            metavar="N",
            help="replications per policy (default: the scenario's)",
        )
    common.add_argument(
        "--seed", type=int, default=None, help="master seed (default: the scenario's)"
    )
    common.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default: under outputs/, named after the scenario)",
    )
    common.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY.PATH=VALUE",
        help="override a scenario field, e.g. --set matchmaker.tick=0.5 (repeatable)",
    )
    common.add_argument(
        "--records-format",
        dest="sets",
        action=_SetField,
        field="records.format",
        choices=["csv", "parquet"],
        default=argparse.SUPPRESS,
        help="the format of the record files, csv or parquet (needs pip install "
        "'lobbysim[parquet]'); the same as --set records.format=FORMAT (default: the "
        "scenario's records.format, which is csv unless set)",
    )
    common.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="worker processes (default: the CPUs available); the results do not depend on it",
    )
    _add_quiet(common)
    return common


def _add_quiet(parser: argparse.ArgumentParser) -> None:
    """Add ``--quiet``: no progress (a bar on a terminal, else a line every 10 s)."""
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="show no progress (by default: a bar on a terminal, else a line every 10 s on "
        "standard error)",
    )


def _add_run_parsers(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``run``, ``compare``, ``validate`` and ``plugins``."""
    common = _scenario_options(auto=True)
    run = subparsers.add_parser(
        "run",
        parents=[common],
        help="run a scenario and write its report",
        description=(
            "Run a scenario's replications and write metrics, records and a report into --out "
            "(new or empty; default: outputs/<scenario name>-<UTC time>)."
        ),
    )
    run.set_defaults(handler=_run, policies=None)
    compare = subparsers.add_parser(
        "compare",
        parents=[common],
        help="compare policies on common random numbers, with confidence intervals",
        description=(
            "Run the scenario once per policy on the same replication seeds (common random "
            "numbers) and report each metric's mean with a 95%% interval and the paired "
            "differences from the first policy."
        ),
    )
    compare.add_argument(
        "--policies",
        default=None,
        help="comma-separated policies, each a name or a spec with parameters, e.g. "
        "'draw_chance,knowledge_gradient(gamma=0.95)'; the first is the reference of the paired "
        "differences (default: the scenario's compare: section, else its own policy and the "
        "baselines uniform_random and oracle)",
    )
    compare.set_defaults(handler=_run)
    validate = subparsers.add_parser(
        "validate",
        help="check scenario files without running them (or their plug-ins' code)",
        description=(
            "Check scenario files: one line per problem, exit status 2 if any. Runs no code of "
            "the scenario's: a user plug-in (file.py:Class, module:Class) is checked by "
            "reference only (the file exists, the module is installed, the names are "
            "identifiers) unless --import-plugins."
        ),
    )
    validate.add_argument(
        "scenarios", type=Path, nargs="+", help="scenario YAML files or bundled scenarios' names"
    )
    validate.add_argument(
        "--import-plugins",
        action="store_true",
        help="import the user plug-ins the scenarios name (this runs their code) and check "
        "them as run does",
    )
    validate.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print the fast plan: which speed kernels a run uses, and why (or why not)",
    )
    validate.set_defaults(handler=_validate)
    plugins = subparsers.add_parser(
        "plugins",
        help="list every arrival model, policy, assignment, rater and game mode",
    )
    plugins.set_defaults(handler=_plugins)


def _display(args: argparse.Namespace) -> Progress:
    """Return the progress display of a command: a bar on a terminal, a line every 10 s
    otherwise (``$LOBBYSIM_PROGRESS_EVERY`` seconds), nothing with ``--quiet``."""
    return Progress(enabled=not getattr(args, "quiet", False))


@contextmanager
def _progress_bar(
    args: argparse.Namespace, desc: str, unit: str
) -> Iterator[Callable[[int, int], None]]:
    """Yield a ``progress(done, total)`` callback of one stage of :func:`_display`."""
    with _display(args).stage(desc, unit) as update:
        yield update


def _replications(text: str | None) -> int | None:
    """Return ``--replications`` of a sweep: a whole number (None: not given)."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        hint = " (auto is for lobbysim run and compare)" if text.strip() == "auto" else ""
        raise UserError(
            f"--replications: expected a whole number >= 1, got {text!r}{hint}"
        ) from None


def _run_replications(text: str | None) -> int | str | None:
    """Return ``--replications`` of ``run`` and ``compare``: a whole number or ``auto``."""
    if text is not None and text.strip().lower() == "auto":
        return "auto"
    try:
        return _replications(text)
    except UserError:
        raise UserError(
            f"--replications: expected a whole number >= 1 or auto, got {text!r}"
        ) from None


def _auto_options(args: argparse.Namespace) -> tuple[float | None, int | None]:
    """Return ``--precision`` and ``--max-replications`` as numbers (None: not given)."""
    precision: float | None = None
    cap: int | None = None
    if args.precision is not None:
        try:
            precision = float(args.precision)
        except ValueError:
            precision = math.nan
        if not 0 < precision < math.inf:
            raise UserError(f"--precision: expected a number > 0, got {args.precision!r}")
    if args.max_replications is not None:
        try:
            cap = int(args.max_replications)
        except ValueError:
            raise UserError(
                f"--max-replications: expected a whole number, got {args.max_replications!r}"
            ) from None
    return precision, cap


def _policy_names(option: str | None) -> list[str]:
    """Return the specs of a ``--policies a,b(x=1),c`` option (empty if it was not given)."""
    from lobbysim.scenario.specs import split_specs

    names = split_specs(option) if option else []
    if option is not None and not all(names):
        raise UserError(
            f"--policies: expected comma-separated policies (name or name(key=value, ...)), "
            f"got {option!r}"
        )
    return names


def _say_which_file(scenario: Path) -> None:
    """Print which file a scenario argument names when a file here wins over a bundled
    scenario of that name (:func:`lobbysim.scenario.bundled.local_file_note`)."""
    from lobbysim.scenario.bundled import local_file_note

    line = local_file_note(scenario)
    if line is not None:
        print(line, flush=True)


def _print_wrapped(line: str) -> None:
    """Print a note to the terminal, wrapped to the headline's width."""
    from lobbysim.reporting.headline import wrap_terminal

    print("\n".join(wrap_terminal(line, indent="  ")), flush=True)


def _run(args: argparse.Namespace) -> int:
    """Handle ``lobbysim run`` and ``lobbysim compare``."""
    import shlex

    from lobbysim.commands.run import RunError, run, run_summary
    from lobbysim.paper import default_jobs
    from lobbysim.registry import PluginError
    from lobbysim.scenario import ScenarioError

    policies = _policy_names(args.policies)
    replications = _run_replications(args.replications)
    precision, cap = _auto_options(args)
    jobs = args.jobs if args.jobs is not None else default_jobs()
    command = "lobbysim " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv else None
    _say_which_file(args.scenario)
    try:
        out, result = run(
            args.scenario,
            seed=args.seed,
            replications=replications,
            precision=precision,
            max_replications=cap,
            policies=policies,
            out=args.out,
            sets=args.sets,
            jobs=jobs,
            progress=_display(args),
            command=command,
            compare=args.command == "compare",
            note=_print_wrapped,
        )
    except (RunError, ScenarioError, PluginError) as exc:
        raise UserError(str(exc)) from None
    print(f"wrote {out}\n")
    print(run_summary(result, out))
    return 0


def _validate(args: argparse.Namespace) -> int:
    """Handle ``lobbysim validate``: one line per problem, exit 2 if any."""
    from lobbysim.commands.run import (
        fast_plan_lines,
        plugins_not_imported,
        validate,
        validate_warnings,
    )

    imports = args.import_plugins
    for path in args.scenarios:
        _say_which_file(path)
    problems = validate(args.scenarios, import_plugins=imports)
    for line in problems:
        print(f"lobbysim: error: {line}", file=sys.stderr)
    if not problems:
        for line in validate_warnings(args.scenarios, import_plugins=imports):
            print(f"lobbysim: warning: {line}", file=sys.stderr)
        for path in args.scenarios:
            skipped = [] if imports else plugins_not_imported(path)
            print(
                f"{path}: ok"
                + (
                    f" (plug-ins not imported, so not run: {', '.join(skipped)}; "
                    "--import-plugins imports and checks them)"
                    if skipped
                    else ""
                )
            )
            for line in fast_plan_lines(path, import_plugins=imports) if args.verbose else ():
                print(f"  {line}")
    return 2 if problems else 0


def _add_init_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lobbysim init``: copy a bundled scenario out to edit it, or list them."""
    init = subparsers.add_parser(
        "init",
        help="copy a bundled scenario into a file of your own to edit (no name: list them)",
        description=(
            "Copy the bundled scenario NAME to ./NAME.yaml (or --to), with any plug-in file it "
            "needs, never overwriting a file. Without NAME, or with --list, list the bundled "
            "scenarios."
        ),
    )
    init.add_argument("name", nargs="?", default=None, help="a bundled scenario's name")
    init.add_argument(
        "--to",
        type=Path,
        default=None,
        metavar="PATH",
        help="the file to write, or a folder to write NAME.yaml into (default: ./NAME.yaml)",
    )
    init.add_argument("--list", action="store_true", help="list the bundled scenarios")
    init.set_defaults(handler=_init)


def _init(args: argparse.Namespace) -> int:
    """Handle ``lobbysim init``."""
    import shlex

    from lobbysim.commands.init import InitError, bundled_list, init_scenario

    if args.name is None or args.list:
        scenarios = bundled_list()
        width = max(len(name) for name, _ in scenarios)
        print("bundled scenarios (lobbysim run NAME runs one; lobbysim init NAME copies it):")
        for name, headline in scenarios:
            print(f"  {name:<{width}}  {headline}".rstrip())
        return 0
    try:
        written = init_scenario(args.name, args.to)
    except InitError as exc:
        raise UserError(f"init: {exc}") from None
    for path in written:
        print(f"wrote {path}")
    print(f"run it: lobbysim run {shlex.quote(str(written[0]))}")
    return 0


def _plugins(args: argparse.Namespace) -> int:
    """Handle ``lobbysim plugins``."""
    from lobbysim.commands.run import plugins_text

    print(plugins_text())
    return 0


def _add_sweep_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lobbysim sweep``: a grid of settings x policies x replications, resumable."""
    sweep = subparsers.add_parser(
        "sweep",
        parents=[_scenario_options()],
        help="run every combination of some settings for several policies, resumably",
        description=(
            "Run the scenario for every combination of the --grid values (or of its sweep: "
            "section), for each policy and replication, on common random numbers. Each finished "
            "run is saved at once; running the same sweep again skips what is done. Writes "
            "results.csv, failures.csv and a trade-off report with Pareto frontiers into --out "
            "(new, empty, or the same sweep's folder, which is resumed; default: "
            "outputs/<scenario name>-sweep-<hash of the sweep>)."
        ),
    )
    sweep.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="KEY.PATH=V1,V2,...",
        help="a swept field and its values, e.g. --grid matchmaker.tick=0.25,1 (repeatable; "
        "replaces the file's sweep.grid)",
    )
    sweep.add_argument(
        "--policies",
        default=None,
        help="comma-separated policies, each a name or a spec with parameters, e.g. "
        "'draw_chance,knowledge_gradient(gamma=0.95)' (default: the file's sweep.policies, else "
        "its own policy)",
    )
    sweep.add_argument(
        "--executor",
        default="local",
        choices=["local", "dask", "dask-local"],
        help="local process pool (default), an existing Dask cluster (with --scheduler), or a "
        "Dask LocalCluster started for the sweep; Dask needs: pip install 'lobbysim[dask]'",
    )
    sweep.add_argument(
        "--scheduler", default=None, metavar="tcp://HOST:PORT", help="the Dask scheduler"
    )
    sweep.set_defaults(handler=_run_sweep)


def _run_sweep(args: argparse.Namespace) -> int:
    """Handle ``lobbysim sweep``."""
    import time

    from lobbysim.commands.run import RunError
    from lobbysim.commands.sweep import build_sweep, check_executor, default_folder, run_sweep
    from lobbysim.experiments.sweeps import SweepError
    from lobbysim.paper import default_jobs
    from lobbysim.registry import PluginError
    from lobbysim.reporting.document import HTML_FILE
    from lobbysim.reporting.sweep_headline import build_sweep_headline, sweep_headline_text
    from lobbysim.scenario import ScenarioError

    policies = _policy_names(args.policies)
    jobs = args.jobs if args.jobs is not None else default_jobs()
    start = time.perf_counter()
    _say_which_file(args.scenario)
    display = _display(args)
    try:
        check_executor(args.executor, args.scheduler)  # before the set-up, and any connection
        sweep = build_sweep(
            args.scenario,
            grid=args.grid,
            policies=policies,
            replications=_replications(args.replications),
            seed=args.seed,
            sets=args.sets,
            progress=display,
        )
        folder = args.out if args.out is not None else default_folder(sweep)
        outcome = run_sweep(
            sweep,
            folder,
            executor=args.executor,
            jobs=jobs,
            scheduler=args.scheduler,
            progress=display,
        )
    except (SweepError, RunError, ScenarioError, PluginError) as exc:
        raise UserError(str(exc)) from None
    cells, runs = len(sweep.cells), outcome.total
    print(
        f"sweep: {cells} cells x {len(sweep.policies)} policies x {sweep.replications} "
        f"replications = {runs} runs: {outcome.skipped} already done, {outcome.ran} run now, "
        f"{outcome.failed} failed ({time.perf_counter() - start:.1f} s)"
    )
    for row in outcome.failures.itertuples(index=False):
        last = str(row.error).strip().splitlines()[-1] if str(row.error).strip() else ""
        print(
            f"failed: cell {row.cell}, policy {row.policy}, replication {row.replication} "
            f"(seed {row.seed}): {last}",
            file=sys.stderr,
        )
    print(sweep_headline_text(build_sweep_headline(outcome.results, sweep.grid_keys)))
    print(f"wrote {outcome.folder}\nReport: {outcome.folder / HTML_FILE}")
    return 1 if len(outcome.failures) else 0


def _add_tune_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lobbysim tune``: the best setting within constraints, found by simulation."""
    tune = subparsers.add_parser(
        "tune",
        help="find the best setting of some scenario fields within constraints, by simulation",
        description=(
            "Search the --space file's fields (ranges, choices, expansion schedules) for the "
            "setting that optimises its objective while keeping its constraints at the "
            "pessimistic end of their 95%% intervals, on common random numbers, with more "
            "replications for the promising candidates; then re-evaluate the best on fresh seeds "
            "against the scenario as it is. Resumable: running the same study again reads every "
            "finished run. Writes trials.csv, evaluation.csv, differences.csv, tuned.yaml and a "
            "report into --out (default: outputs/<scenario name>-tune-<hash of the study>). "
            "Needs Optuna: pip install 'lobbysim[tune]'."
        ),
    )
    tune.add_argument(
        "scenario",
        type=Path,
        help="the scenario YAML file, or a bundled scenario's name (lobbysim init --list)",
    )
    tune.add_argument(
        "--space", type=Path, required=True, help="the study's YAML file (docs/tune.md)"
    )
    tune.add_argument(
        "--seed", type=int, default=None, help="master seed (default: the scenario's)"
    )
    tune.add_argument("--out", type=Path, default=None, help="the study's folder")
    tune.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY.PATH=VALUE",
        help="override a scenario field before tuning (repeatable)",
    )
    tune.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="worker processes (default: the CPUs available); the results do not depend on it",
    )
    tune.add_argument(
        "--executor",
        default="local",
        choices=["local", "dask", "dask-local"],
        help="local process pool (default), an existing Dask cluster (with --scheduler), or a "
        "Dask LocalCluster; Dask needs: pip install 'lobbysim[dask]'",
    )
    tune.add_argument(
        "--scheduler", default=None, metavar="tcp://HOST:PORT", help="the Dask scheduler"
    )
    _add_quiet(tune)
    tune.set_defaults(handler=_run_tune)


def _run_tune(args: argparse.Namespace) -> int:
    """Handle ``lobbysim tune``: exit 0 with an answer, 1 when no trial was feasible."""
    from lobbysim.commands.run import RunError
    from lobbysim.commands.sweep import check_executor
    from lobbysim.commands.tune import default_folder, load_study, tune
    from lobbysim.experiments.sweeps import SweepError
    from lobbysim.paper import default_jobs
    from lobbysim.registry import PluginError
    from lobbysim.reporting.document import HTML_FILE
    from lobbysim.reporting.tune import tune_headline_text
    from lobbysim.scenario import ScenarioError
    from lobbysim.tuning.space import SpaceError
    from lobbysim.tuning.study import TuneError

    jobs = args.jobs if args.jobs is not None else default_jobs()
    _say_which_file(args.scenario)
    try:
        if jobs < 1:
            raise TuneError(f"--jobs: expected a whole number >= 1, got {jobs}")
        check_executor(args.executor, args.scheduler)
        scenario, space = load_study(args.scenario, args.space, sets=args.sets, seed=args.seed)
        folder = args.out if args.out is not None else default_folder(scenario, space)
        result = tune(
            scenario,
            space,
            folder,
            executor=args.executor,
            jobs=jobs,
            scheduler=args.scheduler,
            progress=_display(args),
            note=None if args.quiet else _print_wrapped,
        )
    except (SpaceError, TuneError, SweepError, RunError, ScenarioError, PluginError) as exc:
        raise UserError(str(exc)) from None
    print(tune_headline_text(result))
    if result.tuned is not None:
        print(f"wrote {folder} (tuned.yaml: the scenario with the best setting)")
    else:
        print(f"wrote {folder}")
    print(f"Report: {folder / HTML_FILE}")
    return 0 if result.best is not None else 1


def _add_calibrate_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """Add ``lobbysim calibrate``: a scenario fitted to a match log, raters scored on it."""
    calibrate = subparsers.add_parser(
        "calibrate",
        help="fit a scenario to a game's match log and score the raters on it",
        description=(
            "Read a match log (CSV, gzipped CSV or Parquet; one row per seat, or one per 1v1 game "
            "with a mapping such as lobbysim/calibration/mappings/lichess.yaml), fit the player "
            "base, its visits, sessions, games and skills, refine them by simulation, score the "
            "raters on the log, and write the scenario to --to and a report (docs/calibrate.md)."
        ),
    )
    calibrate.add_argument("log", type=Path, help="the match log")
    calibrate.add_argument(
        "--to", type=Path, required=True, help="the scenario file to write (.yaml)"
    )
    calibrate.add_argument(
        "--columns", type=Path, default=None, help="a YAML column mapping (docs/calibrate.md)"
    )
    calibrate.add_argument(
        "--template",
        type=Path,
        default=None,
        help="a scenario (file or bundled name) whose other fields the result keeps: the "
        "matchmaker, the raters, the players' patience (default: lobbysim's defaults)",
    )
    calibrate.add_argument(
        "--raters",
        default="bayesian,sph_elo,glicko2,openskill",
        help="the raters to score on the log, comma-separated, or none",
    )
    calibrate.add_argument(
        "--refine",
        type=int,
        default=3,
        help="simulations that refine the visit rate, games per visit and skill spread "
        "(0: none)",
    )
    calibrate.add_argument("--seed", type=int, default=1, help="the simulations' first seed")
    calibrate.add_argument(
        "--report",
        type=Path,
        default=None,
        help="the report's folder, new or empty (default: outputs/<log name>-calibration-<time>)",
    )
    calibrate.set_defaults(handler=_run_calibrate)


def _run_calibrate(args: argparse.Namespace) -> int:
    """Handle ``lobbysim calibrate``."""
    from lobbysim.calibration.read import LogError
    from lobbysim.commands.calibrate import CalibrateError, run_calibrate
    from lobbysim.commands.run import load_run_scenario
    from lobbysim.outputs import timestamped
    from lobbysim.registry import PluginError
    from lobbysim.reporting.document import HTML_FILE
    from lobbysim.scenario import ScenarioError

    raters = [r.strip() for r in args.raters.split(",") if r.strip() and r.strip() != "none"]
    stem = args.log.name.split(".")[0] or "log"
    report = args.report or timestamped(Path("outputs"), f"{stem}-calibration")
    try:
        template = load_run_scenario(args.template, []) if args.template is not None else None
        outcome = run_calibrate(
            args.log,
            args.to,
            mapping=args.columns,
            template=template,
            raters=raters,
            refine=args.refine,
            seed=args.seed,
            report=report,
            note=_print_wrapped,
        )
    except (LogError, CalibrateError, ScenarioError, PluginError) as exc:
        raise UserError(str(exc)) from None
    for line in outcome.scores:
        print(line)
    print(f"wrote {outcome.scenario_file} (run it: lobbysim run {outcome.scenario_file})")
    print(f"Report: {report / HTML_FILE}")
    return 0


def _count(text: str) -> int:
    """Return a count given as a whole number, also written ``1e6`` or ``10_000``."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value == int(value)):
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    return int(value)


def _add_paper_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lobbysim paper``: the paper's Section 4 study with figures and a claims check."""
    from lobbysim.paper import CASES, DEFAULT_POLICIES

    paper = subparsers.add_parser(
        "paper",
        help="reproduce the paper's simulation study (Section 4) and check its claims",
        description=(
            "Run the single-player study of Ryzhov, Tariq & Powell (2011), Section 4: player 0 "
            "plays N games against opponents a policy picks; every policy sees the same sample "
            "paths. Writes per_game.csv, windows.csv, claims.csv, PNG figures and summary.md "
            "into a new folder."
        ),
    )
    paper.add_argument(
        "--case", choices=CASES, required=True, help="player 0's place in the prior ranking"
    )
    paper.add_argument(
        "--equal-priors", action="store_true", help="start every prior mean at 0 (the truths not)"
    )
    paper.add_argument(
        "--paths", type=_count, default=1000, help="sample paths (>= 2; default: %(default)s)"
    )
    paper.add_argument("--seed", type=int, default=0, help="master seed (default: %(default)s)")
    paper.add_argument(
        "--policies",
        default=",".join(DEFAULT_POLICIES),
        help="comma-separated policy names (default: %(default)s)",
    )
    paper.add_argument(
        "--games",
        type=_count,
        default=500,
        help=(
            "games per path N (>= 3; default: %(default)s); windows 1-100, 101-200, 201-N, or "
            "for N < 500 the first fifth, the second fifth and the rest"
        ),
    )
    paper.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="worker processes (default: the CPUs available); the results do not depend on it",
    )
    paper.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder, new or empty (default: outputs/paper-<case>[-equal]-<UTC time>)",
    )
    _add_quiet(paper)
    paper.set_defaults(handler=_run_paper)


def _run_paper(args: argparse.Namespace) -> int:
    """Handle ``lobbysim paper``: run the study with a progress bar and print the claims."""
    import pandas as pd

    from lobbysim.commands.paper import PaperArgumentError, run_paper
    from lobbysim.registry import PluginError
    from lobbysim.reporting.paper import format_estimate

    policies = [name.strip() for name in args.policies.split(",")]
    with _progress_bar(args, "paper study", "blocks") as progress:
        try:
            out = run_paper(
                args.case,
                equal_priors=args.equal_priors,
                paths=args.paths,
                seed=args.seed,
                policies=policies,
                games=args.games,
                jobs=args.jobs,
                out=args.out,
                progress=progress,
            )
        except PaperArgumentError as exc:
            raise UserError(f"--{exc}") from None
        except PluginError as exc:
            raise UserError(f"--policies {args.policies!r}: {exc}") from None
    print(f"wrote {out}")
    claims = pd.read_csv(out / "claims.csv")
    if claims.empty:
        print("no claims apply (knowledge_gradient vs another policy needed)")
    for row in claims.itertuples(index=False):
        claim = str(row.claim).split(" ", 1)[0]
        statistic = str(row.statistic).split(";", 1)[0]
        estimate = format_estimate(float(row.estimate), float(row.se))
        print(
            f"{claim} {row.comparison} [{row.window}] {statistic}: {estimate}, "
            f"z = {row.z:+.2f}: {row.verdict}"
        )
    return 0


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is so that it cleans up as after Ctrl-C."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``lobbysim`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit status.

    Ctrl-C and SIGTERM stop the command the same way: worker processes are stopped, temporary
    output folders removed, and the exit status is 130 (Ctrl-C) or 143 (SIGTERM). A closed
    standard output (``lobbysim run ... | head``) ends the command with status 2 and one line,
    as does a full disk or an output that cannot be written (naming the path).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        handler = args.handler
        status = int(handler(args))
        sys.stdout.flush()  # here, so that a closed pipe is reported below
        return status
    except (UserError, ScenarioError) as exc:  # a handler's ScenarioError: one line a problem
        for line in str(exc).splitlines() or [""]:
            print(f"lobbysim: error: {line}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # Python would report the closed pipe again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        print("lobbysim: error: standard output was closed (broken pipe)", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, an output that cannot be written: one line, exit 2
        from lobbysim.outputs import storage_problem

        problem = storage_problem(exc)
        if problem is None:
            raise
        print(f"lobbysim: error: {problem}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, Terminated)
        print(f"lobbysim: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        return 143 if terminated else 130
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
