"""``lobbysim log``: match logs out of a run, and a log checked as calibration would read it.

* ``lobbysim log export RUN_FOLDER --out LOG.csv [--policy NAME] [--replication N]``: the
  records of a finished ``lobbysim run`` or ``compare`` (its ``records/<policy>/`` folder, read
  and verified by :meth:`lobbysim.api.RunFolder.records`) written as a match log in the default
  layout (:func:`lobbysim.calibration.export.records_to_log`), as CSV (``.csv``, ``.csv.gz``) or
  Parquet (``.parquet``), as every output file is
  (:func:`lobbysim.records.outputs.write_output_file`:
  a new file unless ``--force``, never through a link, to a device or into a folder).
* ``lobbysim log check LOG [--columns FILE]``: the log read as ``lobbysim calibrate`` reads it
  (:func:`lobbysim.calibration.read.read_log`, with a column mapping: a YAML file or a bundled
  mapping's name such as ``lichess``), and a few lines on what it holds and what was skipped.

Problems are one line each (:class:`~lobbysim.validation.ScenarioError`, which the command
line prints with exit status 2); nothing is written on an error.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import pandas as pd

from lobbysim.calibration.export import log_format, records_to_log, write_log
from lobbysim.calibration.mapping import LogError
from lobbysim.calibration.matchlog import MatchLog
from lobbysim.calibration.read import DEFAULT_CHUNK_ROWS, read_log
from lobbysim.records.outputs import output_file_problem
from lobbysim.validation import ScenarioError, input_file_problem


def add_log_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lobbysim log export`` and ``lobbysim log check``."""
    log = subparsers.add_parser(
        "log",
        help="match logs: export a run's records as one, check one",
        description="Match logs, one row per seat (docs/calibrate.md, 'Match logs'): export a "
        "finished run's records as a log, or check a log as calibration reads it.",
    )
    actions = log.add_subparsers(dest="log_action", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="write a run's records as a match log",
        description="Write the records of a finished run or compare (its records/<policy>/ "
        "folder) as a match log in the default layout: one row per seat with match_id, "
        "player_id, start, end (minutes), team, result (or score in a free-for-all), and "
        "region, party_id and queue_time where the run has them.",
    )
    export.add_argument("folder", type=Path, help="a finished run's or compare's folder")
    export.add_argument(
        "--out", type=Path, required=True, help="the log to write (new): .csv, .csv.gz or .parquet"
    )
    export.add_argument(
        "--force", action="store_true", help="replace --out if it is an existing regular file"
    )
    export.add_argument(
        "--policy", default=None, help="whose records (default: the first policy, the reference)"
    )
    export.add_argument(
        "--replication",
        type=int,
        default=1,
        help="which replication (only streamed records keep more than the first; default: 1)",
    )
    export.set_defaults(handler=_export)
    check = actions.add_parser(
        "check",
        help="read a match log as calibration does and say what it holds",
        description="Read a match log (CSV, .csv.gz or Parquet) as 'lobbysim calibrate' reads "
        "it and print its matches, players, span and the rows skipped, by reason.",
    )
    check.add_argument("log", type=Path, help="the log: .csv, .csv.gz or .parquet")
    check.add_argument(
        "--columns",
        default=None,
        help="a column mapping: a YAML file, or a bundled mapping's name (lichess)",
    )
    check.add_argument(
        "--chunk-rows",
        type=int,
        default=DEFAULT_CHUNK_ROWS,
        help="rows read at a time (default: %(default)s)",
    )
    check.set_defaults(handler=_check)


def _export(args: argparse.Namespace) -> int:
    log = export_log(
        args.folder, args.out, policy=args.policy, replication=args.replication, force=args.force
    )
    extra = [c for c in ("region", "party_id", "queue_time") if c in log.columns]
    print(
        f"wrote {args.out}: {len(log):,} seats of {log['match_id'].nunique():,} matches"
        + (f" (with {', '.join(extra)})" if extra else "")
    )
    return 0


def _check(args: argparse.Namespace) -> int:
    columns = args.columns
    if columns is not None and os.path.lexists(columns):  # a file (else a bundled mapping)
        problem = input_file_problem(columns, 1 << 62)  # a pipe or a device: never opened
        if problem is not None:
            raise ScenarioError(f"--columns: {columns}: {problem}")
    try:
        log = read_log(args.log, args.columns, chunk_rows=args.chunk_rows)
    except LogError as exc:
        raise ScenarioError(str(exc)) from None
    print("\n".join(describe(log)))
    return 0


def export_log(
    folder: str | Path,
    out: str | Path,
    *,
    policy: str | None = None,
    replication: int = 1,
    force: bool = False,
) -> pd.DataFrame:
    """Write the records of the run in ``folder`` as a match log to ``out`` (a new file, or
    any regular file with ``force``); return the log.

    Raises:
        ScenarioError: one line: the folder is not a finished run's, has no records of that
            policy or replication, or ``out`` cannot be written there (checked first).
    """
    from lobbysim.commands.run_folder import load_run

    out = Path(out)
    try:
        log_format(out)
        problem = output_file_problem(out, force=force)
        if problem is not None:
            raise LogError(f"--out: {problem}")
        run = load_run(folder)
    except (LogError, TypeError, ValueError) as exc:
        raise ScenarioError(str(exc)) from None
    try:
        frames: Any = run.records(policy, replication=replication)
    except KeyError as exc:
        raise ScenarioError(str(exc.args[0]) if exc.args else "no records") from None
    except ValueError as exc:  # a record file cut short or changed
        raise ScenarioError(str(exc)) from None
    absent = [kind for kind in ("games", "participants") if kind not in frames]
    if absent:
        raise ScenarioError(f"{folder}: the run kept no {absent[0]} records")
    try:
        log = records_to_log(
            frames["games"],
            frames["participants"],
            frames.get("players"),
            waits=frames.get("waits"),
        )
        write_log(log, out, force=force)
    except (LogError, ValueError) as exc:  # an OutputTargetError too
        raise ScenarioError(str(exc)) from None
    return log


def describe(log: MatchLog) -> list[str]:
    """Return a few lines on a log: seats, matches, players, sides, span, skipped rows, and a
    warning on rounded or zero-length times (:mod:`lobbysim.calibration.precision`) and on an
    activity trend (:mod:`lobbysim.calibration.trend`)."""
    from lobbysim.calibration.precision import time_precision
    from lobbysim.calibration.trend import activity_trend

    seats = log.seats
    sides = seats.groupby("match")["side"].max() + 1
    sizes = seats.groupby(["match", "side"]).size()
    shape = ", ".join(
        f"{int(n):,} with {int(k)} sides" for k, n in sides.value_counts().sort_index().items()
    )
    lines = [
        f"{log.source}: {len(seats):,} seats in {log.matches:,} matches of {log.players:,} "
        f"players ({shape}; mean side size {sizes.mean():.3g})",
    ]
    span = log.span_minutes
    when = f"{span:,.1f} minutes ({span / 1440:.3g} days)"
    if log.origin is not None:
        when += f" from {log.origin.isoformat()}"
    else:
        when += f" from minute {seats['start'].min():g}"
    lines.append(f"span: {when}")
    ranks = seats.groupby(["match", "side"])["rank"].first()
    drawn = ranks.groupby(level=0).max() == 0
    lines.append(f"drawn matches: {int(drawn.sum()):,} ({drawn.mean():.1%})")
    optional = [c for c in ("region", "party", "queue_time") if log.has(c)]
    lines.append(f"optional columns: {', '.join(optional) if optional else 'none'}")
    if not log.sorted_input:
        lines.append("the rows were not in time order; sorted")
    lines.append(log.skipped_text() or "no rows skipped")
    for warning in (time_precision(log).warning(), activity_trend(log).warning(log)):
        if warning:
            lines.append(f"warning: {warning}")
    return lines
