"""The rule kinds FlexMatch's rule types brought, on hand-set pools against their documented
semantics (lobbysim/scenario/rules.py, docs/model.md section 10): compare, team_sizes, the
counting kinds on lists (overlap, contains, reference_overlap, with union or intersection and a
minimum or maximum count), compound, the sorts, and string_number_map attributes; and the 1v1
pair checks (lobbysim/sim/rule_kinds.py) agree with the whole-match checks on every pair."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from lobbysim.scenario.attributes import AttributeConfig
from lobbysim.scenario.rules import RuleConfig
from lobbysim.sim.attributes import Attributes
from lobbysim.sim.rule_kinds import pair_ok_more
from lobbysim.sim.rules import RuleSet, View

ROLES = AttributeConfig(type="string_list", values={"medic": 0.4, "tank": 0.4, "dps": 0.4})
PLATFORM = AttributeConfig(type="string", values={"pc": 0.7, "console": 0.3})
#: the roles a player wants to meet, its values in another order than ROLES'
WANTS = AttributeConfig(type="string_list", values={"dps": 0.5, "medic": 0.5, "tank": 0.5})
MEDIC, TANK, DPS = 1, 2, 4  # the bits of the roles, in the order declared


def _view(
    rating: list[float],
    waited: list[float] | None = None,
    *,
    codes: list[int] | None = None,
    masks: list[int] | None = None,
    wants: list[int] | None = None,
) -> View:
    r = np.array(rating, dtype=float)
    return View(
        waited=np.zeros(len(r)) if waited is None else np.array(waited, dtype=float),
        rating=r,
        quality=lambda i, j: np.ones(np.shape(i)),
        numbers={"rating": r},
        codes={"platform": np.array(codes or [0] * len(r), dtype=np.int64)},
        masks={
            "roles": np.array(masks or [0] * len(r), dtype=np.int64),
            "wants": np.array(wants or [0] * len(r), dtype=np.int64),
        },
    )


def _rules(*rules: dict[str, Any]) -> RuleSet:
    configs = {"roles": ROLES, "platform": PLATFORM, "wants": WANTS}
    drawn = Attributes(configs, lambda name: np.random.default_rng(len(name)))
    return RuleSet([RuleConfig(**r) for r in rules], drawn, configs)


def _broken(
    rules: RuleSet, view: View, tickets: list[list[int]], teams: Any = None, **kw: Any
) -> int:
    return rules.first_broken(view, tickets, teams, **kw)


def test_compare_holds_each_tickets_value_against_the_constant() -> None:
    view = _view([0.0, 2.0, 5.0])
    at_least = {"name": "c", "kind": "compare", "op": ">=", "limit": 1.0}
    assert _broken(_rules(at_least), view, [[0], [1]]) == 0  # 0 < 1
    assert _broken(_rules(at_least), view, [[1], [2]]) == -1
    # a party's value by its aggregation: min 0, average 1, max 2, against 1
    for party, broken in (("min", 0), ("average", -1), ("max", -1)):
        assert _broken(_rules(at_least | {"party": party}), view, [[0, 1]]) == broken, party
    cases = {"<": ([[0], [1]], [[2]]), "=": ([[1]], [[0]]), "!=": ([[0], [2]], [[1]])}
    for op, (kept, broken_by) in cases.items():
        rule = {"name": "c", "kind": "compare", "op": op, "limit": 2.0 if op != "<" else 3.0}
        assert _broken(_rules(rule), view, kept) == -1, op
        assert _broken(_rules(rule), view, broken_by) == 0, op


def test_compares_expansion_relaxes_the_constant_on_its_clock() -> None:
    rule = {"name": "c", "kind": "compare", "op": ">=", "limit": 3.0, "expansions": ((1.0, 0.0),)}
    view = _view([0.0, 4.0], [2.0, 0.5])
    assert _broken(_rules(rule | {"clock": "oldest"}), view, [[0], [1]]) == -1  # limit 0
    assert _broken(_rules(rule | {"clock": "newest"}), view, [[0], [1]]) == 0  # limit 3
    # own: each ticket against its own limit: 0 (waited 2) >= 0, 4 (waited 0.5) >= 3
    assert _broken(_rules(rule | {"clock": "own"}), view, [[0], [1]]) == -1


def test_compare_within_or_beyond_holds_each_tickets_distance_from_the_center() -> None:
    view = _view([0.0, 2.0, 5.0, 9.0])
    within = {"name": "w", "kind": "compare", "op": "within", "center": 4.0, "limit": 2.0}
    assert _broken(_rules(within), view, [[1], [2]]) == -1  # 2 and 1 from 4
    assert _broken(_rules(within), view, [[0], [2]]) == 0  # 4 from 4
    assert _broken(_rules(within | {"party": "average"}), view, [[0, 3]]) == -1  # 4.5
    beyond = within | {"op": "beyond"}
    assert _broken(_rules(beyond), view, [[0], [3]]) == -1  # 4 and 5 from 4
    assert _broken(_rules(beyond), view, [[0], [2]]) == 0  # 1 from 4


def test_compare_on_a_string_holds_every_players_value() -> None:
    view = _view([0.0] * 3, codes=[0, 1, 0])  # pc, console, pc
    same = {"name": "p", "kind": "compare", "attribute": "platform", "op": "=", "value": "pc"}
    assert _broken(_rules(same), view, [[0], [2]]) == -1
    assert _broken(_rules(same), view, [[0, 1]]) == 0  # a party's console player
    other = same | {"op": "!="}
    assert _broken(_rules(other), view, [[1]]) == -1
    assert _broken(_rules(other), view, [[0], [1]]) == 0


def test_overlap_pools_a_partys_lists_by_union_or_intersection() -> None:
    view = _view([0.0] * 3, masks=[MEDIC | TANK, TANK, MEDIC])
    rule = {"name": "o", "kind": "overlap", "attribute": "roles", "limit": 1}
    assert _broken(_rules(rule), view, [[0], [1]]) == -1  # tank in common
    # the party (1, 2): intersection {} has nothing in common with anyone; union {medic, tank}
    assert _broken(_rules(rule | {"party": "intersection"}), view, [[1, 2], [0]]) == 0
    assert _broken(_rules(rule | {"party": "union"}), view, [[1, 2], [0]]) == -1
    assert _broken(_rules(rule | {"party": "union", "limit": 2}), view, [[1, 2], [0]]) == -1
    assert _broken(_rules(rule | {"party": "union", "limit": 3}), view, [[1, 2], [0]]) == 0


def test_a_maximum_count_of_common_values_waits_for_the_whole_match() -> None:
    view = _view([0.0] * 3, masks=[MEDIC | TANK, MEDIC | TANK, MEDIC])
    at_most = {"name": "o", "kind": "overlap", "attribute": "roles", "limit": 1, "op": "<="}
    assert _broken(_rules(at_most), view, [[0], [1]]) == 0  # two in common
    assert _broken(_rules(at_most), view, [[0], [1], [2]]) == -1  # medic alone
    assert _broken(_rules(at_most), view, [[0], [1]], partial=True) == -1  # may yet shrink


def test_contains_counts_the_lists_holding_the_value() -> None:
    view = _view([0.0] * 4, masks=[MEDIC, MEDIC | TANK, TANK, TANK])
    rule = {"name": "m", "kind": "contains", "attribute": "roles", "value": "medic"}
    tickets = [[0], [1], [2]]  # two lists hold medic
    assert _broken(_rules(rule | {"limit": 2}), view, tickets) == -1
    assert _broken(_rules(rule | {"limit": 3}), view, tickets) == 0
    assert _broken(_rules(rule | {"limit": 3}), view, tickets, partial=True) == -1  # may grow
    assert _broken(_rules(rule | {"limit": 1, "op": "<="}), view, tickets) == 0
    assert _broken(_rules(rule | {"limit": 1, "op": "<="}), view, tickets, partial=True) == 0
    # a party's pooled list counts once: union {medic, tank}, intersection {}
    assert _broken(_rules(rule | {"limit": 2, "party": "union"}), view, [[0, 2], [3]]) == 0
    assert _broken(_rules(rule | {"limit": 1, "party": "union"}), view, [[0, 2], [3]]) == -1
    assert _broken(_rules(rule | {"limit": 1}), view, [[0, 2], [3]]) == 0


def test_reference_overlap_counts_each_lists_values_in_the_reference() -> None:
    view = _view([0.0] * 3, masks=[MEDIC | TANK, TANK, DPS])
    rule = {"name": "r", "kind": "reference_overlap", "attribute": "roles"}
    rule |= {"values": ("medic", "dps"), "limit": 1}  # counts 1, 0, 1
    assert _broken(_rules(rule), view, [[0], [2]]) == -1
    assert _broken(_rules(rule), view, [[0], [1]]) == 0
    assert _broken(_rules(rule), view, [[0], [1]], partial=True) == 0  # per ticket: no wait
    assert _broken(_rules(rule | {"party": "union"}), view, [[1, 2]]) == -1  # {tank, dps}: 1
    assert _broken(_rules(rule | {"op": "<=", "limit": 0}), view, [[1]]) == -1
    assert _broken(_rules(rule | {"op": "<=", "limit": 0}), view, [[0]]) == 0


def test_reference_overlap_on_the_values_every_players_other_list_holds() -> None:
    """FlexMatch's preferred-opponents example: each player's role among the roles every player
    wants to meet (wants' bits: dps 1, medic 2, tank 4)."""
    view = _view([0.0] * 4, masks=[MEDIC, TANK, MEDIC, TANK], wants=[2 | 4, 2 | 4, 2, 2])
    rule = {"name": "r", "kind": "reference_overlap", "attribute": "roles", "reference": "wants"}
    rule |= {"limit": 1}
    assert _broken(_rules(rule), view, [[0], [1]]) == -1  # both want medic and tank
    assert _broken(_rules(rule), view, [[0], [1], [2]]) == 0  # only medic is wanted by all
    assert _broken(_rules(rule), view, [[0], [2]]) == -1
    assert _broken(_rules(rule | {"op": "<=", "limit": 0}), view, [[1], [3]]) == -1  # tanks
    assert _broken(_rules(rule | {"op": "<=", "limit": 0}), view, [[0], [1]]) == 0


def test_team_sizes_compares_the_two_teams_sizes() -> None:
    view = _view([0.0] * 4)
    rule = {"name": "t", "kind": "team_sizes", "limit": 0.0}
    assert _broken(_rules(rule), view, [[0], [1], [2, 3]], [0, 0, 1]) == -1  # 2 v 2
    assert _broken(_rules(rule), view, [[0], [1], [2]], [0, 0, 1]) == 0  # 2 v 1
    assert _broken(_rules(rule | {"limit": 1.0}), view, [[0], [1], [2]], [0, 0, 1]) == -1
    assert _broken(_rules(rule), view, [[0], [1], [2]]) == -1  # not split yet: waits


def test_team_sizes_and_team_balance_on_three_teams_and_uneven_teams() -> None:
    view = _view([3.0, 1.0, 2.0, 2.0, 0.0, 4.0])
    sizes = {"name": "t", "kind": "team_sizes", "limit": 1.0}
    three = [[0], [1], [2], [3], [4], [5]]
    assert _broken(_rules(sizes), view, three, [0, 0, 1, 1, 2, 2]) == -1  # 2, 2, 2
    assert _broken(_rules(sizes), view, three, [0, 0, 0, 1, 1, 2]) == 0  # 3, 2, 1
    # team averages 2, 2, 2 (and 3 + 1, 2 + 2, 0 + 4): every team at the match's average
    balance = {"name": "b", "kind": "team_balance", "limit": 0.2}
    assert _broken(_rules(balance), view, three, [0, 0, 1, 1, 2, 2]) == -1
    # uneven: 3 against 1, 2, 2, 0, 4 (mean 1.8); the match's mean 2: within half the limit
    uneven = [0, 1, 1, 1, 1, 1]
    assert _broken(_rules(balance | {"limit": 2.0}), view, three, uneven) == -1  # 1 <= 1
    assert _broken(_rules(balance | {"limit": 1.9}), view, three, uneven) == 0


def test_mean_distance_holds_each_tickets_value_near_the_players_mean() -> None:
    view = _view([0.0, 2.0, 4.0, 10.0])
    rule = {"name": "m", "kind": "mean_distance", "limit": 2.0}
    assert _broken(_rules(rule), view, [[0], [1], [2]]) == -1  # mean 2: 0, 2, 4 within 2
    assert _broken(_rules(rule), view, [[0], [1], [3]]) == 0  # mean 4: 0 is 4 away
    assert _broken(_rules(rule), view, [[0], [3]], partial=True) == -1  # the mean moves: waits
    # a party's value by its aggregation, the mean over every player: [0, 4] and 2, mean 2
    assert _broken(_rules(rule | {"party": "average"}), view, [[0, 2], [1]]) == -1
    assert _broken(_rules(rule | {"party": "max"}), view, [[0, 2], [1]]) == -1
    assert _broken(_rules(rule | {"party": "max", "limit": 1.9}), view, [[0, 2], [1]]) == 0


A = {"name": "A", "kind": "compare", "op": ">=", "limit": 3.0, "expansions": ((1.0, 1.0),)}
B = {"name": "B", "kind": "compare", "op": "<=", "limit": 0.0}


@pytest.mark.parametrize(
    ("statement", "truth"),
    [
        # A and B of a ticket of rating 0, 2, 5 (A: >= 3; B: <= 0)
        ("or(A, B)", [True, False, True]),
        ("and(A, not(B))", [False, False, True]),
        ("or(not(A), B)", [True, True, False]),
        ("xor(A, not(B))", [False, True, False]),
        ("or(and(A, B), not(or(A, B)))", [False, True, False]),
    ],
)
def test_compound_combines_its_rules_which_hold_only_through_it(
    statement: str, truth: list[bool]
) -> None:
    rules = _rules(A, B, {"name": "C", "kind": "compound", "statement": statement})
    view = _view([0.0, 2.0, 5.0])
    for player, kept in enumerate(truth):
        assert _broken(rules, view, [[player]]) == (-1 if kept else 2), (statement, player)
    assert rules.children == {0, 1}
    # A's own expansion, on its own clock: after a minute it reads >= 1, so rating 2 keeps it
    waited = _view([0.0, 2.0, 5.0], [0.0, 2.0, 0.0])
    anded = _rules(A, B, {"name": "C", "kind": "compound", "statement": "and(A, not(B))"})
    assert _broken(anded, waited, [[1]]) == -1
    assert _broken(anded, view, [[1]]) == 2
    assert _broken(anded, view, [[1]], partial=True) == -1  # waits for the whole match


def test_a_rule_no_compound_names_still_holds_on_its_own() -> None:
    rules = _rules(A, B, {"name": "C", "kind": "compound", "statement": "or(A, A)"})
    assert rules.children == {0}
    assert _broken(rules, _view([5.0]), [[0]]) == 1  # B: 5 > 0


def test_the_sorts_constrain_nothing() -> None:
    sort = {"name": "s", "kind": "distance_sort", "direction": "descending"}
    rules = _rules(sort, {"name": "a", "kind": "absolute_sort"})
    assert _broken(rules, _view([0.0, 100.0]), [[0], [1]]) == -1
    assert [r.name for r in rules.sorts] == ["s", "a"]  # for a builder, in the order listed


def test_a_string_number_map_draws_each_key_and_rules_read_one() -> None:
    prefs = AttributeConfig(
        type="string_number_map", values={"desert": 50.0, "city": -20.0}, sd=1.0
    )
    drawn = Attributes({"prefs": prefs}, lambda name: np.random.default_rng(7))
    pids = np.arange(400)
    desert, city = drawn.column("prefs[desert]", pids), drawn.column("prefs[city]", pids)
    assert abs(desert.mean() - 50.0) < 0.3 and abs(city.mean() + 20.0) < 0.3
    again = Attributes({"prefs": prefs}, lambda name: np.random.default_rng(7))
    assert np.array_equal(again.column("prefs[city]", pids[::-1]), city[::-1])  # by id
    rule = RuleConfig(name="d", kind="compare", attribute="prefs", key="desert", op=">", limit=50)
    rules = RuleSet([rule], drawn, {"prefs": prefs})
    view = rules.view(pids[:2], np.zeros(2), np.zeros(2), lambda i, j: np.ones(np.shape(i)))
    assert np.array_equal(view.numbers["prefs[desert]"], desert[:2])
    expected = -1 if (desert[:2] > 50).all() else 0
    assert rules.first_broken(view, [[0], [1]]) == expected


KINDS = [
    A,
    {"name": "w", "kind": "compare", "op": "within", "center": 2.0, "limit": 1.5},
    {"name": "b", "kind": "compare", "op": "beyond", "center": 2.0, "limit": 1.0},
    {"name": "p", "kind": "compare", "attribute": "platform", "op": "!=", "value": "console"},
    {"name": "o", "kind": "overlap", "attribute": "roles", "limit": 1},
    {"name": "o2", "kind": "overlap", "attribute": "roles", "limit": 1, "op": "<="},
    {"name": "m", "kind": "contains", "attribute": "roles", "value": "tank", "limit": 1},
    {
        "name": "m2",
        "kind": "contains",
        "attribute": "roles",
        "value": "dps",
        "limit": 1,
        "op": "<=",
    },
    {
        "name": "r",
        "kind": "reference_overlap",
        "attribute": "roles",
        "values": ("dps",),
        "limit": 1,
    },
]


@pytest.mark.parametrize("extra", [None, "or(A, m)", "xor(o, not(p))"])
def test_the_pair_checks_of_a_1v1_match_agree_with_the_whole_match_checks(
    extra: str | None,
) -> None:
    rng = np.random.default_rng(3)
    n = 30
    view = _view(
        list(rng.normal(2.0, 2.0, n)),
        list(rng.uniform(0.0, 2.0, n)),
        codes=list(rng.integers(0, 2, n)),
        masks=list(rng.integers(1, 8, n)),
        wants=list(rng.integers(1, 8, n)),
    )
    configs = [dict(k) for k in KINDS]
    if extra is not None:
        configs.append({"name": "C", "kind": "compound", "statement": extra})
    rules = _rules(*configs)
    i, j = (a.ravel() for a in np.triu_indices(n, k=1))
    wait = np.maximum(view.waited[i], view.waited[j])  # the oldest clock
    for k, rule in enumerate(rules.rules):
        if k in rules.children:
            continue

        def ok(child: Any) -> Any:
            limit = child.limits_at(wait)
            return pair_ok_more(rules, child, view, (i, j), limit, limit, ok)

        pairs = ok(rule)
        whole = [
            rules.holds(rule, rule.limits([view.waited[a], view.waited[b]]), view, [[a], [b]])
            for a, b in zip(i.tolist(), j.tolist(), strict=True)
        ]
        assert np.asarray(pairs).tolist() == whole, rule.name
        assert 0 < sum(whole) < len(whole), rule.name  # the pool tests both outcomes
