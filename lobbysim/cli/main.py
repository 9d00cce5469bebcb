"""The ``lobbysim`` command: a thin shell over library functions.

``build_parser()`` builds the argument parser and ``main(argv) -> int`` runs one subcommand; every
subcommand is one library call that the tests can also make directly. User errors go to stderr as
one line each with a non-zero exit status and no traceback. Here: ``run``, ``compare``,
``validate``, ``init`` and ``plugins``; the study commands (``sweep``, ``tune``, ``calibrate``,
``paper``) are lobbysim/cli/studies.py, ``rules``, ``schema`` and ``log`` their own modules in
lobbysim/commands/, and the options they share lobbysim/cli/options.py.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from lobbysim import __version__
from lobbysim.cli.options import (
    UserError,
    auto_options,
    check_input_file,
    display,
    policy_names,
    print_wrapped,
    rule_files,
    run_replications,
    say_which_file,
    scenario_options,
)
from lobbysim.cli.studies import (
    add_calibrate_parser,
    add_paper_parser,
    add_sweep_parser,
    add_tune_parser,
)
from lobbysim.records.outputs import OutputTargetError
from lobbysim.validation import ScenarioError

__all__ = ["build_parser", "main"]


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
    add_sweep_parser(subparsers)
    add_tune_parser(subparsers)
    add_paper_parser(subparsers)
    _add_init_parser(subparsers)
    from lobbysim.commands.log import add_log_parser
    from lobbysim.commands.rules import add_rules_parser
    from lobbysim.commands.schema import add_schema_parser

    add_rules_parser(subparsers)
    add_schema_parser(subparsers)
    add_log_parser(subparsers)
    add_calibrate_parser(subparsers)
    return parser


def _add_run_parsers(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``run``, ``compare``, ``validate`` and ``plugins``."""
    common = scenario_options(auto=True)
    run = subparsers.add_parser(
        "run",
        parents=[common],
        help="run a scenario and write its report",
        description=(
            "Run a scenario's replications and write metrics, records and a report into --out "
            "(new or empty; default: outputs/<scenario name>-<UTC time>)."
        ),
    )
    run.set_defaults(handler=_run, policies=None, rules=None)
    compare = subparsers.add_parser(
        "compare",
        parents=[common],
        help="compare policies (or FlexMatch rule sets) on common random numbers, with "
        "confidence intervals",
        description=(
            "Run the scenario once per policy, or once per FlexMatch rule set (--rules), on the "
            "same replication seeds (common random numbers) and report each metric's mean with "
            "a 95% interval and the paired differences from the first."
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
    compare.add_argument(
        "--rules",
        default=None,
        metavar="A.json,B.json,...",
        help="comma-separated FlexMatch rule-set files: run the scenario under each in place of "
        "its rules (as --set matchmaker.rules.flexmatch=FILE does), with its own policy; each "
        "goes by its file's stem, and the first is the reference of the paired differences "
        "(not with --policies)",
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
        description=(
            "List every registered plug-in with its parameters (defaults) and what it does; "
            "writing your own: docs/plugins.md."
        ),
    )
    plugins.set_defaults(handler=_plugins)


def _run(args: argparse.Namespace) -> int:
    """Handle ``lobbysim run`` and ``lobbysim compare``."""
    import shlex

    from lobbysim.commands.run import run, run_summary
    from lobbysim.commands.run_scenario import RunError
    from lobbysim.paper import default_jobs
    from lobbysim.registry import PluginError
    from lobbysim.scenario import ScenarioError

    policies = policy_names(args.policies)
    rules = rule_files(args.rules)
    if rules and policies:
        raise UserError(
            "--rules and --policies together: compare rule sets (each with the scenario's "
            "policy) or policies, not both"
        )
    for file in rules:
        check_input_file("--rules", Path(file))
    replications = run_replications(args.replications)
    precision, cap = auto_options(args)
    jobs = args.jobs if args.jobs is not None else default_jobs()
    command = "lobbysim " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv else None
    say_which_file(args.scenario)
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
            progress=display(args),
            command=command,
            compare=args.command == "compare",
            note=print_wrapped,
            rules=rules,
        )
    except (RunError, ScenarioError, PluginError) as exc:
        raise UserError(str(exc)) from None
    print(f"wrote {out}\n")
    print(run_summary(result, out))
    return 0


def _validate(args: argparse.Namespace) -> int:
    """Handle ``lobbysim validate``: one line per problem, exit 2 if any."""
    from lobbysim.commands.validate import (
        fast_plan_lines,
        plugins_not_imported,
        validate,
        validate_warnings,
    )

    imports = args.import_plugins
    for path in args.scenarios:
        say_which_file(path)
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
                    f" (plug-ins not imported, so not run: {', '.join(skipped)}; their "
                    "parameters are NOT checked: --import-plugins imports and checks them; "
                    "every bundled plug-in was checked)"
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
    from lobbysim.commands.validate import plugins_text

    print(plugins_text())
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
    except (UserError, ScenarioError, OutputTargetError) as exc:  # one line a problem
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
        from lobbysim.records.outputs import storage_problem

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
