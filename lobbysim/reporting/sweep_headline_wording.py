"""The wording of a sweep's headline, which :mod:`lobbysim.reporting.sweep_headline` computes:
the report's blocks and the terminal's text.

:func:`sweep_headline_blocks` renders it for the report (first, after the title);
:func:`sweep_headline_text` for the terminal, wrapped to
:data:`~lobbysim.reporting.headline.TERMINAL_WIDTH` characters and cut to
:data:`MAX_TERMINAL_LINES` lines (the answers, then the frontiers, then settings left to the
report). Queue times are in the sweep's one unit (``SweepHeadline.seconds``: seconds where every
run's mean wait is under two minutes, :func:`~lobbysim.reporting.answer.queue_seconds`), as its
figures draw them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from lobbysim.reporting.answer import BOUNDS
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
from lobbysim.reporting.sweep_headline import (
    QUEUE,
    Choice,
    Pick,
    Rival,
    Setting,
    SweepHeadline,
)
from lobbysim.reporting.verdicts import better_direction
from lobbysim.stats.intervals import CONFIDENCE, FDR_LEVEL

MAX_TERMINAL_LINES = 12
"""The most lines the terminal's headline takes; the rest is in the report."""

MAX_TIED = 2
"""Choices named as not significantly different from the best (the others are counted)."""

MAX_SHOWN_ANSWERS = 4
"""A setting's answer sentences shown in the report; more are folded."""


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
    pick: Pick,
    name: Callable[[Choice], str],
    *,
    space: str = " ",
    intervals: bool = True,
    seconds: bool | None = None,
) -> str:
    """Return the best choice with its level, then the choices the replications cannot tell
    from it (or else the next best), each with its paired difference (it minus the best, shown
    for the ties only with ``intervals``) and adjusted p-value."""
    metric = pick.metric
    level = pick.best.levels[metric]
    text = f"{name(pick.best)} {value_text(level, metric, seconds=seconds)}"
    if not pick.rivals:
        return f"{text} (the only choice)"
    if not math.isfinite(level.low):
        return f"{text} (1 replication: no interval and no test)"

    def p_text(rival: Rival) -> str:
        return f"adjusted{space}p{space}{format_p_value(rival.p_adjusted)}"

    def against(rival: Rival) -> str:
        difference = value_text(rival.difference, metric, signed=True, seconds=seconds)
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
        estimate = Estimate(choice.levels[metric].mean, math.nan, math.nan)
        return value_text(estimate, metric, seconds=headline.seconds)

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
        f"{pick_label(p, direction=False)}: "
        + pick_text(p, name, space=_NBSP, intervals=False, seconds=headline.seconds)
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
                value_text(choice.levels[QUEUE], QUEUE, seconds=headline.seconds),
                value_text(choice.levels[fairness], fairness),
                ""
                if step.queue is None
                else value_text(step.queue, QUEUE, signed=True, seconds=headline.seconds),
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
        items = [
            (pick_label(p), pick_text(p, name, seconds=headline.seconds)) for p in setting.picks
        ]
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
