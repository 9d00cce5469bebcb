"""The evaluation of the rule kinds FlexMatch's rule types brought (docs/model.md, section 10).

:class:`lobbysim.sim.rules.RuleSet` holds the rules; this module decides, from arrays, whether
a candidate match keeps one of the kinds ``compare`` (each ticket's value, or each player's
string, against a constant), ``team_sizes`` (the teams' sizes within the limit), the counting
kinds on a ``string_list`` (``overlap``, ``contains``, ``reference_overlap``: a count against
a minimum or a maximum, each ticket's list its members' pooled by ``union`` or
``intersection``) and ``compound`` (its statement over the named rules' truth values). The sort
kinds constrain nothing. :func:`pair_ok` is the exact 1v1 search's check of every kind on
pairs of players at once (the pair's clock; a compound through its rules' pair checks).

Under ``partial`` (a match short of players, seed-and-greedy) a check waits (holds) unless a
fuller match could not keep the rule either: a minimum of values common to every list, a
maximum of lists holding a value, and the per-ticket checks (``compare``,
``reference_overlap``) are checked; the others wait for the whole match.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lobbysim.scenario.rules import LIST_KINDS, SORT_KINDS, WORLD_KINDS, list_party

#: The kinds :func:`more_kind_holds` evaluates.
MORE_KINDS = ("compare", "team_sizes", "compound", *LIST_KINDS, *SORT_KINDS)
_COMBINE: dict[str, Callable[[Any], Any]] = {
    "average": np.mean,
    "min": np.min,
    "max": np.max,
}

#: ``compare``'s operations, elementwise.
OPS: dict[str, Callable[[Any, Any], Any]] = {
    "=": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}


def bit_of(values: Sequence[str], value: str | None) -> int:
    """Return the bit of ``value`` in a list attribute's masks (0 if it is not one of its
    values)."""
    if value is None or value not in values:
        return 0
    return 1 << list(values).index(value)


def mask_of(values: Sequence[str], chosen: Sequence[str]) -> int:
    """Return the mask of the values ``chosen`` among a list attribute's ``values``."""
    out = 0
    for value in chosen:
        out |= bit_of(values, value)
    return out


def translate(mask: int, source: Sequence[str], target: Sequence[str]) -> int:
    """Return a mask of ``source``'s values as the same values' mask in ``target``'s order
    (a value ``target`` lacks is dropped)."""
    out = 0
    for b, value in enumerate(source):
        if mask >> b & 1:
            out |= bit_of(target, value)
    return out


def ticket_masks(
    masks: NDArray[np.int64], tickets: Sequence[Sequence[int]], party: str
) -> list[int]:
    """Return each ticket's list (a bit mask): its members' pooled by ``party`` (``union``, or
    ``intersection``: see :func:`lobbysim.scenario.rules.list_party`)."""
    how = np.bitwise_or if list_party(party) == "union" else np.bitwise_and
    return [int(masks[t[0]]) if len(t) == 1 else int(how.reduce(masks[list(t)])) for t in tickets]


def count_keeps(count: Any, op: str | None, limit: Any) -> Any:
    """Whether a count keeps its bound: at least ``limit``, or at most with ``op`` ``<=``."""
    return count <= limit if op == "<=" else count >= limit


def counting_holds(
    kind: str,
    op: str | None,
    limits: Sequence[float],
    lists: list[int],
    target: int,
    *,
    partial: bool = False,
) -> bool:
    """Whether the tickets' lists (bit masks) keep a counting rule under ``limits`` (each
    ticket's): ``overlap``, the values common to every list; ``contains``, the lists holding
    the ``target`` bit; ``reference_overlap``, each list's values in the ``target`` mask."""
    at_most = op == "<="
    strict = min(limits) if at_most else max(limits)
    if kind == "reference_overlap":
        return all(
            bool(count_keeps((m & target).bit_count(), op, limit))
            for m, limit in zip(lists, limits, strict=True)
        )
    if kind == "overlap":
        if partial and at_most:
            return True  # the common values only shrink as tickets join
        common = functools.reduce(operator.and_, lists)
        return bool(count_keeps(common.bit_count(), op, strict))
    assert kind == "contains"
    if partial and not at_most:
        return True  # the lists holding the value only grow as tickets join
    return bool(count_keeps(sum(1 for m in lists if m & target), op, strict))


def compare_keeps(values: Any, op: str, limits: Any, center: float | None = None) -> Any:
    """Whether each value keeps ``value op limit`` (elementwise); ``within`` (``beyond``):
    its distance from ``center`` at most (at least) the limit."""
    if op in ("within", "beyond"):
        assert center is not None
        gap = np.abs(np.asarray(values, dtype=float) - center)
        return gap <= limits if op == "within" else gap >= limits
    return OPS[op](np.asarray(values, dtype=float), np.asarray(limits, dtype=float))


#: ``compare``'s operations on two floats (the per-match check, faster than arrays).
_SCALAR: dict[str, Callable[[float, float], bool]] = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def compare_holds(
    values: Sequence[float], op: str, limits: Sequence[float], center: float | None = None
) -> bool:
    """Whether every ticket's value keeps its comparison (each ticket's own limit)."""
    if op in ("within", "beyond"):
        assert center is not None
        if op == "within":
            return all(abs(v - center) <= lim for v, lim in zip(values, limits, strict=True))
        return all(abs(v - center) >= lim for v, lim in zip(values, limits, strict=True))
    keeps = _SCALAR[op]
    return all(keeps(v, lim) for v, lim in zip(values, limits, strict=True))


def team_sizes_hold(sides: NDArray[np.intp], limit: float) -> bool:
    """Whether the teams' sizes (``sides``: each player's team) differ by at most ``limit``
    (the largest less the smallest)."""
    counts = np.unique(sides, return_counts=True)[1]
    return int(counts.max() - counts.min()) <= limit if counts.size else True


def _monotone(tree: Any) -> bool:
    """Whether a statement tree is of names, ``and`` and ``or`` only: then, with each rule
    read as whether it may still hold once more players join, the statement is whether the
    compound may still hold (a match short of players is held to it as it grows)."""
    if isinstance(tree, str):
        return True
    op, children = tree
    return op in ("and", "or") and all(_monotone(c) for c in children)


def evaluate(tree: Any, truth: Callable[[str], Any]) -> Any:
    """Return a compound statement's value (a tree of :func:`lobbysim.scenario.compound.
    parse_statement`) from each named rule's ``truth`` (a bool, or a boolean array evaluated
    elementwise)."""
    if isinstance(tree, str):
        return truth(tree)
    op, children = tree
    values = [evaluate(c, truth) for c in children]
    if op == "not":
        return np.logical_not(values[0])
    if op == "and":
        return np.logical_and.reduce(values)
    if op == "or":
        return np.logical_or.reduce(values)
    assert op == "xor"  # exactly one true
    return np.sum(np.asarray(values, dtype=int), axis=0) == 1


def more_kind_holds(
    rules: Any,
    rule: Any,
    limits: list[float],
    view: Any,
    tickets: Sequence[Sequence[int]],
    teams: Sequence[int] | None,
    *,
    partial: bool,
) -> bool:
    """Return whether a match keeps one rule of :data:`MORE_KINDS` (the
    :meth:`lobbysim.sim.rules.RuleSet.holds` of ``rules``, a RuleSet; ``view`` its View)."""
    kind, config = rule.kind, rule.config
    if kind in SORT_KINDS:
        return True  # a sort orders candidates and constrains nothing
    if kind == "compare" and config.value is not None:  # a string: every player's
        target = rules.attributes.values[rule.attribute].index(config.value)
        players = [p for t in tickets for p in t]
        same = view.codes[rule.attribute][players] == target
        return bool(same.all() if config.op == "=" else (~same).all())
    if kind == "compare":
        x = view.numbers[rule.attribute]
        how = _COMBINE[config.party]
        values = [float(x[t[0]]) if len(t) == 1 else float(how(x[list(t)])) for t in tickets]
        return compare_holds(values, config.op, limits, config.center)
    if kind in LIST_KINDS:
        values_of = rules.attributes.values[rule.attribute]
        lists = ticket_masks(view.masks[rule.attribute], tickets, config.party)
        if kind == "contains":
            target = bit_of(values_of, config.value)
        elif config.reference is not None:  # the values common to every player's list
            players = [p for t in tickets for p in t]
            common = int(np.bitwise_and.reduce(view.masks[config.reference][players]))
            if partial and config.op == "<=":
                return True  # the common values only shrink as players join
            target = translate(common, rules.attributes.values[config.reference], values_of)
        else:
            target = mask_of(values_of, config.values)
        return counting_holds(kind, config.op, limits, lists, target, partial=partial)
    if partial and kind == "compound":
        tree = rules.trees[rules.rules.index(rule)]
        if not _monotone(tree):
            return True  # a not() or xor() waits for the whole match
        waits = [float(view.waited[list(t)].max()) for t in tickets]

        def maybe(name: str) -> bool:  # whether the named rule may still hold
            child = rules.rules[rules.by_name[name]]
            held = child.limits(waits)
            return held is None or bool(
                rules.holds(child, held, view, tickets, teams, partial=True)
            )

        return bool(evaluate(tree, maybe))
    if partial:
        return True  # team sizes wait for the whole match
    if kind == "team_sizes":
        if teams is None:
            return True
        sides = np.repeat(np.asarray(teams), [len(t) for t in tickets])
        return team_sizes_hold(sides, min(limits))
    assert kind == "compound"
    waits = [float(view.waited[list(t)].max()) for t in tickets]

    def truth(name: str) -> bool:
        child = rules.rules[rules.by_name[name]]
        held = child.limits(waits)
        return held is None or bool(rules.holds(child, held, view, tickets, teams))

    return bool(evaluate(rules.trees[rules.rules.index(rule)], truth))


def popcount(x: Any) -> NDArray[np.int64]:
    """Return the number of bits set in each (non-negative) 64-bit integer."""
    v = np.asarray(x, dtype=np.uint64)
    v = v - ((v >> np.uint64(1)) & np.uint64(0x5555555555555555))
    v = (v & np.uint64(0x3333333333333333)) + ((v >> np.uint64(2)) & np.uint64(0x3333333333333333))
    v = (v + (v >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return ((v * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.int64)


def pair_ok_more(
    rules: Any,
    rule: Any,
    view: Any,
    pairs: tuple[NDArray[np.intp], NDArray[np.intp]],
    li: Any,
    lj: Any,
    pair_ok: Callable[..., Any],
) -> Any:
    """Return whether each pair of players (two tickets: a whole 1v1 match, so the check is
    exact) keeps a rule of :data:`MORE_KINDS` under the pair's limits ``li``, ``lj`` (``rules``
    the RuleSet, ``view`` its View; ``pair_ok(rule)`` checks the pairs against a compound
    rule's named rule, on its own clock, as :meth:`lobbysim.sim.rule_pass.RulePass.mask`
    does)."""
    i, j = pairs
    config, kind = rule.config, rule.kind
    if kind == "compound":
        trees, named, by_name = rules.trees, rules.rules, rules.by_name
        return evaluate(
            trees[named.index(rule)],
            lambda name: pair_ok(named[by_name[name]]),
        )
    if kind == "compare" and config.value is not None:
        target = rules.attributes.values[rule.attribute].index(config.value)
        c = view.codes[rule.attribute]
        return OPS[config.op](c[i], target) & OPS[config.op](c[j], target)
    if kind == "compare":
        x = view.numbers[rule.attribute]
        op, center = config.op, config.center
        return compare_keeps(x[i], op, li, center) & compare_keeps(x[j], op, lj, center)
    values = rules.attributes.values[rule.attribute]
    m, op = view.masks[rule.attribute], config.op
    strict = np.minimum(li, lj) if op == "<=" else np.maximum(li, lj)
    if kind == "overlap":
        return count_keeps(popcount(m[i] & m[j]), op, strict)
    if kind == "contains":
        bit = bit_of(values, config.value)
        return count_keeps(((m[i] & bit) > 0).astype(int) + ((m[j] & bit) > 0), op, strict)
    if config.reference is None:
        ref: Any = mask_of(values, config.values)
    else:  # the values common to the pair's lists of the reference attribute, in m's order
        common = view.masks[config.reference][i] & view.masks[config.reference][j]
        ref = np.zeros(i.shape, dtype=np.int64)
        for b, value in enumerate(rules.attributes.values[config.reference]):
            ref |= ((common >> b) & 1) * bit_of(values, value)
    return count_keeps(popcount(m[i] & ref), op, li) & count_keeps(popcount(m[j] & ref), op, lj)


def pair_ok(rules: Any, rule: Any, view: Any, i: Any, j: Any, q: Any) -> Any:
    """Whether each pair (``i[k]``, ``j[k]``: pool positions) keeps a rule, by the pair's clock
    (the exact 1v1 search; ``q``: the pairs' qualities)."""
    wi, wj = view.waited[i], view.waited[j]
    clock = rule.config.clock
    if clock == "own":
        li, lj = rule.limits_at(wi), rule.limits_at(wj)
        active = np.minimum(wi, wj) < rule.optional_after
    else:
        wait = {"oldest": np.maximum, "newest": np.minimum}.get(clock, lambda a, b: (a + b) / 2)(
            wi, wj
        )
        li = lj = rule.limits_at(wait)
        active = wait < rule.optional_after
    kind = rule.kind
    if kind == "match_quality":
        ok = q >= np.maximum(li, lj)
    elif kind == "skill_distance":
        x = view.numbers[rule.attribute]
        ok = np.abs(x[i] - x[j]) <= np.minimum(li, lj)
    elif kind == "mean_distance":  # each of the two within the limit of their mean
        x = view.numbers[rule.attribute]
        ok = np.abs(x[i] - x[j]) / 2.0 <= np.minimum(li, lj)
    elif kind in WORLD_KINDS:
        assert view.latency is not None and view.best is not None
        lat = view.latency
        if kind == "delta_ping":
            lat = lat - view.best[:, None]
        ok = ((lat[i] <= li[:, None]) & (lat[j] <= lj[:, None])).any(axis=1)
    elif kind in ("equal", "distinct"):
        c = view.codes[rule.attribute]
        ok = (c[i] == c[j]) if kind == "equal" else (c[i] != c[j])
    elif kind == "count":
        assert rules.attributes is not None
        target = rules.attributes.values[rule.attribute].index(rule.config.value)
        c = view.codes[rule.attribute]
        ok = ((c[i] == target) >= li) & ((c[j] == target) >= lj)
    elif kind in ("compare", "overlap", "contains", "reference_overlap", "compound"):
        child_ok = lambda child: pair_ok(rules, child, view, i, j, q)  # noqa: E731
        ok = pair_ok_more(rules, rule, view, (i, j), li, lj, child_ok)
    else:  # the sort kinds constrain nothing; two teams of one keep team_sizes
        ok = np.ones(i.shape, dtype=bool)
    return ok | ~active
