"""Amazon GameLift FlexMatch rule sets (rule language 1.0) in and out of a scenario's rule set.

:func:`read_flexmatch` reads a FlexMatch rule set (a JSON file or its parsed data) and a mapping
that binds its player attributes to the simulation, and translates it into lobbysim's scenario
data: a ``matchmaker.rules`` list, the ``attributes`` the rules read and the ``game`` section
the teams describe (:meth:`FlexMatchImport.fragment`). A scenario names a rule set with
``matchmaker.rules: {flexmatch: FILE, attributes: {NAME: BINDING, ...}}`` (FILE relative to the
scenario file's folder; :func:`expand_scenario_data` does the translation before the scenario is
built). :func:`export_flexmatch` is the inverse: a scenario's rule set as a FlexMatch rule set,
which reads back into the same rules (it checks so before it returns).

Anything lobbysim cannot read exactly is an error naming its JSON path, prefixed with the file
(``rules.json: rules[2].type: 'xyz' is not a FlexMatch rule type``), never silently ignored; the
labels FlexMatch itself ignores in matching (the rule set's, the teams' and the rules' ``name``
and ``description``, a player attribute's ``default``) are read and not used.

**Mapping FlexMatch -> lobbysim** (``X`` a player attribute; ``d`` a number):

======================================================  ==========================================
FlexMatch                                               lobbysim
======================================================  ==========================================
``teams``: two teams of one player                      ``game.mode: 1v1``
two teams of ``n`` (or one team, ``quantity: 2``)       ``game.mode: team``, ``team_size: n``
one team of ``n >= 2``, or ``n >= 3`` teams of one      ``game.mode: ffa``, ``ffa_size: n``
any other teams: ``minPlayers`` < ``maxPlayers``,       ``game.teams``: each ``name``,
uneven teams, more than two, ``quantity``               ``min_players``, ``max_players``,
                                                        ``quantity`` (one team: mode ``ffa``;
                                                        else ``team``)
an expansion of ``teams[T].minPlayers``                 ``game.teams[T].expansions`` (minutes,
                                                        minimums; ``clock`` the rule set's)
``playerAttributes`` ``number``/``string``/             ``attributes.X`` of that ``type``, drawn
``string_list``                                         or bound by the mapping (below)
``batchDistance`` on a number ``X``, ``maxDistance d``  ``skill_distance`` on X, ``limit d``,
                                                        ``party`` = ``partyAggregation``
                                                        (``avg`` -> ``average``, ``min``, ``max``)
``batchDistance`` on a string ``X``                     ``equal`` on X
``distance``: measurements                              ``team_balance`` on X, ``team: average``,
``avg(teams[*].players.attributes[X])``, reference      ``limit 2d`` (both teams' averages within
``avg(flatten(teams[*].players.attributes[X]))``,       d of the overall average <=> the two
``maxDistance d`` (two teams)                           averages differ by at most 2d, teams being
                                                        of one size; the export halves it)
the same, two teams of one player (1v1)                 ``skill_distance`` on X, ``limit 2d``
                                                        (each within d of the pair's mean <=>
                                                        ``|a - b| <= 2d``; expansions doubled too)
``distance`` of ``flatten(...[X])`` against             ``mean_distance`` on X, ``limit d``,
``avg(flatten(...[X]))`` (or, one team ``T``,           ``party`` = ``partyAggregation``
``teams[T]...[X]`` against ``avg(teams[T]...[X])``)
``distance``: ``max(flatten(...[X]))`` against          ``skill_distance`` on X, ``limit d``,
``min(flatten(...[X]))``, ``maxDistance d``             ``party`` = ``partyAggregation``
``comparison`` ``=`` / ``!=`` on                        ``equal`` / ``distinct`` on X
``flatten(teams[*].players.attributes[X])``, a
string, no ``referenceValue``
the same, ``=`` on a number                             ``skill_distance`` on X, ``limit 0``,
                                                        ``party`` = ``partyAggregation`` (no
                                                        expansion relaxes it)
the same, ``!=`` on a number (or ``attributes[X][K]``)  ``distinct`` on X (``key K``): every
                                                        player's own value, a party's members'
                                                        too (``partyAggregation`` only ``avg``,
                                                        the default); nothing relaxes it
``comparison`` on ``flatten(...[X])`` with a constant    ``compare`` on X, ``op``, ``limit c``
``referenceValue c``, ``operation`` any, a number        (each ticket's value by ``party``);
(or ``attributes[X][K]``, a string_number_map's key)    ``key K``; expansions of
                                                        ``referenceValue`` relax ``c`` (not
                                                        with ``=``/``!=``)
the same, a string ``X``, ``=`` / ``!=`` a string       ``compare``, ``op``, ``value s`` (every
``s``                                                   player's value)
``count(teams[a].players) = count(teams[b].players)``   ``team_sizes``, ``limit 0`` (two teams
(``EqualTeamSizes``)                                    of one size: it always holds); written
                                                        back on the teams ``red`` and ``blue``
``distance`` ``max(count(teams[*].players))`` against   ``team_sizes``, ``limit d``
``min(count(teams[*].players))``, ``maxDistance d``
``distance`` of ``flatten(...[X])`` from a constant     ``compare`` on X, ``op: within``
``referenceValue c``, ``maxDistance d`` /               (``beyond``), ``center c``, ``limit d``
``minDistance m``                                       (``m``); both: a second rule
                                                        ``NAME.min``
``collection`` on ``flatten(...[X])``, a string_list:   ``overlap`` / ``contains`` (``value
``intersection`` / ``contains`` (``referenceValue``     s``) / ``reference_overlap``
``s``) / ``reference_intersection_count`` (a list, or   (``values``, or ``reference Y``), on
``set_intersection(flatten(...[Y]))``)                  X
``minCount n`` / ``maxCount m``                         ``limit n`` / ``limit m``, ``op: <=``
                                                        (both: a second rule ``NAME.max``)
``partyAggregation`` ``union`` (default) /              ``party: union`` / left out (lobbysim's
``intersection``                                        default, every member's list)
``compound`` ``statement``                              ``compound``, the statement written
                                                        ``and(A, B)``; its rules hold only
                                                        through it (a rule read as two, both)
``absoluteSort`` / ``distanceSort``:                    ``absolute_sort`` / ``distance_sort``:
``sortDirection``, ``sortAttribute``, ``mapKey``,       ``direction``, ``attribute``,
``partyAggregation``                                    ``map_key``, ``party`` (constrain
                                                        nothing; exact and seed_greedy ignore
                                                        them)
``string_number_map`` attribute                         ``attributes.X``, ``type:
                                                        string_number_map``, bound ``{values:
                                                        {KEY: mean}, sd}``
``latency`` ``maxLatency d``                            ``latency``, ``limit d`` ms, ``party`` =
                                                        ``partyAggregation`` (default ``avg``)
``expansions``: ``target rules[NAME].P``, steps         that rule's ``expansions``:
``waitTimeSeconds s``, ``value v``                      ``[s / 60 minutes, v]`` (``2v`` for
                                                        team_balance); ``P`` the property the
                                                        limit comes from (``maxDistance``,
                                                        ``maxLatency``, ``minCount``)
``algorithm.expansionAgeSelection`` ``newest``          every rule's ``clock: newest`` (``oldest``)
(FlexMatch's default) / ``oldest``
``algorithm.strategy`` ``exhaustiveSearch``             ``matchmaker.algorithm: flexmatch``,
(``balanced``: a match of 41-200 players)               FlexMatch's builder (unless the
                                                        scenario sets its own)
``algorithm.batchingPreference`` ``fastestRegion``      ``matchmaker.batching: fastest_region``
                                                        (with ``algorithm: flexmatch``)
``largestPopulation`` (``balanced``'s default)          ``matchmaker.batching:
                                                        largest_population``, ``batch_sort:
                                                        [balancedAttribute]``
``sorted`` with ``sortByAttributes``                    ``matchmaker.batching: sorted``,
                                                        ``batch_sort: [...]``
======================================================  ==========================================

An imported rule set runs FlexMatch's builder (:mod:`lobbysim.sim.flexmatch_builder`: the
oldest ticket of a batch anchors a match, its batch-mates join oldest first, or in the order of
the sort rules, while every rule holds); a scenario may choose lobbysim's ``exact`` search or
``seed_greedy`` instead (docs/model.md, section 10, compares them). FlexMatch's batching
(``batchingPreference``) decides which tickets are tried together, not which matches are
allowed: ``fastestRegion`` batches by each ticket's lowest-latency data centre (it needs the
scenario's world); otherwise every ticket is in one batch, since FlexMatch forms more only past
a batch size it does not publish. ``matchmaker.batch_size`` states one: the pool is then cut
into batches of that many tickets after FlexMatch's pre-batch sort, ``largestPopulation`` (the
``balanced`` strategy's default) on ``balancedAttribute`` and ``sorted`` on
``sortByAttributes`` (``matchmaker.batch_sort``; bind the attributes to sort on them), or dealt
at random for ``random``. The size is lobbysim's assumption, never written to an exported file.
``balanced`` spreads players over teams to even out ``balancedAttribute``: with one team (a
free-for-all) it has nothing to spread; with two, lobbysim's split of every team game evens out
the teams' driving-rater means, the same when the attribute is bound to the rating. A FlexMatch
rule set of more than 40 players is a large match: strategy ``balanced`` and only
``batchDistance`` and ``latency`` rules, as FlexMatch requires.

**The mapping** (``matchmaker.rules.attributes``, or ``mapping`` here) binds every attribute a
rule reads: a number ``{source: rating|skill, scale, offset}`` (the value is ``offset + scale *
x``, x the driving rater's mean or true skill) or ``{source: drawn, mean, sd}``; a string or
string_list ``{values: {VALUE: share, ...}}``, a string_number_map ``{values: {KEY: mean, ...},
sd}`` (FlexMatch has no distributions). Limits stay in
the FlexMatch attribute's units, so nothing is rescaled. An attribute named ``rating`` is
lobbysim's built-in (the driving rater's mean, unscaled): bind it ``{source: rating}``. A
latency rule reads the players' latencies to the data centres of the scenario's ``world``.
FlexMatch's defaults are not used: every simulated player has every attribute.

**Unsupported** (each an error naming its path): a team's ``minPlayers`` above its ``maxPlayers``;
``distance`` rules of other forms (``minDistance`` between team averages or players, a figure of the
whole match from a constant, each player from a team's average, team averages over teams of one
player; team averages with one team always hold and read, noted); a ``comparison`` whose
``referenceValue`` is computed from the match (each player against the others' maximum: no lobbysim
rule compares a player with a figure of the others), one that bounds a figure of the whole match
(``avg(...)``) by a constant, one on a named team (``teams[red]``: lobbysim's teams are
interchangeable, split by the search), ``!=`` between players on a number with a
``partyAggregation`` of ``min`` or ``max``, comparisons of team sizes other than the idiom; a
collection's reference of players' ids (a block list); a ``compound`` naming a ``batchDistance`` or
sort rule, or a rule listed after it (as FlexMatch requires); ``latency``'s ``maxDistance`` and
``distanceReference`` (they bound a ticket's latency above the match's lowest or average one, where
lobbysim's ``delta_ping`` bounds it above the player's own best data centre); expansions of a team's
``maxPlayers`` or of a property no limit comes from (a compound, a sort, ``=``/``!=``);
a ``backfillPriority`` other than ``normal``.

The export refuses, naming ``matchmaker.rules[i]``, what FlexMatch cannot say: the kinds
``match_quality``, ``party_parity``, ``count`` and ``delta_ping``, ``equal`` on a number
(FlexMatch's ``=`` on a number reads as ``skill_distance`` of limit 0), ``team_balance`` on a team
sum, minimum or maximum, the clocks ``average`` and ``own``, two clocks in one rule set,
``optional_after``, weights other than 1, infinite limits.

**The modules**: the work is split by role into :mod:`lobbysim.flexmatch.rules` (the tables and
limits the import and the export share, the reading of one rule, the distance, batchDistance and
latency types), :mod:`lobbysim.flexmatch.rule_types` (the comparison, collection, compound and
sort types), :mod:`lobbysim.flexmatch.read` (the JSON file, the
rule set's sections and the mapping: :func:`read_flexmatch`),
:mod:`lobbysim.flexmatch.expand` (a scenario's reference to a rule set) and
:mod:`lobbysim.flexmatch.export` (:func:`export_flexmatch`).
"""

from lobbysim.flexmatch.export import export_flexmatch
from lobbysim.flexmatch.read import FlexMatchImport, read_flexmatch

__all__ = ["FlexMatchImport", "export_flexmatch", "read_flexmatch"]
