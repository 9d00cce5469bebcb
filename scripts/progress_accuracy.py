"""How far the time-left estimate of ``lobbysim compare`` (or ``run``) is from the true time left.

Runs each scenario named (default: the bundled ones that take seconds to a minute or so:
quickstart, team_4v4, mechwarrior_ffa, evening_peak and live_game; global_5v5 takes several
minutes on two cores, name it to include it) as ``lobbysim compare NAME`` does, without the
report, records every update of the runs' stage (the seconds elapsed, the runs done with their
fractions, and the estimate of the seconds left the progress line would show,
:class:`lobbysim.running.time_left.RemainingTime`), and afterwards compares each estimate made once
a
fifth of the stage's time had passed with the true time left then (the stage's end minus that
moment). It prints per scenario the worst relative error, ``(estimate - true) / true``, over
those estimates, and whether it is within 25%; and, for comparison, the worst error of the
estimate shown before (the time elapsed times the share of runs left over the share done).

The true time left shrinks to nothing at the end, where any estimate's relative error grows
without bound; estimates made with less than ``--min-left`` seconds to go (default 1 s, about
what a run's metrics take) are left out, and counted. Progress changes nothing computed; the
runs are timed on this machine as it is, so other work on it moves the figures: the table gives
the load average over a minute before and after each scenario (above the number of cores, other
work competed for them), and the estimate expects the other work to go on as it was.

    python scripts/progress_accuracy.py                      # the default set, --jobs 2
    python scripts/progress_accuracy.py live_game global_5v5 --jobs 2
    python scripts/progress_accuracy.py quickstart --command run --set horizon=2000
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lobbysim.commands.run import run
from lobbysim.running.progress import Estimate, Progress

DEFAULT = ["quickstart", "team_4v4", "mechwarrior_ffa", "evening_peak", "live_game"]
TOLERANCE = 0.25
FIFTH = 0.2


@dataclass
class Update:
    """One update of the runs' stage."""

    elapsed: float
    done: float
    total: float
    left: float | None  # the estimate, seconds


@dataclass
class Recorder(Progress):
    """A progress display that shows nothing and records the runs' stage."""

    updates: list[Update] = field(default_factory=list)
    duration: float = math.nan

    def __post_init__(self) -> None:
        super().__init__(enabled=True)

    @contextmanager
    def stage(
        self,
        desc: str,
        unit: str,
        total: float | None = None,
        *,
        decimals: int = 0,
        estimate: Estimate | None = None,
    ) -> Iterator[Callable[..., None]]:
        if unit != "runs":
            yield lambda done, total=None: None
            return
        start = time.monotonic()
        state = {"total": float(total or 0)}

        def update(done: float, total: float | None = None) -> None:
            now = time.monotonic()
            if total is not None:
                state["total"] = float(total)
            left = estimate() if estimate is not None else None
            self.updates.append(Update(now - start, float(done), state["total"], left))

        try:
            yield update
        finally:
            self.duration = time.monotonic() - start

    def note(self, text: str) -> None:
        return None


def old_estimate(update: Update) -> float | None:
    """The estimate shown before: elapsed x (1 - share) / share, the share of runs done as the
    line showed it (to a tenth of a run)."""
    share = min(round(update.done, 1) / update.total, 1.0) if update.total else 0.0
    return update.elapsed * (1 - share) / share if 0 < share < 1 else None


@dataclass
class Verdict:
    scenario: str
    runs: int
    seconds: float
    judged: int
    skipped: int
    worst: float  # signed relative error of the new estimate with the largest magnitude
    worst_old: float
    load: str = ""  # the machine's load average (1 minute) before and after

    @property
    def within(self) -> bool:
        return math.isfinite(self.worst) and abs(self.worst) <= TOLERANCE


def worst(errors: list[float]) -> float:
    return max(errors, key=abs) if errors else math.nan


def judge(name: str, recorder: Recorder, min_left: float) -> Verdict:
    duration = recorder.duration
    new, old, skipped = [], [], 0
    judged = 0
    for update in recorder.updates:
        if update.elapsed < FIFTH * duration:
            continue
        true = duration - update.elapsed
        if true < min_left:
            skipped += 1
            continue
        judged += 1
        if update.left is not None:
            new.append((update.left - true) / true)
        else:
            new.append(math.inf)  # no estimate at all once a fifth is done: a failure
        before = old_estimate(update)
        if before is not None:
            old.append((before - true) / true)
    total = int(recorder.updates[-1].total) if recorder.updates else 0
    return Verdict(name, total, duration, judged, skipped, worst(new), worst(old))


def write_trace(path: Path, recorder: Recorder) -> None:
    """Write the updates: elapsed, done, total, the estimate, the old one and the true time left."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["elapsed,done,total,left,left_before,true_left"]
    for u in recorder.updates:
        before = old_estimate(u)
        lines.append(
            f"{u.elapsed:.4f},{u.done:.4f},{u.total:g},"
            f"{'' if u.left is None else f'{u.left:.4f}'},"
            f"{'' if before is None else f'{before:.4f}'},{recorder.duration - u.elapsed:.4f}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def load_average() -> str:
    """The machine's load average over the last minute (its other work moves the timings)."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def percent(value: float) -> str:
    return f"{100 * value:+.0f}%" if math.isfinite(value) else "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*", default=DEFAULT, help="bundled scenario names")
    parser.add_argument("--command", choices=["compare", "run"], default="compare")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--min-left",
        type=float,
        default=1.0,
        help="leave out estimates made with fewer seconds than this to go (default 1)",
    )
    parser.add_argument(
        "--trace",
        type=Path,
        default=None,
        metavar="FOLDER",
        help="also write every update of each scenario to FOLDER/NAME.csv",
    )
    args = parser.parse_args(argv)
    verdicts = []
    for name in args.scenarios:
        recorder = Recorder()
        before = load_average()
        with tempfile.TemporaryDirectory() as folder:
            run(
                name,
                compare=args.command == "compare",
                jobs=args.jobs,
                sets=args.sets,
                out=Path(folder) / "out",
                progress=recorder,
                report=False,
            )
        if args.trace is not None:
            write_trace(args.trace / f"{name}.csv", recorder)
        verdict = judge(name, recorder, args.min_left)
        verdict.load = f"{before}-{load_average()}"
        verdicts.append(verdict)
        print(
            f"{name}: {verdict.runs} runs in {verdict.seconds:.1f} s, {len(recorder.updates)} "
            "updates",
            file=sys.stderr,
            flush=True,
        )
    print(
        f"time-left estimate of `lobbysim {args.command}` (--jobs {args.jobs}), judged from a "
        f"fifth of the runs' time on, leaving out the last {args.min_left:g} s:"
    )
    header = (
        "scenario",
        "runs",
        "seconds",
        "judged",
        "worst error",
        "within 25%",
        "before",
        "load avg",
    )
    rows = [
        (
            v.scenario,
            str(v.runs),
            f"{v.seconds:.1f}",
            f"{v.judged} (+{v.skipped} left out)",
            percent(v.worst),
            "yes" if v.within else "no",
            percent(v.worst_old),
            v.load,
        )
        for v in verdicts
    ]
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return 0 if all(v.within for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
