"""The memory a run of a scenario needs, estimated from its counts before anything is allocated.

A scenario's counts (``base.size``, ``base.newcomers_per_day`` over the horizon, an arrival
model's rate over the horizon or a cohort's size, the replications whose records a command
keeps) set how many players and records a run holds. :func:`memory_problems` estimates the bytes
from those counts and compares them with :func:`lobbysim.validation.memory_budget` (the
machine's physical memory, or a lower ``ulimit -v`` or container limit), so that
``base.size: 1000000000`` is one line naming the field and the estimate, not a ``MemoryError``
minutes into the run.

**The estimate.** Per unit, measured on CPython 3.11 (the peak resident memory of runs of
different sizes, differenced):

* :data:`BYTES_PER_PLAYER`, 1,000 bytes: a player the lobby knows (a member of a base, or an
  arrival of the one-visit lobby): its ``Player`` object (slots), a row in every rater's table,
  the population's draws, a pending visit on the heap, and its rows in the ``players`` and final
  ``ratings`` records (1.1 kB per member measured with 100,000 and 400,000 members);
* :data:`BYTES_PER_SEAT`, 800 bytes: a player's game with the records in memory (a
  ``participants`` row, its share of the ``games`` row, a ``waits`` row, held as Python rows
  during the run and as frames at its end; 820 bytes per seat measured);
* :data:`FRAME_BYTES_PER_PLAYER` and :data:`FRAME_BYTES_PER_SEAT`, 150 and 180 bytes: what the
  record frames of a finished run keep per player and per seat (``DataFrame.memory_usage``), for
  the replications whose frames ``run`` and ``compare`` hold until their folder is written.

The counts: members are ``base.size`` plus ``newcomers_per_day`` times the horizon in days (a
member is kept for the whole run); arrivals are the count the arrival model declares
(:func:`~lobbysim.players.arrivals.expected_arrivals`, never its class: ``poisson``: ``rate``
times the horizon; ``time_of_day``: the mean hourly rate times the horizon; ``bursts``:
``rate * mean_size`` times the horizon; ``cohort``: ``size``; a ``trace`` is bounded by its
file's size and declares none; a user model is counted as it declares, when the caller lets
user classes be imported, ``import_plugins``). With ``records.stream: false`` every arrival and
its games stay in memory; with streamed records a departed player is written out and
forgotten, so only the players of one window of arrivals (sampled together,
:data:`ARRIVAL_WINDOW` minutes) count. A visit plays :data:`PLAYED_SHARE` of
``population.session_games_mean`` games (at least 1; 1 when sessions are unlimited), and a
base's visits are counted where the visit model declares a member's mean visits a day
(:func:`~lobbysim.players.visits.mean_visits_per_day`; ``daily``: ``per_day``). The estimate
leaves out Python itself (about 150 MB), the worker processes beyond one and what a retention
model or a policy keeps per member, so it errs low: a run it refuses
would not fit, a run it accepts may still not. Measured, ``live_game`` needs about 1.3 times the
estimate (87 MB of records in the run against 65 MB, 12.6 MB of frames kept per run against
14.5 MB), ``engagement_pools`` (40,000 members and a retention model) some 3 times in its
workers.
"""

from __future__ import annotations

from dataclasses import dataclass

from lobbysim.players.arrivals import ARRIVALS, expected_arrivals
from lobbysim.players.population import Population
from lobbysim.players.visits import VISITS, mean_visits_per_day
from lobbysim.scenario.model import Scenario
from lobbysim.scenario.plugin_spec import PluginSpec
from lobbysim.validation import format_bytes, memory_budget

BYTES_PER_PLAYER = 1_000
BYTES_PER_SEAT = 800
FRAME_BYTES_PER_PLAYER = 150
FRAME_BYTES_PER_SEAT = 180
#: The games a visit plays, as a share of ``population.session_games_mean``: some players give up
#: waiting, some visits' minutes run out (0.73 measured in ``live_game``, 0.95 in a busy lobby
#: of one-visit players).
PLAYED_SHARE = 0.7
#: Minutes of arrivals the lobby samples (and registers) at once (``lobbysim.sim.sessions``).
ARRIVAL_WINDOW = 60.0
MINUTES_PER_DAY = 1440.0


@dataclass(frozen=True)
class Need:
    """One term of the estimate: the field it comes from, what it counts, its bytes."""

    field: str
    what: str
    bytes: float
    hint: str = ""


def _built(registry: object, spec: PluginSpec, import_plugins: bool) -> object | None:
    """Return the plug-in built from ``spec``, or None (a user class without
    ``import_plugins``, never imported then; or parameters the plug-in refuses, which the
    scenario's checks report)."""
    if ":" in spec.name and not import_plugins:
        return None
    try:
        return registry.create(spec.name, spec.params)  # type: ignore[attr-defined]
    except Exception:  # reported by the plug-in checks, not here
        return None


def _arrival_rates(
    spec: PluginSpec, horizon: float, import_plugins: bool
) -> tuple[str, float, float, float]:
    """Return ``(field, mean players a minute, peak players a minute, players at once)`` of an
    arrival model, as it declares them (:func:`~lobbysim.players.arrivals.expected_arrivals`;
    zeros where it declares nothing)."""
    model = _built(ARRIVALS, spec, import_plugins)
    declared = None if model is None else expected_arrivals(model, horizon, spec.name)
    if declared is None:
        return "arrivals", 0.0, 0.0, 0.0
    field = f"arrivals.{declared.parameter}" if declared.parameter else "arrivals"
    peak = declared.peak_per_minute
    assert peak is not None  # set by ExpectedArrivals
    return field, declared.per_minute, peak, declared.at_once


def _games_per_visit(scenario: Scenario) -> float:
    try:
        mean = Population.from_params(scenario.population).session_games_mean
    except Exception:  # reported by the population's own checks
        return 1.0
    return 1.0 if mean is None else max(1.0, PLAYED_SHARE * float(mean))


def _count(value: float) -> str:
    """Return a count for humans: ``1,000,000,000``, ``27,777,778``, ``2.5``."""
    return f"{value:,.0f}" if value >= 1000 or value == round(value) else f"{value:.3g}"


def run_needs(
    scenario: Scenario, held_runs: int = 1, *, import_plugins: bool = False
) -> list[Need]:
    """Return the terms of the memory estimate of running ``scenario`` (module docstring).

    Args:
        scenario: the scenario.
        held_runs: the runs whose record frames the command keeps until it ends (``run`` and
            ``compare``: the first replication of each policy, whose records the run folder
            writes; a sweep keeps none).
        import_plugins: whether to import and build the user classes the scenario names, to
            read what they declare (without it, as ``lobbysim validate`` runs, a user arrival
            or visit model is not counted).

    Raises:
        PluginError: a plug-in's declaration (``expected_arrivals``, ``mean_visits_per_day``)
            raised or returned something else than it should.
    """
    horizon = scenario.horizon
    days = horizon / MINUTES_PER_DAY
    in_memory = not scenario.records.stream
    games = _games_per_visit(scenario)
    kept = held_runs if in_memory else 0  # the runs whose record frames stay in memory
    member = BYTES_PER_PLAYER + kept * FRAME_BYTES_PER_PLAYER
    per_seat = BYTES_PER_SEAT + kept * FRAME_BYTES_PER_SEAT
    runs = f" (and kept for {held_runs:,} runs)" if kept > 1 else ""
    hint = "stream the records (records: {stream: true})" + (
        " or run fewer replications" if kept > 1 else ""
    )
    needs: list[Need] = []
    base = scenario.base
    if base is not None:
        members = float(base.size)
        joined = base.newcomers_per_day * days
        needs.append(Need("base.size", f"{_count(members)} members", members * member))
        if joined:
            needs.append(
                Need(
                    "base.newcomers_per_day",
                    f"{_count(base.newcomers_per_day)} newcomers a day over {days:.3g} days "
                    f"({_count(joined)} members)",
                    joined * member,
                )
            )
        visits = _built(VISITS, base.visits, import_plugins)
        per_day = None
        if in_memory and visits is not None:
            per_day = mean_visits_per_day(visits, base.visits.name)
        if per_day is not None:
            count = (members + joined / 2) * per_day * days
            needs.append(
                Need(
                    "records.stream",
                    f"the records of some {_count(count)} visits kept in memory{runs}",
                    count * games * per_seat,
                    hint,
                )
            )
    field, mean_rate, peak_rate, at_once = _arrival_rates(
        scenario.arrivals, horizon, import_plugins
    )
    window = min(ARRIVAL_WINDOW, horizon)
    if in_memory and mean_rate:
        arrivals = mean_rate * horizon + at_once
        needs.append(
            Need(
                field,
                f"{_count(mean_rate)} players a minute over {horizon:g} minutes "
                f"({_count(arrivals)} players) with their records kept in memory{runs}",
                arrivals * (member + games * per_seat),
                hint,
            )
        )
    elif at_once >= peak_rate * window and at_once:
        needs.append(
            Need(field, f"{_count(at_once)} players", at_once * (member + games * per_seat))
        )
    elif peak_rate:
        needs.append(
            Need(
                field,
                f"{_count(peak_rate)} players a minute ({_count(peak_rate * window)} players in "
                f"one window of {window:g} minutes, sampled together)",
                peak_rate * window * BYTES_PER_PLAYER,
            )
        )
    return needs


def memory_problems(
    scenario: Scenario, held_runs: int = 1, *, import_plugins: bool = False
) -> list[str]:
    """Return one line if running ``scenario`` needs more memory than the budget, else none.

    The line names the field of the largest term of :func:`run_needs` (``import_plugins`` as
    there), what it counts, the estimate of that term (and of the whole run, if more) and the
    limit with where it comes from.
    """
    needs = run_needs(scenario, held_runs, import_plugins=import_plugins)
    total = sum(need.bytes for need in needs)
    budget, where = memory_budget()
    if not needs or not total > budget:
        return []
    # the first field that alone is too much (a base's size before its visits' records), else
    # the largest
    top = next((need for need in needs if need.bytes > budget), max(needs, key=lambda n: n.bytes))
    in_all = f" ({format_bytes(total)} for the whole run)" if total > 1.05 * top.bytes else ""
    return [
        f"{top.field}: {top.what} would need about {format_bytes(top.bytes)} of memory"
        f"{in_all}, more than the limit of {format_bytes(budget)}, {where}"
        + (f"; {top.hint}" if top.hint else "")
    ]
