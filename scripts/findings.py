"""Re-run the findings of docs/findings.md and print the new figures beside the documented ones.

Each finding of docs/findings.md is one entry of ``FINDINGS``: the commands the page gives under
``Re-measure NAME:`` (the same text, checked by ``tests/test_findings.py``) and, for each figure
the page states, where the figure is read from the commands' output: a row of ``summary.csv`` or
``differences.csv`` in the folder a ``lobbysim`` command writes, a pattern in what a command
prints, or the first printed line holding a text (a script's table row).

    python scripts/findings.py --list                    # every finding, its cost, its commands
    python scripts/findings.py --only quickstart-answer  # run one (give --only again for more)
    python scripts/findings.py --only team-4v4 --keep /tmp/f   # keep the output folders

The commands run as the page writes them, in a scratch folder (``--keep`` names it; otherwise a
temporary one, removed afterwards): ``lobbysim`` is this interpreter's ``python -m lobbysim``, a
repository path (``scenarios/...``, ``scripts/...``) is made absolute, and a ``run``,
``compare``, ``sweep``, ``tune`` or ``paper`` command writes to a folder of the scratch folder
(its own ``--out``, if it names one, is replaced). A finding that needs something the script
cannot make (a hand-edited file, a browser, another checkout) is listed but not run: ``--list``
says why. Several findings take from minutes to hours on a 2-core machine; ``--list`` gives the
cost measured when they were written.
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
WRITES_A_FOLDER = {"run", "compare", "sweep", "tune", "paper"}


@dataclass(frozen=True)
class Output:
    """What one command left: the folder it wrote (if any) and what it printed."""

    folder: Path | None
    text: str


def _number(value: float, signed: bool) -> str:
    """Three significant digits, trailing zeros kept, as lobbysim prints them (1.40, +0.0126)."""
    text = f"{value:{'+' if signed else ''}#.3g}"
    return text[:-1] if text.endswith(".") else text


def _interval(mean: float, low: float, high: float, signed: bool) -> str:
    return f"{_number(mean, signed)} [{_number(low, signed)}, {_number(high, signed)}]"


@dataclass(frozen=True)
class Summary:
    """A policy's mean [95% CI] of a metric, from ``summary.csv`` of command ``command``."""

    policy: str
    metric: str
    command: int = 0

    def __call__(self, outputs: Sequence[Output]) -> str:
        frame = _table(outputs[self.command], "summary.csv")
        row = frame[(frame.policy == self.policy) & (frame.metric == self.metric)]
        if row.empty:
            return f"no row {self.policy} / {self.metric} in summary.csv"
        r = row.iloc[0]
        return _interval(r["mean"], r["ci_low"], r["ci_high"], signed=False)


@dataclass(frozen=True)
class Difference:
    """A policy's paired difference from the comparison's first policy, mean [95% CI], from
    ``differences.csv`` of command ``command``."""

    policy: str
    metric: str
    command: int = 0

    def __call__(self, outputs: Sequence[Output]) -> str:
        frame = _table(outputs[self.command], "differences.csv")
        row = frame[(frame.policy == self.policy) & (frame.metric == self.metric)]
        if row.empty:
            return f"no row {self.policy} / {self.metric} in differences.csv"
        r = row.iloc[0]
        return _interval(r["mean"], r["ci_low"], r["ci_high"], signed=True)


@dataclass(frozen=True)
class Printed:
    """The first match of a regular expression in what command ``command`` printed (its first
    group, or the whole match)."""

    pattern: str
    command: int = 0

    def __call__(self, outputs: Sequence[Output]) -> str:
        found = re.search(self.pattern, outputs[self.command].text, re.S)
        if found is None:
            return f"not printed (pattern {self.pattern!r})"
        text = found.group(1) if found.groups() else found.group(0)
        return " ".join(text.split())


@dataclass(frozen=True)
class Line:
    """The first printed line of command ``command`` that holds ``text`` (a table's row)."""

    text: str
    command: int = 0

    def __call__(self, outputs: Sequence[Output]) -> str:
        for line in outputs[self.command].text.splitlines():
            if self.text in line:
                return line.strip()
        return f"no line holds {self.text!r}"


Reader = Summary | Difference | Printed | Line


def _table(output: Output, name: str) -> pd.DataFrame:
    if output.folder is None or not (output.folder / name).is_file():
        raise FileNotFoundError(f"the command wrote no {name}")
    return pd.read_csv(output.folder / name)


@dataclass(frozen=True)
class Finding:
    """One finding of docs/findings.md: its commands and its figures (label, as documented,
    where the new one is read)."""

    name: str
    commands: tuple[str, ...]
    figures: tuple[tuple[str, str, Reader], ...]
    cost: str
    manual: str = ""  # why the script does not run it, if it does not


def F(
    name: str,
    commands: str | tuple[str, ...],
    cost: str,
    *figures: tuple[str, str, Reader],
    manual: str = "",
) -> Finding:
    return Finding(
        name, (commands,) if isinstance(commands, str) else commands, figures, cost, manual
    )


GAP, WAIT = "skill_gap_true_mean", "queue_time_mean"
LAUNCH = (
    " --set warmup=0 --set matchmaker.status_quo=null --set matchmaker.switch_at=null"
    " --set horizon=4320 --set base.newcomers_per_day=300"
)
KG = (
    "lobbysim compare live_game --replications 20 --policies 'draw_chance,point_estimate,"
    "knowledge_gradient,knowledge_gradient(gamma=0.9),knowledge_gradient(gamma=0.5)'"
)
LKG = (
    "lobbysim compare live_game --replications 20 --policies 'draw_chance,"
    "lobby_knowledge_gradient,lobby_knowledge_gradient(gamma=0.9)'"
)
ENG = "lobbysim compare engagement_pools --replications 20"
ACT = (
    f"{ENG} --policies draw_chance,uniform_random --set base.size=1500"
    " --set base.newcomers_per_day=20"
)
PARTY = "parties.sizes=[[1, 0.55], [2, 0.25], [3, 0.12], [4, 0.08]]"
VARIANTS = "python scripts/scenario_variants.py"
SHARE = r"captures (\S+% \[\S+, \S+\])"

FINDINGS: tuple[Finding, ...] = (
    F(
        "quickstart-answer",
        "lobbysim compare quickstart",
        "4 min on a busy 2-core machine",
        ("true skill gap, uniform_random", "2.26 [2.17, 2.35]", Summary("uniform_random", GAP)),
        ("true skill gap, draw_chance", "1.78 [1.73, 1.84]", Summary("draw_chance", GAP)),
        ("true skill gap, oracle", "1.40 [1.36, 1.43]", Summary("oracle", GAP)),
        ("mean wait (min), draw_chance", "19.3 s = 0.322 min", Summary("draw_chance", WAIT)),
        ("draw_chance's captured share", "55% [50%, 59%]", Printed(SHARE)),
    ),
    F(
        "quickstart-paper-policies",
        "lobbysim compare quickstart --policies point_estimate,draw_chance,knowledge_gradient"
        " --replications 20",
        "~1 min on a quiet 2-core machine",
        (
            "knowledge_gradient - point_estimate, true skill gap",
            "+0.0326 [+0.00544, +0.0598]",
            Difference("knowledge_gradient", GAP),
        ),
    ),
    F(
        "replications-auto",
        "lobbysim compare quickstart --replications auto --precision 0.05",
        "~1 min on a quiet 2-core machine",
        ("where it stopped", "stopped at 20 per policy", Printed(r"(stopped at \d+ per policy)")),
    ),
    F(
        "progress-accuracy",
        "python scripts/progress_accuracy.py",
        "~5 min",
        ("quickstart's worst error", "-14%", Line("quickstart")),
        ("live_game's worst error", "-7%", Line("live_game")),
    ),
    F(
        "report-first-screen",
        "python scripts/report_screenshot.py outputs/<run>/report.html --png"
        " docs/report-first-screen.png",
        "seconds",
        ("page height", "5,191 px", Printed(r"page height: +([\d,]+ px)")),
        manual="needs a comparison's folder in place of <run> and headless Chromium",
    ),
    F(
        "first-command",
        "git clone /work/main /tmp/rclone && cd /tmp/rclone && python3 -m venv .venv && . "
        ".venv/bin/activate && time (pip install . && lobbysim compare quickstart)",
        "6 min on a busy 2-core machine",
        ("real time", "4 min 48 s (busy machine)", Printed(r"real\s+(\S+)")),
        manual="a shell pipeline on a fresh clone in a new virtual environment; run it by hand",
    ),
    F(
        "live-game-bounds",
        "lobbysim compare scenarios/live_game.yaml --policies uniform_random,point_estimate,"
        "draw_chance,knowledge_gradient,oracle --jobs 2",
        "~2 min on a quiet 2-core machine",
        (
            "draw_chance - uniform_random, true skill gap",
            "-1.17 [-1.23, -1.11]",
            Difference("draw_chance", GAP),
        ),
        (
            "oracle - uniform_random, true skill gap",
            "-1.33 [-1.36, -1.30]",
            Difference("oracle", GAP),
        ),
        ("uniform_random's true skill gap", "2.23", Summary("uniform_random", GAP)),
    ),
    F(
        "live-game-kg",
        (KG, KG + LAUNCH),
        "~30 min on 2 cores",
        (
            "live: knowledge_gradient - draw_chance, true skill gap",
            "+0.047 [+0.041, +0.054]",
            Difference("knowledge_gradient", GAP),
        ),
        (
            "live: point_estimate - draw_chance, newcomers' gap",
            "-0.040 [-0.055, -0.024]",
            Difference("point_estimate", "newcomer_skill_gap_true_mean"),
        ),
        (
            "launch: knowledge_gradient - draw_chance, true skill gap",
            "+0.169 [+0.160, +0.178]",
            Difference("knowledge_gradient", GAP, command=1),
        ),
    ),
    F(
        "live-game-lobby-kg",
        (LKG, LKG + LAUNCH),
        "~15 min on 2 cores",
        (
            "live: lobby_knowledge_gradient - draw_chance, true skill gap",
            "+0.223 [+0.216, +0.230]",
            Difference("lobby_knowledge_gradient", GAP),
        ),
        (
            "launch: lobby_knowledge_gradient - draw_chance, true skill gap",
            "+0.123 [+0.113, +0.133]",
            Difference("lobby_knowledge_gradient", GAP, command=1),
        ),
    ),
    F(
        "retention",
        "lobbysim compare scenarios/live_game_retention.yaml --policies draw_chance,uniform_random"
        " --jobs 2",
        "~5 min on 2 cores",
        (
            "uniform_random - draw_chance, retained deciles 1-9",
            "-0.058 [-0.066, -0.049]",
            Difference("uniform_random", "retained_deciles_1_9"),
        ),
        (
            "uniform_random - draw_chance, churn per week",
            "+0.053 [+0.044, +0.063]",
            Difference("uniform_random", "churn_per_week"),
        ),
    ),
    F(
        "activision",
        (ACT, ACT + " --set base.retention.win_rate=1.0"),
        "~30 min on 2 cores",
        (
            "win_rate 0: top decile retained",
            "-0.005 (±0.026)",
            Difference("uniform_random", "retained_decile_10"),
        ),
        (
            "win_rate 1: top decile retained",
            "+0.009 [-0.003, +0.022]",
            Difference("uniform_random", "retained_decile_10", command=1),
        ),
        (
            "win_rate 1: deciles 1-9 retained",
            "-0.113 [-0.119, -0.106]",
            Difference("uniform_random", "retained_deciles_1_9", command=1),
        ),
    ),
    F(
        "engagement-pools",
        (
            f"{ENG} --set base.size=600 --set base.newcomers_per_day=8",
            f"{ENG} --set base.size=8000 --set base.newcomers_per_day=107",
            "lobbysim sweep engagement_pools --grid base.size=40000"
            " --policies draw_chance,engagement --replications 20",
        ),
        "hours on 2 cores (the 40,000 sweep most of it)",
        (
            "600 members: engagement - draw_chance, retained",
            "+0.015 [+0.007, +0.023]",
            Difference("engagement", "retained"),
        ),
        (
            "8,000 members: engagement - draw_chance, retained",
            "+0.015 [+0.013, +0.016]",
            Difference("engagement", "retained", command=1),
        ),
        (
            "40,000 members: the sweep's headline",
            "+0.016 [+0.015, +0.017] retained",
            Printed(r"(Sweep headline.*?)\n\n", command=2),
        ),
    ),
    F(
        "engagement-no-threshold",
        f"{ENG} --set base.size=600 --set base.newcomers_per_day=8"
        " --set 'matchmaker.threshold=[[0, 0.0]]'",
        "~15 min on a busy 2-core machine",
        (
            "engagement - draw_chance, retained",
            "+0.00416 [-0.00325, +0.0116] (issue 45: +0.0126 [+0.0057, +0.0196])",
            Difference("engagement", "retained"),
        ),
    ),
    F(
        "latency-tradeoff",
        "python scripts/latency_tradeoff.py",
        "~16 min on 2 cores",
        ("true skill gap row", "0.611 0.608 0.600", Line("skill_gap_true_mean")),
        ("mean queue row", "1.33 1.19 1.06", Line("queue_time_mean")),
    ),
    F(
        "quiet-hours",
        "lobbysim run global_5v5",
        "~2 min on 2 cores",
        (
            "mean queue time (min)",
            "(the hourly figures are in its report's figure)",
            Summary("draw_chance", WAIT),
        ),
    ),
    F(
        "bench-regions",
        "python benchmarks/bench_regions.py --repeats 5",
        "~5 min",
        ("median seats/s", "21,288 (6,042 on the slower machine)", Printed(r"median ([\d,]+)")),
    ),
    F(
        "parties",
        f'{VARIANTS} team_4v4 --variant "solo=" --variant "parties={PARTY}" --variant '
        f'"strict={PARTY};parties.parity=[[0, 0], [2, 2], [4, 8]]" --variant '
        f'"max={PARTY};parties.skill=max" --replications 20 --save runs.csv',
        "~10 min on 2 cores",
        (
            "mean queue row (parties - solo +0.118 [+0.110, +0.126])",
            "+0.118 [+0.110, +0.126]",
            Line(WAIT),
        ),
        ("true skill gap row (parties - solo)", "+0.085 [+0.063, +0.107]", Line(GAP)),
    ),
    F(
        "team-4v4",
        "lobbysim compare team_4v4 --replications 20",
        "~3 min on 2 cores",
        ("true skill gap, oracle", "0.324 [0.317, 0.330]", Summary("oracle", GAP)),
        ("true skill gap, draw_chance", "0.836 [0.820, 0.851]", Summary("draw_chance", GAP)),
        ("true skill gap, uniform_random", "1.06 [1.05, 1.07]", Summary("uniform_random", GAP)),
        ("draw_chance's fair band share", "0.970", Summary("draw_chance", "fair_band_share")),
        ("draw_chance's captured share", "30% [28%, 33%]", Printed(SHARE)),
    ),
    F(
        "team-balance",
        "python scripts/team_balance.py",
        "~5 min on 2 cores",
        (
            "the starting teams' gap row",
            "draw_chance 0.842 [0.832, 0.853], uniform_random 1.147 [1.128, 1.165], oracle 0.056",
            Line("start"),
        ),
    ),
    F(
        "global-5v5",
        "lobbysim compare global_5v5 --replications 10",
        "~30 min on 2 cores",
        ("true skill gap, oracle", "0.227 [0.222, 0.233]", Summary("oracle", GAP)),
        ("true skill gap, draw_chance", "0.608 [0.601, 0.616]", Summary("draw_chance", GAP)),
        ("true skill gap, uniform_random", "0.997 [0.990, 1.00]", Summary("uniform_random", GAP)),
    ),
    F(
        "ladder-4v4",
        "lobbysim compare ladder_4v4 --replications 20",
        "~10 min on 2 cores",
        (
            "team gap, draw_chance",
            "0.628 [0.614, 0.643]",
            Summary("draw_chance", "team_gap_true_mean"),
        ),
        (
            "team gap, uniform_random",
            "1.13 [1.11, 1.16]",
            Summary("uniform_random", "team_gap_true_mean"),
        ),
        ("mean wait, draw_chance (min)", "3.69", Summary("draw_chance", WAIT)),
    ),
    F(
        "rules-tight-ping",
        "lobbysim compare flexmatch_5v5 --rules flexmatch/fair_teams_low_ping.json,tight_ping.json"
        " --replications 2 --set base.size=5000",
        "1 min 26 s on 2 cores",
        (
            "tight_ping - fair_teams_low_ping, mean queue (min)",
            "+4.15 s [-69.1, +77.4]",
            Difference("tight_ping", WAIT),
        ),
        manual="needs tight_ping.json, a hand-edited copy of the bundled rule set",
    ),
    F(
        "flexmatch-builders",
        f'{VARIANTS} flexmatch_5v5 --replications 20 --variant "flexmatch=matchmaker.algorithm='
        'flexmatch;base.size=5000" --variant "exact=matchmaker.algorithm=exact;base.size=5000"'
        ' --variant "seed_greedy=matchmaker.algorithm=seed_greedy;base.size=5000"',
        "~1 h on 2 cores",
        (
            "mean queue row (exact - builder -1.161 [-1.229, -1.092])",
            "-1.161 [-1.229, -1.092]",
            Line(WAIT),
        ),
    ),
    F(
        "exact-vs-seed-greedy",
        f"{VARIANTS} flexmatch_5v5 --variant exact= --variant"
        " seed_greedy=matchmaker.algorithm=seed_greedy --replications 10",
        "~1 h on 2 cores",
        ("mean queue row (seed_greedy - exact)", "+0.640 [+0.601, +0.679]", Line(WAIT)),
    ),
    F(
        "published-rules",
        "python scripts/published_rules.py tests/fixtures/flexmatch/modelled",
        "~2 min",
        (
            "the first rule set's line",
            "16 of 18 load, run and write back",
            Printed(r"\A\s*(\S.*?)\n"),
        ),
    ),
    F(
        "one-visit-sweep",
        "lobbysim sweep scenarios/one_visit.yaml",
        "~1.5 min on 2 cores",
        (
            "the headline",
            "cells 5 and 6 wait 2 minutes longer for less even games",
            Printed(r"(Sweep headline.*?)\n\n"),
        ),
    ),
    F(
        "quickstart-sweep",
        "lobbysim sweep quickstart",
        "27 s on a quiet 2-core machine",
        (
            "fairest at base 250",
            "cell 5 point_estimate 1.77 [1.69, 1.86]",
            Printed(r"base\.size=250: fairest \(true skill gap\): (cell \d+ \S+ \S+ \[\S+, \S+\])"),
        ),
        (
            "fairest at base 500",
            "cell 6 draw_chance 1.59 [1.54, 1.63]",
            Printed(r"base\.size=500: fairest \(true skill gap\): (cell \d+ \S+ \S+ \[\S+, \S+\])"),
        ),
    ),
    F(
        "tune-quickstart",
        "lobbysim tune quickstart --space scenarios/spaces/quickstart.yaml --jobs 2",
        "17 min on a busy 2-core machine",
        (
            "the answer's lead",
            "no better than what you ship",
            Printed(r"\n((?:no better|better|worse|the shipped)[^\n]*)"),
        ),
    ),
    F(
        "bench-tune",
        "python benchmarks/bench_tune.py",
        "~35 min on 2 cores",
        ("the target line", "MET", Line("target (")),
    ),
    F(
        "bench-tune-grid",
        "python benchmarks/bench_tune_grid.py",
        "~6 min on 2 cores",
        ("the targets line", "(docs/tune.md)", Line("targets (budget")),
    ),
    F(
        "calibrate-roundtrip",
        "python scripts/calibrate_roundtrip.py",
        "~12 min on 2 cores",
        ("skill sd row", "+0.5% +0.0% +2.8% -4.2%", Line("skill sd  ")),
        ("newcomers row", "+3.1% +10.9% +38.4% -0.6%", Line("newcomers per day")),
    ),
    F(
        "calibrate-age",
        "python benchmarks/bench_calibrate_age.py",
        "~4 min on 2 cores",
        ("the 2-day lead", "1.1300 [1.1065, 1.1536]", Line("lead  2 days")),
        ("the 14-day lead against it", "-0.0460 [-0.0683, -0.0237]", Line("lead 14 days")),
    ),
    F(
        "calibrate-tuning",
        "python benchmarks/bench_calibrate_tuning.py",
        "~4 min on 2 cores",
        (
            "the raters' change over the 12 logs",
            "bayesian 0.6489 (-0.0014 [-0.0035, +0.0008])",
            Line("now over the logs"),
        ),
        (
            "Glicko-2 against the Bayesian rater",
            "bar holds on 8 of 12 logs; over the logs +0.0023 [+0.0001, +0.0045]",
            Line("now, glicko2 against bayesian"),
        ),
    ),
    F(
        "bench-calibrate",
        "python benchmarks/bench_calibrate.py",
        "~1 min",
        (
            "reading and fitting 1,000,000 seats",
            "24.9 s quiet, 99.9 s shared",
            Line("read + fit of"),
        ),
    ),
    F(
        "paper-top",
        "lobbysim paper --case top --paths 10000 --seed 2011 --out outputs/paper-top",
        "~1 min on 2 cores",
        ("the claims' verdicts", "(docs/paper-reproduction)", Line("claim")),
    ),
    F(
        "bench-paper-study",
        "python benchmarks/bench_paper_study.py",
        "~3 min",
        ("the study's time", "173 s", Line("study:")),
    ),
    F(
        "bench-kg-numpy",
        "python benchmarks/bench_kg_numpy.py",
        "~2 min",
        ("plain / lobbysim", "9.5x", Line("plain / lobbysim")),
    ),
    F(
        "lobby-speed",
        ("python benchmarks/bench_lobby.py", "python benchmarks/bench_lobby_ffa.py"),
        "~10 min",
        ("1v1 at ~10,000", "46,236 games/s", Line(" 10,000 target concurrent")),
        ("ffa at ~20,000", "31,954 seats filled/s", Line("20,000", command=1)),
    ),
    F(
        "lobby-targets",
        (
            "python benchmarks/bench_minimal_lobby.py --repeats 5",
            "python benchmarks/bench_lobby.py --repeats 3",
            "python benchmarks/bench_lobby_ffa.py --repeats 3",
            "python benchmarks/bench_wake_on_arrival.py --repeats 9",
            "python benchmarks/bench_kg_numpy.py",
            "python benchmarks/bench_player_base.py --baseline CHECKOUT --days 3",
        ),
        "~1 h",
        ("lobbysim against a minimal lobby", "1.57x", Line("minimal SimPy lobby")),
        manual="bench_player_base.py needs the checkout of 3910552 in place of CHECKOUT",
    ),
    F(
        "lobby-memory",
        "python benchmarks/bench_lobby_memory.py",
        "~10 min",
        ("peak after 64 simulated hours, streamed", "263.4 MB", Line("64 h")),
    ),
    F(
        "update-speed",
        "python benchmarks/bench_update_1v1.py",
        "seconds",
        ("updates a second", "13 million", Line("million updates/s")),
    ),
)


def command_line(command: str, scratch: Path, out: Path) -> list[str]:
    """The argument list that runs ``command`` as the page writes it: ``lobbysim`` and
    ``python`` this interpreter, repository paths absolute, the output folder ``out``."""
    words = shlex.split(command)
    if words[0] == "lobbysim":
        words = [sys.executable, "-m", "lobbysim", *words[1:]]
        if words[3] in WRITES_A_FOLDER:
            if "--out" in words:
                words[words.index("--out") + 1] = str(out)
            else:
                words += ["--out", str(out)]
    elif words[0] == "python":
        words[0] = sys.executable
    return [str(ROOT / w) if "/" in w and (ROOT / w).exists() else w for w in words]


def run_finding(finding: Finding, scratch: Path) -> list[Output]:
    outputs = []
    for index, command in enumerate(finding.commands):
        out = scratch / f"{finding.name}-{index}"
        words = command_line(command, scratch, out)
        print(f"$ {command}", flush=True)
        start = time.monotonic()
        done = subprocess.run(words, cwd=scratch, capture_output=True, text=True, check=False)
        seconds = time.monotonic() - start
        print(f"  exit {done.returncode} after {seconds:.0f} s", flush=True)
        if done.returncode != 0:
            print("  " + "\n  ".join(done.stderr.strip().splitlines()[-5:]), flush=True)
        outputs.append(Output(out if out.is_dir() else None, done.stdout + done.stderr))
    return outputs


def report(finding: Finding, outputs: Sequence[Output]) -> None:
    print(f"{finding.name}: documented | now")
    for label, documented, read in finding.figures:
        try:
            now = read(outputs)
        except (FileNotFoundError, IndexError, KeyError) as exc:
            now = f"unread: {exc}"
        print(f"  {label}: {documented} | {now}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list the findings and stop")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run this finding (again for more)",
    )
    parser.add_argument("--keep", type=Path, help="the scratch folder to run in and keep")
    args = parser.parse_args(argv)
    by_name = {f.name: f for f in FINDINGS}
    if args.list or not args.only:
        for f in FINDINGS:
            how = f"not run by the script: {f.manual}" if f.manual else f"cost: {f.cost}"
            print(f"{f.name} ({len(f.commands)} command{'s' * (len(f.commands) > 1)}; {how})")
            for command in f.commands:
                print(f"    {command}")
        return 0
    unknown = [name for name in args.only if name not in by_name]
    if unknown:
        print(
            f"findings: error: --only: no finding {unknown[0]!r} (--list names them)",
            file=sys.stderr,
        )
        return 2
    chosen = [by_name[name] for name in args.only]
    manual = [f for f in chosen if f.manual]
    if manual:
        print(f"findings: error: --only {manual[0].name}: {manual[0].manual}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="findings-") as temporary:
        scratch = args.keep or Path(temporary)
        scratch.mkdir(parents=True, exist_ok=True)
        for finding in chosen:
            report(finding, run_finding(finding, scratch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
