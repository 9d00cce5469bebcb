"""``lobbysim calibrate LOG --to SCENARIO.yaml``: a scenario fitted to a match log.

Reads the log (:func:`lobbysim.calibration.read.read_log`, with an optional column mapping),
fits and refines a scenario (:func:`lobbysim.calibration.run.calibrate`), scores the raters on
the log (:func:`lobbysim.calibration.scores.score_log`, unless ``--raters none``), and writes:

* the scenario file (``--to``), which ``lobbysim run`` runs as it is: a new file (an existing
  regular file only with ``--force``), checked before the log is read
  (:func:`lobbysim.records.outputs.output_file_problem`);
* a report folder (``--report``, default ``outputs/<log name>-calibration``): ``report.html``
  (figures embedded) and ``report.md``, ``parameters.csv`` (each fitted field, its value and
  method), ``daily.csv`` (games and distinct players per day, the log's and the calibrated
  scenario's), and the raters' ``scores.csv`` and ``calibration.csv``.

Every file is written whole or not at all; a bad log or option is one line, exit status 2 (a log
spanning less than 12 hours, :data:`MIN_SPAN_MINUTES`, too).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from lobbysim.calibration.matchlog import MatchLog
from lobbysim.calibration.run import (
    Calibration,
    calibrate,
    compare_logs,
    game_age_problem,
    refine_problem,
)
from lobbysim.experiments.store import tmp_name
from lobbysim.records.outputs import (
    OutputTargetError,
    out_folder_problem,
    output_file_problem,
    write_output_text,
)
from lobbysim.running.progress import Progress
from lobbysim.scenario import Scenario
from lobbysim.validation import MAX_STUDY_SIMULATIONS

#: The raters scored by default.
DEFAULT_RATERS = ("bayesian", "sph_elo", "glicko2", "openskill")


#: The shortest log (first start to last end, in minutes) a scenario is fitted to: visits a day
#: apart cannot be told from a few hours (a log of a day and a bit fits).
MIN_SPAN_MINUTES = 720.0


class CalibrateError(ValueError):
    """A problem with the options of ``lobbysim calibrate``; one line."""


@dataclass
class CalibrateOutcome:
    """What ``lobbysim calibrate`` made: the calibration, the scores' lines and the paths."""

    log: MatchLog
    calibration: Calibration
    scores: list[str]
    scenario_file: Path
    report: Path | None


def check_target(to: Path, report: Path | None, *, force: bool = False) -> None:
    """Raise CalibrateError, touching nothing, if the outputs cannot be written: ``to`` is
    checked as every output file is (:func:`lobbysim.records.outputs.output_file_problem`)."""
    if to.suffix not in (".yaml", ".yml"):
        raise CalibrateError(f"--to: expected a .yaml file, got {str(to)!r}")
    problem = output_file_problem(to, force=force)
    if problem is not None:
        raise CalibrateError(f"--to: {problem}")
    if report is not None:
        problem = out_folder_problem(report)
        if problem is not None:
            raise CalibrateError(f"--report: {problem}")


def run_calibrate(
    log_path: str | os.PathLike[str],
    to: str | os.PathLike[str],
    *,
    mapping: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    template: Scenario | None = None,
    raters: Sequence[str] = DEFAULT_RATERS,
    refine: int = 3,
    seed: int = 1,
    report: str | os.PathLike[str] | None = None,
    note: Callable[[str], None] | None = None,
    force: bool = False,
    max_simulations: int = MAX_STUDY_SIMULATIONS,
    split: float = 0.5,
    progress: Progress | None = None,
    window: str | None = None,
    game_age: float | None = None,
) -> CalibrateOutcome:
    """Read, fit, score and write (see the module docstring); ``force`` lets ``to`` replace an
    existing regular file; more than ``max_simulations`` simulations (``refine`` + 1) are
    refused before the log is read. ``note`` gets the lines a user reads as the work goes (the
    log read, any warning, the fitted values with their standard errors); ``split`` is the
    share of the matches the raters are tuned on (the rest scores them); ``progress`` shows the
    simulations (in simulated minutes) and the raters' replays; ``window`` (``FROM..TO``,
    ``auto`` or ``all``, :func:`lobbysim.calibration.trend.window`) fits the matches that start
    within it only; without it, a log whose activity changes beyond what its fitted base follows
    is fitted over its last stationary stretch (:func:`default_window`); ``game_age``, the days
    the game had run when the log starts, sets the simulations' warm-up
    (:func:`lobbysim.calibration.run.warmup_plan`)."""
    from lobbysim.calibration.read import read_log
    from lobbysim.reporting.calibration import fitted_lines

    target = Path(to)
    folder = Path(report) if report is not None else None
    check_target(target, folder, force=force)
    problem = refine_problem(refine, max_simulations)
    if problem is None and game_age is not None:
        problem = game_age_problem(game_age)
    if problem is not None:
        raise CalibrateError(problem)
    if not (isinstance(split, float | int) and 0.0 < split < 1.0):
        raise CalibrateError(f"--split: expected a share of the matches in (0, 1), got {split!r}")
    display = progress if progress is not None else Progress(enabled=False)
    say = note or (lambda line: None)
    log = read_log(log_path, mapping)
    say(
        f"read {log.source}: {len(log.seats):,} seats, {log.matches:,} matches, "
        f"{log.players:,} players" + (f"; {log.skipped_text()}" if log.skipped_text() else "")
    )
    if window is not None:
        from lobbysim.calibration.trend import window as cut

        log, line = cut(log, window)
        say(line)
    else:
        log = default_window(log, say)
    if log.span_minutes < MIN_SPAN_MINUTES:
        raise CalibrateError(
            f"{log.source}: the log spans {log.span_minutes:,.1f} minutes; fitting a player "
            f"base and its visits needs at least {MIN_SPAN_MINUTES / 60:g} hours of it"
        )
    name = Path(log_path).name.split(".")[0] or "calibrated"
    with display.stage("calibrate: simulate the fit", "min") as update:
        result = calibrate(
            log,
            template,
            refine=refine,
            seed=seed,
            name=f"{name}_calibrated",
            max_simulations=max_simulations,
            progress=update,
            game_age=game_age,
        )
    for warning in result.fit.warnings:
        say(f"Warning: {warning}")
    for line in fitted_lines(result):
        say(line)
    lines: list[str] = []
    scores = None
    if raters:
        from lobbysim.calibration.scores import score_log, scores_text

        with display.stage("calibrate: replay the raters", "replays") as update:
            scores = score_log(log, list(raters), split=split, step=update)
        lines = list(scores_text(scores))
    header = (
        f"# Fitted by lobbysim calibrate to {log.source}; the evidence is in "
        f"{folder if folder is not None else 'its report'}\n"
    )
    text = header + yaml.safe_dump(result.scenario.to_dict(), sort_keys=False)
    try:
        write_output_text(target, text, force=force, option="--to")
    except OutputTargetError as exc:  # made meanwhile
        raise CalibrateError(str(exc)) from None
    if folder is not None:
        _write_report(log, result, folder, target, lines, scores)
    return CalibrateOutcome(log, result, lines, target, folder)


def default_window(log: MatchLog, say: Callable[[str], None]) -> MatchLog:
    """Return the part of ``log`` fitted when no ``--window`` is given: the whole log, unless its
    activity changes as the base model cannot (:mod:`lobbysim.calibration.trend`: a trend, and
    the closest curve the base draws straying beyond
    :data:`~lobbysim.calibration.trend.FOLLOW` from the log's matches between its tenths);
    then its last stationary stretch, said in one line with what was left out and why."""
    from lobbysim.calibration.trend import FOLLOW, activity_trend, window

    trend = activity_trend(log)
    if trend.stationary or trend.stretch == 0:
        return log
    stray = trend.strays()
    if not stray > FOLLOW:
        return log
    cut, _ = window(log, "auto")
    say(
        f"fitting the log's last stationary stretch by default, --window "
        f"{trend.stretch_text(log)}: {cut.matches:,} of its {log.matches:,} matches; the "
        f"{log.matches - cut.matches:,} before it are left out because the log's activity "
        f"{trend.change_text()}, which a base of newcomers joining and members leaving at "
        f"constant rates does not follow (its closest curve and the log's matches differ up "
        f"to {stray:.3g}-fold between tenths of the log); --window all fits the whole log"
    )
    return cut


def _write_report(
    log: MatchLog,
    result: Calibration,
    folder: Path,
    target: Path,
    lines: Sequence[str],
    scores: Any,
) -> None:
    from lobbysim.reporting.calibration import parameter_rows, write_calibration_report

    folder.mkdir(parents=True, exist_ok=True)
    tmp = tmp_name(folder / "report")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        rows = parameter_rows(result)
        pd.DataFrame(rows, columns=["field", "value", "how"]).to_csv(
            tmp / "parameters.csv", index=False
        )
        comparison = None
        if result.simulated is not None:
            comparison = compare_logs(log, result.simulated, result.fit.offset)
            observed, simulated = comparison["daily_observed"], comparison["daily_simulated"]
            daily = observed.join(simulated.add_suffix("_calibrated"))
            daily.to_csv(tmp / "daily.csv")
        if scores is not None:
            scores.scores.to_csv(tmp / "scores.csv", index=False)
            scores.calibration.to_csv(tmp / "calibration.csv", index=False)
        curves = scores.calibration if scores is not None else None
        write_calibration_report(
            result, log, tmp, str(target), scores=lines, curves=curves, comparison=comparison
        )
        for path in tmp.iterdir():
            os.replace(path, folder / path.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
