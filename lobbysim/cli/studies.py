"""The ``lobbysim`` subcommands that run studies over many runs: ``sweep``, ``tune``,
``calibrate`` and ``paper``, each a parser and a handler over its library function (the shared
options are lobbysim/cli/options.py; lobbysim/cli/main.py builds the parser and runs the handler).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from lobbysim.cli.options import (
    UserError,
    add_quiet,
    check_input_file,
    display,
    policy_names,
    print_wrapped,
    progress_bar,
    replications,
    say_which_file,
    scenario_options,
)
from lobbysim.validation import MAX_STUDY_SIMULATIONS


def add_sweep_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lobbysim sweep``: a grid of settings x policies x replications, resumable."""
    sweep = subparsers.add_parser(
        "sweep",
        parents=[scenario_options()],
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

    from lobbysim.commands.run_scenario import RunError
    from lobbysim.commands.sweep import build_sweep, check_executor, default_folder, run_sweep
    from lobbysim.experiments.sweeps import SweepError
    from lobbysim.paper import default_jobs
    from lobbysim.registry import PluginError
    from lobbysim.reporting.document import HTML_FILE
    from lobbysim.reporting.sweep_headline import build_sweep_headline
    from lobbysim.reporting.sweep_headline_wording import sweep_headline_text
    from lobbysim.scenario import ScenarioError

    policies = policy_names(args.policies)
    jobs = args.jobs if args.jobs is not None else default_jobs()
    start = time.perf_counter()
    say_which_file(args.scenario)
    shown = display(args)
    try:
        check_executor(args.executor, args.scheduler)  # before the set-up, and any connection
        sweep = build_sweep(
            args.scenario,
            grid=args.grid,
            policies=policies,
            replications=replications(args.replications),
            seed=args.seed,
            sets=args.sets,
            progress=shown,
        )
        folder = args.out if args.out is not None else default_folder(sweep)
        outcome = run_sweep(
            sweep,
            folder,
            executor=args.executor,
            jobs=jobs,
            scheduler=args.scheduler,
            progress=shown,
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


def add_tune_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lobbysim tune``: the best setting within constraints, found by simulation."""
    tune = subparsers.add_parser(
        "tune",
        help="find the best setting of some scenario fields within constraints, by simulation",
        description=(
            "Search the --space file's fields (ranges, levels, choices, expansion schedules) for "
            "the setting that optimises its objective while keeping its constraints at the "
            "pessimistic end of their 95% intervals, within its budget of simulations: a design "
            "that includes the scenario's own setting, raced on common random numbers, then "
            "Optuna's TPE; then re-evaluate the best on fresh seeds "
            "against the scenario as it is. Resumable: running the same study again reads every "
            "finished run. Writes trials.csv, evaluation.csv, differences.csv, tuned.yaml (or "
            "closest.yaml when the fresh seeds miss a constraint) and a report into --out "
            "(default: outputs/<scenario name>-tune-<hash of the study>). A study that may run "
            "more than --max-simulations simulations (its budget, or trials x the most "
            "replications a trial gets, + 2 x evaluate) is refused before anything runs, with "
            "its estimated time. Needs Optuna: pip install 'lobbysim[tune]'."
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
    _add_max_simulations(tune, "the study may run (trials x the most replications + 2 x evaluate)")
    add_quiet(tune)
    tune.set_defaults(handler=_run_tune)


def _run_tune(args: argparse.Namespace) -> int:
    """Handle ``lobbysim tune``: exit 0 with an answer, 1 when no trial was feasible."""
    from lobbysim.commands.run_scenario import RunError
    from lobbysim.commands.sweep import check_executor
    from lobbysim.commands.tune import default_folder, load_study, tune
    from lobbysim.experiments.sweeps import SweepError
    from lobbysim.paper import default_jobs
    from lobbysim.registry import PluginError
    from lobbysim.reporting.document import HTML_FILE
    from lobbysim.reporting.tune import tune_headline_text
    from lobbysim.scenario import ScenarioError
    from lobbysim.tuning.folder import TuneError
    from lobbysim.tuning.space import SpaceError

    jobs = args.jobs if args.jobs is not None else default_jobs()
    check_input_file("--space", args.space)  # a pipe or a device: refused before it is opened
    say_which_file(args.scenario)
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
            progress=display(args),
            note=None if args.quiet else print_wrapped,
            max_simulations=args.max_simulations,
        )
    except (SpaceError, TuneError, SweepError, RunError, ScenarioError, PluginError) as exc:
        raise UserError(str(exc)) from None
    print(tune_headline_text(result))
    if result.tuned is not None and result.kept:
        print(f"wrote {folder} (tuned.yaml: the scenario with the best setting)")
    elif result.tuned is not None:
        print(f"wrote {folder} (closest.yaml: the best setting found, not kept on fresh seeds)")
    else:
        print(f"wrote {folder}")
    print(f"Report: {folder / HTML_FILE}")
    return 0 if result.best is not None else 1


def add_calibrate_parser(
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
            "raters on the log, and write the scenario to --to and a report (docs/calibrate.md). "
            "More than --max-simulations simulations (--refine + 1) are refused before the log "
            "is read."
        ),
    )
    calibrate.add_argument("log", type=Path, help="the match log")
    calibrate.add_argument(
        "--to", type=Path, required=True, help="the scenario file to write (.yaml, new)"
    )
    calibrate.add_argument(
        "--force", action="store_true", help="replace --to if it is an existing regular file"
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
        type=_count,
        default=3,
        help="simulations that refine the visit rate, games per visit and skill spread (0: none; "
        "default: %(default)s); each simulates the log's whole span, and one more compares the "
        "result with the log",
    )
    calibrate.add_argument("--seed", type=int, default=1, help="the simulations' first seed")
    calibrate.add_argument(
        "--report",
        type=Path,
        default=None,
        help="the report's folder, new or empty (default: outputs/<log name>-calibration-<time>)",
    )
    calibrate.add_argument(
        "--split",
        type=float,
        default=0.5,
        help="the share of the log's matches, by start, the raters are tuned on; the rest "
        "scores them (default: %(default)s)",
    )
    calibrate.add_argument(
        "--window",
        default=None,
        help="fit only the matches that start within FROM..TO (dates, UTC date-times or the "
        "log's minutes; either end may be left out), auto: the log's last stationary stretch, or "
        "all: the whole log (default: the whole log, or its last stationary stretch where its "
        "activity changes beyond what the fitted base follows, said in one line)",
    )
    calibrate.add_argument(
        "--game-age",
        type=_days,
        default=None,
        metavar="DAYS",
        help="how many days the game had run when the log starts (0: the log starts at its "
        "launch); the refining simulations run that long before the log's span, as the skill "
        "fit's correction depends on how well the raters know the players (at most 28 days; "
        "default: long enough for a member to play 20 games, at most 7 days)",
    )
    _add_max_simulations(calibrate, "the calibration may run (--refine + 1)")
    add_quiet(calibrate)
    calibrate.set_defaults(handler=_run_calibrate)


def _run_calibrate(args: argparse.Namespace) -> int:
    """Handle ``lobbysim calibrate``."""
    from lobbysim.calibration.mapping import LogError
    from lobbysim.calibration.run import game_age_problem, refine_problem
    from lobbysim.commands.calibrate import CalibrateError, run_calibrate
    from lobbysim.records.outputs import timestamped
    from lobbysim.registry import PluginError
    from lobbysim.reporting.document import HTML_FILE
    from lobbysim.scenario import ScenarioError
    from lobbysim.scenario.loading import load_run_scenario

    raters = [r.strip() for r in args.raters.split(",") if r.strip() and r.strip() != "none"]
    stem = args.log.name.split(".")[0] or "log"
    report = args.report or timestamped(Path("outputs"), f"{stem}-calibration")
    problem = refine_problem(args.refine, args.max_simulations)  # before the log is read
    if problem is None and args.game_age is not None:
        problem = game_age_problem(args.game_age)
    if problem is not None:
        raise UserError(problem)
    check_input_file("--columns", args.columns)  # a pipe or a device: refused unopened
    try:
        template = load_run_scenario(args.template, []) if args.template is not None else None
    except (ScenarioError, PluginError) as exc:
        lines = str(exc).splitlines()
        raise UserError("\n".join(f"--template: {line}" for line in lines)) from None
    try:
        outcome = run_calibrate(
            args.log,
            args.to,
            mapping=args.columns,
            template=template,
            raters=raters,
            refine=args.refine,
            seed=args.seed,
            report=report,
            note=print_wrapped,
            force=args.force,
            max_simulations=args.max_simulations,
            split=args.split,
            progress=display(args),
            window=args.window,
            game_age=args.game_age,
        )
    except (LogError, CalibrateError, ScenarioError, PluginError) as exc:
        raise UserError(str(exc)) from None
    for line in outcome.scores:
        print(line)
    print(f"wrote {outcome.scenario_file} (run it: lobbysim run {outcome.scenario_file})")
    print(f"Report: {report / HTML_FILE}")
    return 0


def _add_max_simulations(parser: argparse.ArgumentParser, what: str) -> None:
    """Add ``--max-simulations``: the most simulations a study may plan, so that a mistyped
    size is refused before it runs for days (:data:`lobbysim.validation.MAX_STUDY_SIMULATIONS`
    by default)."""
    parser.add_argument(
        "--max-simulations",
        type=_positive_count,
        default=MAX_STUDY_SIMULATIONS,
        metavar="N",
        help=f"the most simulations {what}; a larger one is refused before anything runs, "
        "saying how many it would run (default: %(default)s; raise it to run a larger one on "
        "purpose)",
    )


def _days(text: str) -> float | str:
    """Return a number of days as a float, or the text as typed where it is none (checked
    with the other options, one line: :func:`lobbysim.calibration.run.game_age_problem`)."""
    try:
        return float(text)
    except ValueError:
        return text


def _positive_count(text: str) -> int:
    """Return a count >= 1 (see :func:`_count`)."""
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


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


def add_paper_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    add_quiet(paper)
    paper.set_defaults(handler=_run_paper)


def _run_paper(args: argparse.Namespace) -> int:
    """Handle ``lobbysim paper``: run the study with a progress bar and print the claims."""
    import pandas as pd

    from lobbysim.commands.paper import PaperArgumentError, run_paper
    from lobbysim.registry import PluginError
    from lobbysim.reporting.paper import format_estimate

    policies = [name.strip() for name in args.policies.split(",")]
    with progress_bar(args, "paper study", "blocks") as progress:
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
