"""The scenario's rule set: constraints as studios write them (docs/model.md, section 10).

``matchmaker.rules`` is a list of :class:`RuleConfig`: each a constraint on the match, on an
attribute of its players (the driving rater's mean, true skill, or an attribute the scenario's
``attributes:`` section draws per player, :class:`~lobbysim.scenario.attributes.AttributeConfig`),
combined over a ticket by a party aggregation and over a team by a team aggregation, with a limit
that relaxes in steps (``expansions``) on the clock of the rule's choice, and that may become
optional after a wait. ``matchmaker.algorithm`` says how matches are searched: ``exact`` (the
matchmaker's own search, every rule a hard constraint), ``seed_greedy`` (the longest-waiting ticket
seeds a match and candidates are added by weighted rule distance while every rule holds) or
``flexmatch`` (FlexMatch's builder: the same, candidates taken oldest first or by the sort rules,
:mod:`lobbysim.sim.flexmatch_builder`). The engine's side is :mod:`lobbysim.sim.rules`.

**Kinds** (``limit`` in the rule's unit; ``attribute`` a number attribute where not said
otherwise, by default the driving rater's mean):

* ``match_quality``: the match's mean pairwise quality (the driving rater's) is at least
  ``limit``; the scenario's ``threshold`` is this rule.
* ``skill_distance``: the largest minus the smallest ticket value (a ticket's members combined
  by ``party``) is at most ``limit``.
* ``team_balance``: the two teams' values (members combined by ``team``) differ by at most
  ``limit`` (team games). Teams of different sizes or more than two (``game.teams``): with
  ``team: average`` each team's average is within half the limit of the match's (every
  player's), FlexMatch's ``distance`` of team averages, which for two teams of one size is the
  same rule; with another ``team``, the largest team value less the smallest. In a
  free-for-all (FlexMatch's one team, whose average is the match's) ``team: average`` always
  holds: it is kept so that an imported rule set writes back whole.
* ``mean_distance``: every ticket's value (members combined by ``party``) is within ``limit``
  of the mean of every player's value in the match (FlexMatch's ``distance`` of each player's
  value from the average; in a 1v1 game ``|a - b| <= 2 limit``).
* ``latency``: some data centre has every ticket's latency to it at most ``limit`` ms (a
  party's members' latencies combined by ``party``; ``max``: every player's); and
  ``delta_ping``: at most ``limit`` ms above the players' best data centres (with a ``world``).
* ``party_parity``: the teams' counts of players in parties of two or more differ by at most
  ``limit`` (team games; more teams: the largest count less the smallest).
* ``equal``: every player has the same value of a ``string`` or ``number`` attribute (or a
  ``string_number_map``'s ``key``; no limit); ``distinct``: no two players have the same value
  (FlexMatch's ``!=`` between players). Each player's own value counts, a party's members' with
  the whole match, so neither takes ``party``.
* ``overlap``: the players' ``string_list`` attribute values have at least ``limit`` values in
  common.
* ``count``: every team (every game in a free-for-all) has at least ``limit`` players whose
  ``string`` attribute is ``value``.
* ``compare``: every ticket's value of a number attribute (its members' combined by ``party``)
  compared with the constant ``limit`` by ``op`` (``=``, ``!=``, ``<``, ``<=``, ``>``,
  ``>=``), or its distance from ``center`` at most (``within``) or at least (``beyond``)
  ``limit``; or every player's value of a ``string`` attribute compared with ``value`` by ``=``
  or ``!=``. With ``>``/``>=`` the limit is a minimum, with ``<``/``<=`` a maximum; ``=`` and
  ``!=`` have no direction to relax and no expansions.
* ``team_sizes``: the teams' sizes differ by at most ``limit`` players, the largest less the
  smallest (FlexMatch's ``EqualTeamSizes`` idiom, ``limit`` 0). Teams of one fixed size always
  keep it; teams of ranges (``game.teams``) may not.
* ``overlap``, ``contains``, ``reference_overlap`` (FlexMatch's ``collection`` rules, on a
  ``string_list``; a ticket's list is its members' pooled by ``party``: ``union``, or
  ``intersection``, the default): the number of values common to every ticket's list; the
  number of tickets whose list holds ``value``; each ticket's number of values among
  ``values`` (a list); each compared with ``limit`` by ``op`` (``>=``, the default: a minimum
  count; ``<=``: a maximum).
* ``compound``: ``statement`` combines earlier rules by name with ``and(...)``, ``or(...)``,
  ``xor(...)`` (exactly one true) and ``not(...)``; the rules it names hold only through it.
* ``absolute_sort``, ``distance_sort``: FlexMatch's sort rules, kept for a builder that orders
  candidates (``direction`` ``ascending`` or ``descending``, ``attribute``, ``map_key``
  ``minValue``/``maxValue`` of a ``string_number_map``, ``party``); they constrain nothing, and
  the ``exact`` and ``seed_greedy`` searches ignore them.

A ``string_number_map`` attribute (``values: {KEY: mean}``, drawn normal with ``sd``) is read
by the number kinds with ``key`` (``attribute: maps, key: desert``), and by the sort rules.

**Clocks.** ``oldest``: the longest wait among the match's tickets drives the expansions;
``newest``: the shortest; ``average``: their mean; ``own``: each ticket's own wait sets its own
limit, and a condition between tickets holds under the stricter of their limits.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from lobbysim.registry import did_you_mean
from lobbysim.scenario.attributes import LABEL as _LABEL
from lobbysim.scenario.attributes import RATING, AttributeConfig, attributes_problems
from lobbysim.scenario.compound import statement_problems
from lobbysim.scenario.file_limits import FileLimit

#: The rule kinds, and those that need an attribute of a given type.
RULE_KINDS = (
    "match_quality",
    "skill_distance",
    "team_balance",
    "latency",
    "delta_ping",
    "party_parity",
    "equal",
    "distinct",
    "overlap",
    "count",
    "compare",
    "team_sizes",
    "contains",
    "reference_overlap",
    "compound",
    "absolute_sort",
    "distance_sort",
    "mean_distance",
)
NUMBER_KINDS = ("skill_distance", "team_balance", "mean_distance")
STRING_KINDS = ("equal", "distinct", "count")
#: The kinds on every player's own value: a ``string`` attribute's, or a number's (a number
#: attribute, ``rating``, a ``string_number_map``'s key), each value its own class.
EACH_PLAYER_KINDS = ("equal", "distinct")
LIST_KINDS = ("overlap", "contains", "reference_overlap")
SORT_KINDS = ("absolute_sort", "distance_sort")
NO_LIMIT_KINDS = ("equal", "distinct", "compound", *SORT_KINDS)
#: Kinds whose limit is a minimum (the others' is a maximum; see :func:`limit_is_minimum`).
AT_LEAST_KINDS = ("match_quality", "overlap", "count", "contains", "reference_overlap")
TEAM_KINDS = ("team_balance", "party_parity", "team_sizes")
#: ``compare``'s operations, and those of the counting kinds (a minimum or a maximum count).
COMPARE_OPS = ("=", "!=", "<", "<=", ">", ">=", "within", "beyond")
COUNT_OPS = (">=", "<=")
LIST_PARTIES = ("intersection", "union")
DIRECTIONS = ("ascending", "descending")
MAP_KEYS = ("minValue", "maxValue")
WORLD_KINDS = ("latency", "delta_ping")
CLOCKS = ("oldest", "newest", "average", "own")
#: A ticket's number (``average``, ``min``, ``max``), and a list kind's pooling of its
#: members' lists (``LIST_PARTIES``): every ``party`` value.
NUMBER_AGGREGATIONS = ("average", "min", "max")
AGGREGATIONS = (*NUMBER_AGGREGATIONS, "union", "intersection")
TEAM_AGGREGATIONS = ("average", "sum", "min", "max")
ALGORITHMS = ("exact", "seed_greedy", "flexmatch")


def limit_is_minimum(kind: str, op: str | None) -> bool:
    """Return whether a rule's limit is a minimum (else a maximum): ``compare`` by its ``op``
    (``>``/``>=``), a counting kind unless ``op`` is ``<=``, the others by kind."""
    if kind == "compare":
        return op in (">", ">=", "beyond")
    if kind in LIST_KINDS:
        return op != "<="
    return kind in AT_LEAST_KINDS


def list_party(party: str) -> str:
    """Return a list kind's party pooling: ``union`` or ``intersection`` (unset: the field's
    default ``average``, read as ``intersection``, every member's list)."""
    return "union" if party == "union" else "intersection"


@dataclass(frozen=True)
class RuleConfig:
    """One rule of a rule set (see the module docstring for the kinds and clocks).

    Attributes:
        name: the rule's name (telemetry and errors name it).
        kind: what the rule constrains.
        limit: its value before any expansion (a minimum for ``match_quality``, ``overlap`` and
            ``count``, else a maximum; none for ``equal`` and ``distinct``).
        attribute: the player attribute it reads (number kinds: default ``rating``).
        value: ``count``: the attribute's value counted; ``contains``: the value looked for;
            ``compare`` on a string: the value compared with.
        values: ``reference_overlap``: the reference list.
        reference: ``reference_overlap``: instead of ``values``, a ``string_list`` attribute
            whose values common to every player's list are the reference (FlexMatch's
            ``set_intersection(flatten(teams[*].players.attributes[Y]))``).
        center: ``compare`` with ``op`` ``within`` (``beyond``): each ticket's value at most
            (at least) ``limit`` from this number (FlexMatch's distance from a constant).
        op: ``compare``: ``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``within``, ``beyond``;
            ``overlap``,
            ``contains``, ``reference_overlap``: ``>=`` (a minimum count, unset) or ``<=``.
        key: the key of a ``string_number_map`` attribute a number kind reads.
        statement: ``compound``: its statement over earlier rules' names.
        direction: the sort kinds: ``ascending`` or ``descending``.
        map_key: the sort kinds on a ``string_number_map``: ``minValue`` or ``maxValue``.
        party: how a ticket's (party's) members' values combine: ``average``, ``min``, ``max``
            (the list kinds: ``union`` or ``intersection``).
        team: ``team_balance``: how a team's members' values combine: ``average``, ``sum``,
            ``min``, ``max``.
        expansions: ``(wait_minutes, limit)`` steps after the first: from that wait (by the
            rule's clock) on, the limit is the step's.
        clock: whose wait drives the expansions: ``oldest``, ``newest``, ``average``, ``own``.
        optional_after: from this wait (by the clock) on, the rule no longer holds matches
            back (None: never).
        weight: ``seed_greedy``: the weight of the rule's distance in ranking candidates.
        read_from: an imported rule's FlexMatch property and the factor from it to ``limit``
            (:class:`~lobbysim.scenario.file_limits.FileLimit`; None: a rule of lobbysim's
            own language); it changes no match, only how the limit is shown and may be
            overridden, so two rules that differ only in it are equal.
    """

    name: str = ""
    kind: str = ""
    limit: float | None = None
    attribute: str | None = None
    value: str | None = None
    values: tuple[str, ...] = ()
    reference: str | None = None
    center: float | None = None
    op: str | None = None
    key: str | None = None
    statement: str | None = None
    direction: str | None = None
    map_key: str | None = None
    party: str = "average"
    team: str = "average"
    expansions: tuple[tuple[float, float], ...] = field(
        default=(), metadata={"expected": "a list of [wait_minutes, limit] pairs of numbers"}
    )
    clock: str = "oldest"
    optional_after: float | None = None
    weight: float = 1.0
    read_from: FileLimit | None = field(default=None, compare=False)

    @property
    def at_least(self) -> bool:
        """Whether the limit is a minimum (else a maximum)."""
        return limit_is_minimum(self.kind, self.op)

    @property
    def column(self) -> str:
        """The number column a number kind reads: its attribute (default ``rating``), with
        ``[key]`` for a ``string_number_map``."""
        name = self.attribute or RATING
        return f"{name}[{self.key}]" if self.key is not None else name

    def problems(self, where: str, attributes: Mapping[str, AttributeConfig]) -> list[str]:
        """Return what is wrong with the rule (``where``: its field path), given the scenario's
        attributes."""
        out: list[str] = []
        if not _LABEL.fullmatch(self.name or ""):
            out.append(
                f"{where}.name: a name starts with a letter or _, then letters, digits, _, . and "
                f"- (at most 60), got {self.name!r}"
            )
        if self.kind not in RULE_KINDS:
            out.append(
                f"{where}.kind: expected one of {', '.join(RULE_KINDS)}, got {self.kind!r}"
                + did_you_mean(str(self.kind), list(RULE_KINDS))
            )
            return out
        out += self._limit_problems(where)
        out += self._attribute_problems(where, attributes)
        out += self._field_problems(where, attributes)
        lists = self.kind in LIST_KINDS
        parties = (*LIST_PARTIES, "average") if lists else NUMBER_AGGREGATIONS
        if self.party in AGGREGATIONS and self.party not in parties:
            out.append(
                f"{where}.party: {self.party!r} is for "
                + (
                    "numbers; a list kind pools a party's lists by union or intersection"
                    if lists
                    else f"list kinds; a rule of kind {self.kind} combines a party's numbers by "
                    "average, min or max"
                )
            )
        elif self.party not in parties:
            shown = LIST_PARTIES if lists else NUMBER_AGGREGATIONS
            out.append(f"{where}.party: expected one of {', '.join(shown)}, got {self.party!r}")
        if self.team not in TEAM_AGGREGATIONS:
            out.append(
                f"{where}.team: expected one of {', '.join(TEAM_AGGREGATIONS)}, got {self.team!r}"
            )
        if self.clock not in CLOCKS:
            out.append(
                f"{where}.clock: expected one of {', '.join(CLOCKS)}, got {self.clock!r}"
                + did_you_mean(str(self.clock), list(CLOCKS))
            )
        if self.optional_after is not None and not (
            math.isfinite(self.optional_after) and self.optional_after >= 0
        ):
            out.append(
                f"{where}.optional_after: expected minutes >= 0, got {self.optional_after!r}"
            )
        if not (math.isfinite(self.weight) and self.weight >= 0):
            out.append(f"{where}.weight: expected a number >= 0, got {self.weight!r}")
        if self.read_from is not None:
            out += self.read_from.problems(f"{where}.read_from")
        return out

    def in_file(self) -> str | None:
        """Return the limit and expansions in the FlexMatch file's own units (the property's
        value, waits in seconds): ``maxDistance 25, expansions [60 s: 50, 180 s: 100]``; None
        for a rule of lobbysim's own language or one without a limit."""
        if self.read_from is None or self.limit is None:
            return None
        return self.read_from.shown(self.limit, self.expansions)

    def _field_problems(self, where: str, attributes: Mapping[str, AttributeConfig]) -> list[str]:
        """The fields only some kinds have: op, values, key, statement, direction, map_key."""
        kind, out = self.kind, []
        if kind in EACH_PLAYER_KINDS and self.party != "average":
            out.append(
                f"{where}.party: a rule of kind {kind} compares every player's own value (a "
                f"party's members' with the whole match) and combines none; remove party, got "
                f"{self.party!r}"
            )
        ops = COMPARE_OPS if kind == "compare" else COUNT_OPS if kind in LIST_KINDS else ()
        if self.op is not None and self.op not in ops:
            if ops:
                out.append(f"{where}.op: expected one of {', '.join(ops)}, got {self.op!r}")
            else:
                out.append(f"{where}.op: a rule of kind {kind} has no op")
        if kind == "compare" and self.op is None:
            out.append(f"{where}.op: a compare rule needs one of {', '.join(COMPARE_OPS)}")
        distance = kind == "compare" and self.op in ("within", "beyond")
        if distance != (self.center is not None) or (distance and self.value is not None):
            out.append(
                f"{where}.center: a compare rule with op within or beyond needs a number center "
                f"(and no value), and only it has one, got {self.center!r}"
            )
        elif self.center is not None and not math.isfinite(self.center):
            out.append(f"{where}.center: expected a finite number, got {self.center!r}")
        if self.values and kind != "reference_overlap":
            out.append(f"{where}.values: only a reference_overlap rule has a reference list")
        if self.reference is not None and kind != "reference_overlap":
            out.append(f"{where}.reference: only a reference_overlap rule has a reference")
        if kind == "reference_overlap":
            known = attributes.get(self.attribute or "")
            other = attributes.get(self.reference or "")
            if self.reference is not None and (other is None or other.type != "string_list"):
                out.append(
                    f"{where}.reference: expected a string_list attribute of the scenario, got "
                    f"{self.reference!r}"
                    + did_you_mean(
                        self.reference,
                        [n for n, a in attributes.items() if a.type == "string_list"],
                    )
                )
            if bool(self.values) == (self.reference is not None):
                out.append(
                    f"{where}.values: a reference_overlap rule needs a reference list (values) or "
                    "a reference attribute, one of the two"
                )
            elif known is not None and known.type == "string_list":
                missing = [v for v in self.values if v not in known.values]
                if missing:
                    out.append(
                        f"{where}.values: {missing[0]!r} is not one of {self.attribute!r}'s "
                        f"values ({', '.join(known.values)})"
                    )
        if (self.statement is not None) != (kind == "compound"):
            out.append(
                f"{where}.statement: a compound rule needs one, and only a compound rule has one"
            )
        sorting = kind in SORT_KINDS
        if self.direction is not None and not sorting:
            out.append(f"{where}.direction: only a sort rule has a direction")
        if self.direction is not None and self.direction not in DIRECTIONS:
            out.append(
                f"{where}.direction: expected one of {', '.join(DIRECTIONS)}, got "
                f"{self.direction!r}"
            )
        if self.map_key is not None and (not sorting or self.map_key not in MAP_KEYS):
            out.append(
                f"{where}.map_key: a sort rule on a string_number_map takes one of "
                f"{', '.join(MAP_KEYS)}, got {self.map_key!r}"
            )
        return out

    def _limit_problems(self, where: str) -> list[str]:
        if self.kind in NO_LIMIT_KINDS or (self.kind == "compare" and self.value is not None):
            if self.limit is not None or self.expansions:
                return [f"{where}: a rule of kind {self.kind} has no limit nor expansions"]
            return []
        if self.limit is None:
            return [f"{where}.limit: a rule of kind {self.kind} needs a limit"]
        values = [self.limit, *(v for _, v in self.expansions)]
        shown = [list(step) for step in self.expansions]
        if not all(
            math.isfinite(v) or v == (-math.inf if self.at_least else math.inf) for v in values
        ):
            return [f"{where}: expected finite limits, got {values}"]
        waits = [w for w, _ in self.expansions]
        if not all(math.isfinite(w) and w > 0 for w in waits):
            return [f"{where}.expansions: a step's wait is minutes > 0, got {shown}"]
        if any(b <= a for a, b in itertools.pairwise(waits)):
            return [f"{where}.expansions: the waits must increase from step to step, got {shown}"]
        if self.kind == "match_quality" and not all(0.0 <= v <= 1.0 for v in values):
            return [f"{where}: a match quality is in [0, 1], got {values}"]
        if self.kind == "compare" and self.op in ("=", "!=") and self.expansions:
            return [
                f"{where}.expansions: a compare rule with {self.op} has no direction to relax "
                "(only <, <=, >, >= take expansions)"
            ]
        if self.kind == "team_sizes" and self.expansions:
            return [f"{where}.expansions: a team_sizes rule always holds; it has no expansions"]
        if self.kind in ("contains", "reference_overlap") and not all(
            float(v).is_integer() for v in values if math.isfinite(v)
        ):
            return [f"{where}: a count is a whole number, got {values}"]
        distance = self.kind == "compare" and self.op in ("within", "beyond")
        if (self.kind not in ("match_quality", "compare") or distance) and any(
            v < 0 for v in values
        ):
            return [f"{where}: a limit of kind {self.kind} is >= 0, got {values}"]
        relaxes = (lambda a, b: b <= a) if self.at_least else (lambda a, b: b >= a)
        if not all(relaxes(a, b) for a, b in itertools.pairwise(values)):
            return [
                f"{where}.expansions: a limit relaxes as players wait (it may not tighten), "
                f"got {values}"
            ]
        return []

    def _attribute_problems(
        self, where: str, attributes: Mapping[str, AttributeConfig]
    ) -> list[str]:
        kind, name = self.kind, self.attribute
        number = kind in NUMBER_KINDS or kind in SORT_KINDS
        if kind == "compare":  # a number (default: rating) or, with a value, a string
            number = self.value is None
        if kind in EACH_PLAYER_KINDS:  # a string, or a number named explicitly
            declared = attributes.get(name or "")
            number = name == RATING or (
                declared is not None and declared.type in ("number", "string_number_map")
            )
            if name is None or (declared is not None and declared.type == "string_list"):
                what = "needs" if name is None else "reads"
                got = "" if name is None else f"; {name!r} is a string_list"
                return [
                    f"{where}.attribute: a rule of kind {kind} {what} a string or number "
                    f"attribute (or a string_number_map's key){got}"
                ]
        wanted = (
            "number"
            if number
            else "string"
            if kind in STRING_KINDS or kind == "compare"
            else "string_list"
            if kind in LIST_KINDS
            else None
        )
        if wanted is None:
            if name is not None:
                return [f"{where}.attribute: a rule of kind {kind} reads no attribute"]
            return []
        if self.key is not None and wanted != "number":
            return [f"{where}.key: a rule of kind {kind} reads no string_number_map"]
        if self.map_key is not None and (name is None or name not in attributes):
            return [f"{where}.map_key: only for a string_number_map attribute"]
        if name is None or (name == RATING and wanted == "number"):
            if name is None and wanted != "number":
                return [f"{where}.attribute: a rule of kind {kind} needs a {wanted} attribute"]
            return [f"{where}.key: {RATING!r} is a number, not a map"] if self.key else []
        if name not in attributes:
            known = [RATING, *attributes] if wanted == "number" else list(attributes)
            return [
                f"{where}.attribute: {name!r} is not an attribute of the scenario's attributes: "
                f"section" + did_you_mean(name, known)
            ]
        found = attributes[name]
        if found.type == "string_number_map" and wanted == "number":
            return self._map_key_problems(where, found)
        if found.type != wanted:
            return [
                f"{where}.attribute: a rule of kind {kind} reads a {wanted} attribute; "
                f"{name!r} is a {found.type}"
            ]
        if self.key is not None or self.map_key is not None:
            field_name = "key" if self.key is not None else "map_key"
            return [f"{where}.{field_name}: {name!r} is a {found.type}, not a string_number_map"]
        if (
            wanted != "number"
            and kind in ("count", "contains", "compare")
            and (self.value is None or self.value not in found.values)
        ):
            return [
                f"{where}.value: expected one of {name!r}'s values "
                f"({', '.join(found.values)}), got {self.value!r}"
            ]
        return []

    def _map_key_problems(self, where: str, found: AttributeConfig) -> list[str]:
        """A number kind reading a ``string_number_map``: one of its keys (``key``), or, for
        a sort rule, ``map_key``."""
        name = self.attribute
        if self.kind in SORT_KINDS:
            if self.map_key is None:
                return [
                    f"{where}.map_key: a sort on the string_number_map {name!r} needs one of "
                    f"{', '.join(MAP_KEYS)}"
                ]
            return []
        if self.key is None or self.key not in found.values:
            return [
                f"{where}.key: {name!r} is a string_number_map; expected one of its keys "
                f"({', '.join(found.values)}), got {self.key!r}"
            ]
        return []


def rules_problems(
    rules: tuple[RuleConfig, ...],
    attributes: Mapping[str, AttributeConfig],
    mode: str,
    world: bool,
) -> list[str]:
    """Return what is wrong with a scenario's rule set (``matchmaker.rules``): each rule's own
    problems, names used twice, kinds the game mode or a missing world rule out."""
    out: list[str] = []
    names = [r.name for r in rules]
    for i, rule in enumerate(rules):
        where = f"matchmaker.rules[{i}]"
        out += rule.problems(where, attributes)
        if rule.name and names.count(rule.name) > 1 and names.index(rule.name) == i:
            out.append(f"{where}.name: each rule's name once, got {rule.name!r} twice")
        if rule.kind == "team_sizes" and mode not in ("team", "1v1"):
            out.append(f"{where}.kind: a team_sizes rule needs two teams; game.mode is {mode}")
        elif (
            rule.kind in TEAM_KINDS
            and rule.kind != "team_sizes"
            and mode != "team"
            and not (rule.kind == "team_balance" and rule.team == "average" and mode == "ffa")
        ):
            out.append(f"{where}.kind: a {rule.kind} rule needs team games; game.mode is {mode}")
        if rule.kind == "compound" and rule.statement is not None:
            earlier = {r.name: r.kind for r in rules[:i]}
            out += statement_problems(where, rule.statement, earlier, SORT_KINDS)
        if rule.kind in WORLD_KINDS and not world:
            out.append(
                f"{where}.kind: a {rule.kind} rule needs a world: section (data centres, regions "
                "and latencies)"
            )
    return out


def rule_set_problems(
    rules: tuple[RuleConfig, ...] | None,
    attributes: Mapping[str, AttributeConfig] | None,
    algorithm: str,
    mode: str,
    world: bool,
) -> list[str]:
    """Return every problem of a scenario's rule set, its attributes and its algorithm."""
    problems: list[str] = []
    attrs = attributes or {}
    problems += attributes_problems(attrs)
    if rules is not None:
        problems += rules_problems(rules, attrs, mode, world)
    if algorithm not in ALGORITHMS:
        problems.append(
            f"matchmaker.algorithm: expected one of {', '.join(ALGORITHMS)}, got {algorithm!r}"
            + did_you_mean(str(algorithm), list(ALGORITHMS))
        )
    return problems
