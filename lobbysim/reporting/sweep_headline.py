"""The headline of a parameter sweep: per setting of what the matchmaker does not choose, the
fairest choice, the quickest, the Pareto-efficient ones and, with both bounds, what each buys.

A sweep's grid mixes two kinds of keys. Those under ``matchmaker.`` and ``raters.``
(:data:`CHOICE_SECTIONS`) are the designer's choices, as is the policy; every other key (the
arrival rate, the player base, the game) is a *setting* the matchmaker has to live with. So the
headline compares the choices (each cell of a setting under each real policy) within each
setting, never across settings: a busier lobby is not a choice. The bounds ``uniform_random``
and ``oracle`` are references, never ranked, never on the frontier. Per setting
(:func:`build_sweep_headline`):

- the *fairest* choice, on the first fairness metric of :mod:`lobbysim.reporting.answer`'s (the
  true skill gap, else the true draw probability), and the one with the *shortest mean queue
  time*: each with its mean [95% interval] over the replications and its paired differences from
  every other choice (the cells share their replication seeds: common random numbers), as
  :func:`~lobbysim.experiments.replications.paired_differences` gives them, Benjamini-Hochberg
  adjusted over that pick's comparisons. The choices not significantly different from the best
  are named (a tie the replications cannot break), else the next best with its difference;
- the *Pareto-efficient* choices on mean queue time against fairness
  (:func:`~lobbysim.reporting.sweep_summary.pareto_front` on the means): those no other choice of
  the setting beats on both; from the shortest wait, each one's paired step from the previous
  (what the longer wait buys);
- with ``uniform_random`` and ``oracle`` among the policies, per cell and real policy the answer
  sentence of :func:`~lobbysim.reporting.answer.answer_sentence`: the share of the oracle's gain
  over random pairing it captures and its costs.

:func:`sweep_headline_blocks` renders it for the report (first, after the title);
:func:`sweep_headline_text` for the terminal, wrapped to
:data:`~lobbysim.reporting.headline.TERMINAL_WIDTH` characters and cut to
:data:`MAX_TERMINAL_LINES` lines (the answers, then the frontiers, then settings left to the
report). Queue times are in seconds where the interval is under two minutes
(:func:`~lobbysim.reporting.answer.duration_text`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from lobbysim.experiments.replications import ORACLE_SHARE_METRICS, paired_differences
from lobbysim.intervals import CONFIDENCE, FDR_LEVEL, difference_support, interval_columns
from lobbysim.metrics import metric_support
from lobbysim.reporting.answer import BOUNDS, answer_sentence, runs_answers
from lobbysim.reporting.document import (
    Block,
    format_p_value,
    md_details,
    md_heading,
    md_items,
    md_table,
    md_text,
)
from lobbysim.reporting.headline import Estimate, metric_label, value_text, wrap_terminal
from lobbysim.reporting.sweep_summary import format_value, pareto_front, policies_in
from lobbysim.reporting.verdicts import HIGHER_IS_BETTER, better_direction

CHOICE_SECTIONS = ("matchmaker.", "raters.")
"""Grid keys under these are the designer's choices; the others are settings."""

QUEUE = "queue_time_mean"
"""The queue-time metric of the headline (the wait every player pays)."""

MAX_TERMINAL_LINES = 12
"""The most lines the terminal's headline takes; the rest is in the report."""

MAX_TIED = 2
"""Choices named as not significantly different from the best (the others are counted)."""

MAX_SHOWN_ANSWERS = 4
"""A setting's answer sentences shown in the report; more are folded."""


def split_keys(grid_keys: Sequence[str]) -> tuple[list[str], list[str]]:
    """Return the grid keys that are choices (:data:`CHOICE_SECTIONS`) and those that are
    settings, each in grid order."""
    choices = [k for k in grid_keys if k.startswith(CHOICE_SECTIONS)]
    return choices, [k for k in grid_keys if k not in choices]


@dataclass(frozen=True)
class Choice:
    """One cell under one real policy, with its levels (mean [95% interval]) per metric."""

    cell: int
    policy: str
    levels: Mapping[str, Estimate]


@dataclass(frozen=True)
class Rival:
    """Another choice against the best: its paired difference (rival minus best)."""

    choice: Choice
    difference: Estimate
    p_adjusted: float

    @property
    def significant(self) -> bool:
        return math.isfinite(self.p_adjusted) and self.p_adjusted < FDR_LEVEL


@dataclass(frozen=True)
class Pick:
    """The best choice on one metric and every other choice against it, closest first."""

    metric: str
    best: Choice
    rivals: tuple[Rival, ...]

    @property
    def tied(self) -> tuple[Rival, ...]:
        """The rivals not significantly different from the best (with a test)."""
        return tuple(r for r in self.rivals if math.isfinite(r.p_adjusted) and not r.significant)


@dataclass(frozen=True)
class Step:
    """A frontier point with its paired step from the previous one (None for the first)."""

    choice: Choice
    queue: Estimate | None
    fairness: Estimate | None


@dataclass(frozen=True)
class Setting:
    """The headline of one setting: its values, cells, picks, frontier and answers."""

    values: Mapping[str, Any]
    cells: tuple[int, ...]
    choices: tuple[Choice, ...]
    picks: tuple[Pick, ...]
    frontier: tuple[Step, ...]
    #: (cell, policy, sentence), per cell and real policy (with both bounds in the sweep).
    answers: tuple[tuple[int, str, str], ...] = ()


@dataclass(frozen=True)
class SweepHeadline:
    """The headline of a sweep (see the module docstring)."""

    fairness: str | None
    choice_keys: tuple[str, ...]
    setting_keys: tuple[str, ...]
    policies: tuple[str, ...]
    replications: tuple[int, int]
    #: The choice keys' values of each cell, as text, in the order of ``choice_keys``.
    cell_values: Mapping[int, tuple[str, ...]]
    settings: tuple[Setting, ...]


# --------------------------------------------------------------------------------------------
# Numbers


def _levels(values: Mapping[str, np.ndarray]) -> dict[str, Estimate]:
    out = {}
    for metric, column in values.items():
        stats = interval_columns(column, metric_support(metric))
        out[metric] = Estimate(
            float(stats["mean"]), float(stats["ci_low"]), float(stats["ci_high"])
        )
    return out


def _sign(metric: str) -> float:
    """+1 where higher is better, -1 where lower is."""
    return 1.0 if better_direction(metric) == HIGHER_IS_BETTER else -1.0


def _pick(metric: str, choices: Sequence[Choice], runs: pd.DataFrame) -> Pick | None:
    """Return the best choice on ``metric`` with its paired differences from the others."""
    usable = [c for c in choices if math.isfinite(c.levels[metric].mean)]
    if not usable:
        return None
    sign = _sign(metric)
    best = max(usable, key=lambda c: sign * c.levels[metric].mean)  # the first on ties
    ids = {f"{c.cell}|{c.policy}": c for c in usable}
    frame = runs.assign(policy=runs["cell"].astype(str) + "|" + runs["policy"].astype(str))
    frame = frame[frame["policy"].isin(list(ids))][["policy", "replication", metric]]
    rivals = []
    if len(usable) > 1:
        differences = paired_differences(frame, f"{best.cell}|{best.policy}")
        for _, row in differences.iterrows():
            estimate = Estimate(float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]))
            rivals.append(Rival(ids[str(row["policy"])], estimate, float(row["p_adjusted"])))
    # closest to the best first (then in cell and policy order)
    rivals.sort(key=lambda r: -sign * (r.choice.levels[metric].mean - best.levels[metric].mean))
    return Pick(metric, best, tuple(rivals))


def _step(before: pd.DataFrame, after: pd.DataFrame, metric: str) -> Estimate:
    """Return the paired difference ``after - before`` over the replications both have."""
    diff = (after[metric] - before[metric]).to_numpy(dtype=float)
    stats = interval_columns(diff, difference_support(metric_support(metric)))
    return Estimate(float(stats["mean"]), float(stats["ci_low"]), float(stats["ci_high"]))


def _frontier(
    choices: Sequence[Choice], fairness: str, by_run: Mapping[tuple[int, str], pd.DataFrame]
) -> tuple[Step, ...]:
    """Return the Pareto-efficient choices from the shortest mean queue time, with steps."""
    usable = [
        c
        for c in choices
        if math.isfinite(c.levels[QUEUE].mean) and math.isfinite(c.levels[fairness].mean)
    ]
    on_front = pareto_front(
        [c.levels[QUEUE].mean for c in usable],
        [c.levels[fairness].mean for c in usable],
        minimize_y=better_direction(fairness) != HIGHER_IS_BETTER,
    )
    front = [c for c, on in zip(usable, on_front, strict=True) if on]
    front.sort(key=lambda c: (c.levels[QUEUE].mean, -_sign(fairness) * c.levels[fairness].mean))
    steps = []
    for k, choice in enumerate(front):
        if k == 0:
            steps.append(Step(choice, None, None))
            continue
        before = by_run[(front[k - 1].cell, front[k - 1].policy)]
        after = by_run[(choice.cell, choice.policy)]
        steps.append(Step(choice, _step(before, after, QUEUE), _step(before, after, fairness)))
    return tuple(steps)


def _answers(
    runs: pd.DataFrame, cells: Sequence[int], policies: Sequence[str]
) -> tuple[tuple[int, str, str], ...]:
    """Return per cell and real policy its answer sentence (with both bounds in the cell)."""
    out = []
    for cell in cells:
        mine = runs[runs["cell"] == cell]
        present = [p for p in policies if p in set(mine["policy"])]
        for answer in runs_answers(mine, present):
            out.append((cell, answer.policy, answer_sentence(answer)))
    return tuple(out)


def _grouped(firsts: pd.DataFrame, keys: Sequence[str]) -> dict[tuple[str, ...], list[int]]:
    """Return the cells per combination of the values of ``keys`` (as text), in cell order."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for _, row in firsts.iterrows():
        values = tuple(format_value(row[k]) for k in keys)
        groups.setdefault(values, []).append(int(row["cell"]))
    return groups


def build_sweep_headline(results: pd.DataFrame, grid_keys: Sequence[str]) -> SweepHeadline:
    """Return the headline of a sweep from its per-run results.

    Args:
        results: one row per successful run: ``cell``, the grid keys, ``policy``,
            ``replication``, ``seed`` (optional) and the metrics; replication r of every cell and
            policy ran on the same seeds (common random numbers), so differences pair on it.
        grid_keys: the swept keys, in grid order.
    """
    choice_keys, setting_keys = split_keys(grid_keys)
    policies = policies_in(results) if not results.empty else []
    real = [p for p in policies if p not in BOUNDS]
    fairness = next(
        (m for m in ORACLE_SHARE_METRICS if m in results.columns and results[m].notna().any()),
        None,
    )
    metrics = [m for m in (fairness, QUEUE) if m is not None and m in results.columns]
    sizes = results.groupby(["cell", "policy"]).size() if not results.empty else pd.Series([0])
    replications = (int(sizes.min()), int(sizes.max()))
    firsts = results.drop_duplicates("cell").sort_values("cell", kind="stable")
    cell_values = {
        int(row["cell"]): tuple(format_value(row[k]) for k in choice_keys)
        for _, row in firsts.iterrows()
    }
    by_run = {
        (int(cell), str(policy)): group.set_index("replication")
        for (cell, policy), group in results.groupby(["cell", "policy"], sort=False)
    }
    settings = []
    for values, cells in _grouped(firsts, setting_keys).items():
        choices = []
        for cell in cells:
            for policy in real:
                group = by_run.get((cell, policy))
                if group is not None:
                    columns = {m: group[m].to_numpy(dtype=float) for m in metrics}
                    choices.append(Choice(cell, policy, _levels(columns)))
        runs = results[results["cell"].isin(cells)]
        picks = [_pick(m, choices, runs) for m in metrics]
        frontier = (
            _frontier(choices, fairness, by_run)
            if fairness is not None and QUEUE in metrics
            else ()
        )
        said = _answers(runs, cells, policies) if replications[1] >= 2 else ()
        settings.append(
            Setting(
                dict(zip(setting_keys, values, strict=True)),
                tuple(cells),
                tuple(choices),
                tuple(p for p in picks if p is not None),
                frontier,
                said,
            )
        )
    return SweepHeadline(
        fairness,
        tuple(choice_keys),
        tuple(setting_keys),
        tuple(policies),
        replications,
        cell_values,
        tuple(settings),
    )


# --------------------------------------------------------------------------------------------
# Wording

_NBSP = "\u00a0"
"""Joins the words the terminal's wrapping must keep on one line (a name, a grid value):
:func:`~lobbysim.reporting.headline.wrap_terminal` writes it back as a space."""

_LONGEST_KEPT = 40
"""Grid values longer than this may be broken across lines in the terminal."""


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _replications_text(headline: SweepHeadline) -> str:
    low, high = headline.replications
    return _count(low, "replication") if low == high else f"{low} to {high} replications"


def _namer(headline: SweepHeadline, setting: Setting, space: str = " ") -> Callable[[Choice], str]:
    """Return how a choice is named: its cell where the setting has several (or the sweep one
    real policy), its policy where the sweep has several real ones; words joined by ``space``."""
    cells = len(setting.cells) > 1
    policies = len({c.policy for c in setting.choices}) > 1

    def name(choice: Choice) -> str:
        parts = [f"cell{space}{choice.cell}"] if cells or not policies else []
        return space.join([*parts, choice.policy] if policies else parts)

    return name


def setting_label(headline: SweepHeadline, setting: Setting) -> str:
    """Return a setting's name: its values (``base.size=250``), or all cells without any."""
    if not headline.setting_keys:
        return f"All {_count(len(setting.cells), 'cell')}"
    label = ", ".join(f"{k}={v}" for k, v in setting.values.items())
    return label if len(setting.cells) > 1 else f"{label} (cell {setting.cells[0]})"


def pick_label(pick: Pick, *, direction: bool = True) -> str:
    """Return what a pick is: ``fairest (true skill gap, lower is better)``, ..."""
    if pick.metric == QUEUE:
        return "shortest mean wait"
    what = metric_label(pick.metric)
    if direction:
        what += f", {better_direction(pick.metric)} is better"
    return f"fairest ({what})"


def pick_text(
    pick: Pick, name: Callable[[Choice], str], *, space: str = " ", intervals: bool = True
) -> str:
    """Return the best choice with its level, then the choices the replications cannot tell
    from it (or else the next best), each with its paired difference (it minus the best, shown
    for the ties only with ``intervals``) and adjusted p-value."""
    metric = pick.metric
    level = pick.best.levels[metric]
    text = f"{name(pick.best)} {value_text(level, metric)}"
    if not pick.rivals:
        return f"{text} (the only choice)"
    if not math.isfinite(level.low):
        return f"{text} (1 replication: no interval and no test)"

    def p_text(rival: Rival) -> str:
        return f"adjusted{space}p{space}{format_p_value(rival.p_adjusted)}"

    def against(rival: Rival) -> str:
        difference = value_text(rival.difference, metric, signed=True)
        return f"{name(rival.choice)} {difference} ({p_text(rival)})"

    tied = pick.tied
    if len(tied) == len(pick.rivals) > 1:  # the replications tell no choice from the best
        closest = against(tied[0]) if intervals else f"{name(tied[0].choice)}, {p_text(tied[0])}"
        return f"{text}; no other choice differs significantly (the closest: {closest})"
    more = len(tied) - MAX_TIED
    rest = f" and {_count(more, 'other')}" if more > 0 else ""
    if tied and intervals:
        shown = "; ".join(against(r) for r in tied[:MAX_TIED])
        return f"{text}; not significantly different: {shown}{rest}"
    if tied:
        shown = ", ".join(f"{name(r.choice)} ({p_text(r)})" for r in tied[:MAX_TIED])
        return f"{text}, no significant difference from {shown}{rest}"
    return f"{text}; next: {against(pick.rivals[0])}"


def frontier_text(
    headline: SweepHeadline, setting: Setting, name: Callable[[Choice], str], *, means: bool = True
) -> str:
    """Return the frontier in one line: with ``means``, ``cell 1 point_estimate 31.3 s, 2.05
    skill points; ...``; without, the cells per policy, ``point_estimate in cells 1, 3``."""
    fairness = str(headline.fairness)
    if not means:
        cells: dict[str, list[int]] = {}
        for step in setting.frontier:
            cells.setdefault(step.choice.policy, []).append(step.choice.cell)
        policies = len({c.policy for c in setting.choices}) > 1
        parts = [
            " ".join([*([policy, "in"] if policies else []), "cells" if len(c) > 1 else "cell"])
            + " "
            + ", ".join(map(str, c))
            for policy, c in cells.items()
        ]
        return f"Pareto-efficient: {'; '.join(parts)}"

    def mean(choice: Choice, metric: str) -> str:
        return value_text(Estimate(choice.levels[metric].mean, math.nan, math.nan), metric)

    points = [
        f"{name(s.choice)} {mean(s.choice, QUEUE)}, {mean(s.choice, fairness)}"
        for s in setting.frontier
    ]
    return f"Pareto-efficient (mean wait, {metric_label(fairness)}): {'; '.join(points)}"


def headline_lead(headline: SweepHeadline) -> str:
    """Return the report's sentence on what the headline compares, and how."""
    choices = " x ".join([*headline.choice_keys, "policy"])
    per = f"per {', '.join(headline.setting_keys)}" if headline.setting_keys else "over all cells"
    bounds = (
        f"; {' and '.join(BOUNDS)} are bounds, never ranked"
        if any(p in BOUNDS for p in headline.policies)
        else ""
    )
    return (
        f"The choices ({choices}) compared {per}: mean [{CONFIDENCE:.0%} CI] over "
        f"{_replications_text(headline)}; differences (a choice minus the best) paired on the "
        "replications' common random numbers, significant where the Benjamini-Hochberg adjusted "
        f"p is below {FDR_LEVEL:.2g} (over each pick's comparisons){bounds}."
    )


def terminal_lead(headline: SweepHeadline) -> str:
    """Return the terminal's first line: what the headline compares, and how."""
    per = f" per {', '.join(headline.setting_keys)}" if headline.setting_keys else ""
    bounds = (
        f"; {' and '.join(BOUNDS)} are bounds, never ranked"
        if any(p in BOUNDS for p in headline.policies)
        else ""
    )
    return (
        f"Sweep headline{per} (mean [{CONFIDENCE:.0%} CI] of {_replications_text(headline)}, "
        f"paired differences, adjusted p){bounds}:"
    )


def cells_text(headline: SweepHeadline, space: str = " ") -> str | None:
    """Return the choice keys' values per cell: ``matchmaker.tick: 0.25 in cells 1, 3; ...``."""
    if not headline.choice_keys:
        return None
    groups: dict[tuple[str, ...], list[int]] = {}
    for cell, values in headline.cell_values.items():
        groups.setdefault(values, []).append(cell)

    def cells(numbers: list[int]) -> str:
        word = "cells" if len(numbers) > 1 else "cell"
        return f"{word}{space}{f',{space}'.join(map(str, numbers))}"

    def kept(value: str) -> str:
        return value.replace(" ", space) if len(value) <= _LONGEST_KEPT else value

    if len(headline.choice_keys) == 1:
        key = headline.choice_keys[0]
        parts = [f"{kept(v[0])} in {cells(c)}" for v, c in groups.items()]
        return f"{key}: {'; '.join(parts)}"
    parts = [
        ", ".join(f"{k}={kept(x)}" for k, x in zip(headline.choice_keys, v, strict=True))
        + f" in {cells(c)}"
        for v, c in groups.items()
    ]
    return "Cells: " + "; ".join(parts)


def _no_headline(headline: SweepHeadline) -> str | None:
    if not headline.settings:
        return "no run succeeded, so there is nothing to compare."
    if not any(s.choices for s in headline.settings):
        return f"only the bounds ({', '.join(headline.policies)}) ran: no real policy to compare."
    return None


def _answer_lines(setting: Setting) -> list[str]:
    """The answer of a setting's fairest choice (the one to read first)."""
    fairest = next((p for p in setting.picks if p.metric != QUEUE), None)
    if fairest is None:
        return []
    best = (fairest.best.cell, fairest.best.policy)
    return [f"cell {c}: {text}" for c, policy, text in setting.answers if (c, policy) == best]


def _setting_lines(
    headline: SweepHeadline, setting: Setting, *, frontier: str, answers: bool
) -> list[str]:
    """Return a setting's terminal lines: its picks and its frontier (``frontier``: "means",
    "cells" or "" for none) in one paragraph, then its fairest choice's answer."""
    name = _namer(headline, setting, _NBSP)
    entries = [
        f"{pick_label(p, direction=False)}: {pick_text(p, name, space=_NBSP, intervals=False)}"
        for p in setting.picks
    ]
    if not entries:
        entries = ["no data on fairness or queue time"]
    if frontier and setting.frontier:
        entries.append(frontier_text(headline, setting, name, means=frontier == "means"))
    label = setting_label(headline, setting)
    lines = wrap_terminal(f"{label}: {'; '.join(entries)}", clauses=False)
    if answers:
        for line in _answer_lines(setting):
            lines += wrap_terminal(f"  {line}", clauses=False)
    return lines


def sweep_headline_text(headline: SweepHeadline, *, max_lines: int = MAX_TERMINAL_LINES) -> str:
    """Return the headline as terminal text: at most ``max_lines`` lines (unless one setting
    takes more) of at most :data:`~lobbysim.reporting.headline.TERMINAL_WIDTH` characters.

    Per setting one paragraph: the fairest and the quickest choice (with the ties' adjusted
    p-values; their intervals are in the report) and the frontier, then the fairest choice's
    answer. What does not fit is left to the report, in this order: the answers, the frontier's
    numbers (its cells stay), then whole settings; a last line says what was left.
    """
    empty = _no_headline(headline)
    if empty is not None:
        return "\n".join(wrap_terminal(f"Sweep headline: {empty}", indent="  "))
    top = wrap_terminal(terminal_lead(headline), indent="  ", clauses=False)
    legend = cells_text(headline, _NBSP)
    if legend is not None:
        top += wrap_terminal(legend, indent="  ", clauses=False)
    has_answers = any(s.answers for s in headline.settings)
    has_frontier = any(len(s.frontier) > 1 for s in headline.settings)
    for frontier, answers in (("means", True), ("means", False), ("cells", False)):
        blocks = [
            _setting_lines(headline, s, frontier=frontier, answers=answers)
            for s in headline.settings
        ]
        left = [
            *(["the answer per cell and policy"] if has_answers and not answers else []),
            *(["the frontier's numbers"] if has_frontier and frontier != "means" else []),
        ]
        fits = len(top) + sum(map(len, blocks)) + bool(left) <= max_lines
        if fits:
            break
    lines = list(top)
    shown = 0
    for block in blocks:
        if shown and not fits and len(lines) + len(block) + 1 > max_lines:
            break
        lines += block
        shown += 1
    if shown < len(blocks):
        left.append(_count(len(blocks) - shown, "more setting"))
    if left:
        lines += wrap_terminal(f"In the report: {', '.join(left)}.", indent="  ")
    return "\n".join(lines)


def _frontier_rows(headline: SweepHeadline, setting: Setting) -> list[list[str]]:
    fairness = str(headline.fairness)
    rows = []
    for step in setting.frontier:
        choice = step.choice
        rows.append(
            [
                str(choice.cell),
                *headline.cell_values.get(choice.cell, ()),
                choice.policy,
                value_text(choice.levels[QUEUE], QUEUE),
                value_text(choice.levels[fairness], fairness),
                "" if step.queue is None else value_text(step.queue, QUEUE, signed=True),
                "" if step.fairness is None else value_text(step.fairness, fairness, signed=True),
            ]
        )
    return rows


def _frontier_blocks(headline: SweepHeadline, setting: Setting) -> list[Block]:
    fairness = str(headline.fairness)
    if len(setting.frontier) == 1:
        only = _namer(headline, setting)(setting.frontier[0].choice)
        reading = (
            f"Pareto-efficient here: {only} alone, both the fairest and the quickest by the "
            "means; no other choice of this setting is better on either."
        )
    else:
        reading = (
            f"Pareto-efficient here, from the shortest mean wait to the best "
            f"{metric_label(fairness)}: no other choice of this setting has both a shorter mean "
            "wait and fairer games (by the means). A step is the paired difference from the "
            "point before it: what the longer wait buys."
        )
    header = [
        "cell",
        *headline.choice_keys,
        "policy",
        "mean wait",
        metric_label(fairness),
        "wait step",
        f"{metric_label(fairness)} step",
    ]
    return [md_text(reading), md_table(header, _frontier_rows(headline, setting))]


def sweep_headline_blocks(headline: SweepHeadline) -> list[Block]:
    """Return the headline as report blocks: a "Headline" section, one part per setting."""
    blocks = [md_heading("Headline")]
    empty = _no_headline(headline)
    if empty is not None:
        return [*blocks, md_text(empty[0].upper() + empty[1:])]
    blocks.append(md_text(headline_lead(headline)))
    legend = cells_text(headline)
    if legend is not None:
        blocks.append(md_text(legend))
    for setting in headline.settings:
        name = _namer(headline, setting)
        if headline.setting_keys:
            label = setting_label(headline, setting)
            if len(setting.cells) > 1:
                label += f" (cells {', '.join(map(str, setting.cells))})"
            blocks.append(md_heading(label, 3))
        items = [(pick_label(p), pick_text(p, name)) for p in setting.picks]
        if items:
            blocks.append(md_items(items))
        if setting.frontier:
            blocks += _frontier_blocks(headline, setting)
        answers = [md_text(f"**Cell {c}:** {sentence}") for c, _, sentence in setting.answers]
        if len(answers) > MAX_SHOWN_ANSWERS:
            title = "What each policy buys over random pairing, per cell"
            blocks.append(md_details(title, answers))
        else:
            blocks += answers
    return blocks
