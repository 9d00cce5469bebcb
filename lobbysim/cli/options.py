"""The options and argument helpers the ``lobbysim`` subcommands share (lobbysim/cli/main.py and
lobbysim/cli/studies.py): a scenario command's options, ``--quiet`` and the progress display,
``--replications``, ``--policies`` and ``--rules`` parsed with one-line errors (:class:`UserError`).
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lobbysim.running.progress import Progress


class UserError(Exception):
    """A problem with what the user asked for: reported as one line, exit status 2."""


class SetField(argparse.Action):
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


def scenario_options(*, auto: bool = False) -> argparse.ArgumentParser:
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
        action=SetField,
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
    add_quiet(common)
    return common


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """Add ``--quiet``: no progress (a bar on a terminal, else a line every 10 s)."""
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="show no progress (by default: a bar on a terminal, else a line every 10 s on "
        "standard error)",
    )


def display(args: argparse.Namespace) -> Progress:
    """Return the progress display of a command: a bar on a terminal, a line every 10 s
    otherwise (``$LOBBYSIM_PROGRESS_EVERY`` seconds), nothing with ``--quiet``."""
    return Progress(enabled=not getattr(args, "quiet", False))


@contextmanager
def progress_bar(
    args: argparse.Namespace, desc: str, unit: str
) -> Iterator[Callable[[int, int], None]]:
    """Yield a ``progress(done, total)`` callback of one stage of :func:`display`."""
    with display(args).stage(desc, unit) as update:
        yield update


def replications(text: str | None) -> int | None:
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


def run_replications(text: str | None) -> int | str | None:
    """Return ``--replications`` of ``run`` and ``compare``: a whole number or ``auto``."""
    if text is not None and text.strip().lower() == "auto":
        return "auto"
    try:
        return replications(text)
    except UserError:
        raise UserError(
            f"--replications: expected a whole number >= 1 or auto, got {text!r}"
        ) from None


def auto_options(args: argparse.Namespace) -> tuple[float | None, int | None]:
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


def check_input_file(option: str, path: Path | None) -> None:
    """Refuse, naming ``option`` and the path, an input that exists but is not a regular file
    (a pipe, a device such as ``/dev/zero``, a socket, a folder), before anything opens it:
    opening a pipe blocks until something writes to it, and a device may never end. A path that
    does not exist is left to its reader, which says so (or reads it as a bundled name)."""
    from lobbysim.validation import input_file_problem

    if path is None or not os.path.lexists(path):
        return
    problem = input_file_problem(path, 1 << 62)  # the reader bounds the size
    if problem is not None:
        raise UserError(f"{option}: {path}: {problem}")


def policy_names(option: str | None) -> list[str]:
    """Return the specs of a ``--policies a,b(x=1),c`` option (empty if it was not given)."""
    from lobbysim.scenario.specs import split_specs

    names = split_specs(option) if option else []
    if option is not None and not all(names):
        raise UserError(
            f"--policies: expected comma-separated policies (name or name(key=value, ...)), "
            f"got {option!r}"
        )
    return names


def rule_files(option: str | None) -> list[str]:
    """Return the files of a ``--rules a.json,b.json`` option (empty if it was not given)."""
    if option is None:
        return []
    files = [part.strip() for part in option.split(",")]
    if not all(files):
        raise UserError(
            f"--rules: expected comma-separated FlexMatch rule-set files, e.g. a.json,b.json, "
            f"got {option!r}"
        )
    return files


def say_which_file(scenario: Path) -> None:
    """Print which file a scenario argument names when a file here wins over a bundled
    scenario of that name (:func:`lobbysim.scenario.bundled.local_file_note`)."""
    from lobbysim.scenario.bundled import local_file_note

    line = local_file_note(scenario)
    if line is not None:
        print(line, flush=True)


def print_wrapped(line: str) -> None:
    """Print a note to the terminal, wrapped to the headline's width."""
    from lobbysim.reporting.headline import wrap_terminal

    print("\n".join(wrap_terminal(line, indent="  ")), flush=True)
