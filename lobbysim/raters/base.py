"""The rater protocol, the :data:`RATERS` registry, and the machinery both raters share.

:class:`Rater` is the one protocol the simulator calls; :data:`RATERS` maps names to rater
classes; :class:`EvenMatchQuality` derives a rater's match quality from its win probability. The
rest is shared by :mod:`lobbysim.raters.bayesian` and :mod:`lobbysim.raters.sph_elo`: the
per-player table with its undo journal (an update is all or nothing), the checks of prior arrays
and of a game's seats, the split of a batch into *waves* of games with no rated player in common,
and the exact comparison of scores per hour. The helpers keep their leading underscore:
they are internal to the :mod:`lobbysim.raters` package.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from lobbysim.records.rows import GameResult, Seat
from lobbysim.registry import PluginRef, Registry
from lobbysim.skill import gaussian

FloatArray = NDArray[np.float64]
IdArray = NDArray[np.int64]


@runtime_checkable
class Rater(Protocol):
    """Per-player skill estimates, updated from finished games, and the win model they imply.

    Class attributes: ``name`` (the registry key), ``has_variance`` (the rater keeps belief
    variances, as DrawChance and the knowledge gradient need) and ``skill_scale`` (ratings live on
    the true-skill scale, so their error against true skill is meaningful).

    The matchmaker asks the driving rater how good a match would be (:meth:`quality`) and hands
    its :attr:`beta2` to the policies: the engine never reads a rater's parameters. Every member
    here is required (the registry refuses a class lacking one, naming what it lacks); a rater
    whose quality is ``1 - |2 P - 1|`` of its own win probability ``P`` can inherit
    :meth:`quality` from :class:`EvenMatchQuality`.
    """

    name: ClassVar[str]
    has_variance: ClassVar[bool]
    skill_scale: ClassVar[bool]

    @property
    def beta2(self) -> float:
        """The variance of one player's performance about their rating in the rater's model.

        sigma_eps^2 on the rating scale: the ``beta2`` that policies use with the belief
        variances. The registry looks for it on the class: a class attribute, a property, or a
        dataclass field with a default.
        """
        ...

    def add_players(self, ids: IdArray, mu0: FloatArray, var0: FloatArray) -> None:
        """Start tracking new players with the population model's prior beliefs."""
        ...

    def means(self, ids: IdArray) -> FloatArray:
        """Return the current rating (belief mean) of each player."""
        ...

    def variances(self, ids: IdArray) -> FloatArray | None:
        """Return the belief variance of each player, or ``None`` if the rater keeps none."""
        ...

    def update(self, games: Sequence[GameResult]) -> None:
        """Apply finished games, in the given order (as if one at a time: the lobby may hand a
        batch over at once, e.g. to a shadow rater). The lobby hands 1v1 games over as a
        :class:`~lobbysim.records.rows.DuelBatch`, a sequence of games whose columns a rater may
        read instead."""
        ...

    def win_probability(self, ids_a: IdArray, ids_b: IdArray) -> FloatArray:
        """Return P(``ids_a[k]`` beats ``ids_b[k]``) under the current ratings, in [0, 1]."""
        ...

    def quality(self, ids_a: IdArray, ids_b: IdArray) -> FloatArray:
        """Return the match quality of each pair (``ids_a[k]``, ``ids_b[k]``), in [0, 1].

        1 for the most even match the rater can predict, towards 0 for a foregone one.
        """
        ...


RATERS: Registry[Rater] = Registry(
    "rater",
    required=(
        "has_variance",
        "skill_scale",
        "beta2",
        "add_players",
        "means",
        "variances",
        "update",
        "win_probability",
        "quality",
    ),
)


def rater_plugin(index: int, name: str) -> PluginRef:
    """Return a run's rater as errors name it: ``index`` 0 is the driving rater
    (``raters.driver``), 1 on the shadows (``raters.shadows[index - 1]``); ``name`` as the
    scenario gives it. The engine's calls into a rater go through it (or its ``failure``), so
    that a rater whose verb raises or calls ``sys.exit`` stops the run with one line."""
    field = "raters.driver" if index == 0 else f"raters.shadows[{index - 1}]"
    return PluginRef(field, RATERS.family, name)


class EvenMatchQuality:
    """Mixin: match quality ``1 - |2 P - 1|`` from the rater's own :meth:`win_probability`.

    1 for an even match (P = 1/2), 0 for a certain one. The SPH Elo uses it; a user rater with a
    win probability but no quality of its own may inherit it too.
    """

    def win_probability(self, ids_a: IdArray, ids_b: IdArray) -> FloatArray:
        """Return P(a beats b) per pair: the rater's own."""
        raise NotImplementedError  # pragma: no cover - provided by the rater

    def quality(self, ids_a: IdArray, ids_b: IdArray) -> FloatArray:
        """Return ``1 - |2 P - 1|`` per pair, P the rater's :meth:`win_probability`."""
        return 1.0 - np.abs(2.0 * self.win_probability(ids_a, ids_b) - 1.0)


class GaussianBeliefs:
    """Mixin: Gaussian beliefs ``N(mu, sigma^2)`` per player in a two-column :class:`PlayerTable`.

    The class sets ``self._table = PlayerTable(name, 2)`` (columns: means, variances) and a
    ``beta2``, and gets :meth:`add_players`, :meth:`means`, :meth:`variances` and the Gaussian
    :meth:`win_probability` and :meth:`quality` (:mod:`lobbysim.skill.gaussian`); the Bayesian
    rater and the openskill adapter share them.
    """

    name: ClassVar[str]
    beta2: float
    _table: PlayerTable
    #: The capabilities of :class:`FloatBeliefs`: a subclass that overrides the methods behind
    #: one (means; variances or quality) loses it unless it declares it again.
    float_means: ClassVar[bool] = True
    float_beliefs: ClassVar[bool] = True
    #: The Gaussian replay family (:func:`replay_family`).
    replay_family: ClassVar[str] = "gaussian"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = vars(cls)
        if "float_means" not in own and any(
            name in own for name in ("means", "mean_list", "_beliefs")
        ):
            cls.float_means = False
        if "float_beliefs" not in own and any(
            name in own
            for name in ("means", "variances", "quality", "_beliefs", "belief_lists", "belief_pair")
        ):
            cls.float_beliefs = False

    def add_players(self, ids: IdArray, mu0: FloatArray, var0: FloatArray) -> None:
        """Start new players at their prior beliefs ``N(mu0, var0)`` (``var0 > 0``)."""
        size = np.asarray(ids).size
        mu = float_array("mu0", mu0, size, self.name)
        var = float_array("var0", var0, size, self.name)
        if (var <= 0).any():
            raise ValueError(f"rater '{self.name}': var0 must be > 0, got {var[var <= 0][0]}")
        self._table.add(ids, [mu, var])

    def means(self, ids: IdArray) -> FloatArray:
        """Return the belief means of ``ids``."""
        return self._table.columns[0][self._table.index(ids)]

    def variances(self, ids: IdArray) -> FloatArray:
        """Return the belief variances of ``ids``."""
        return self._table.columns[1][self._table.index(ids)]

    def _beliefs(self, ids: IdArray) -> tuple[FloatArray, FloatArray]:
        """Return the belief means and variances of ``ids`` (one id check for both)."""
        idx = self._table.index(ids)
        mu, var = self._table.columns
        return mu[idx], var[idx]

    def belief_lists(self, ids: list[int]) -> tuple[list[float], list[float]]:
        """Return the belief means and variances of a few ``ids`` as lists of floats (what
        :meth:`means` and :meth:`variances` return, for a small pass that works on floats)."""
        table = self._table
        if ids and min(ids) >= 0 and max(ids) < table.n_dense:
            means, variances = table.views
            return list(map(means.__getitem__, ids)), list(map(variances.__getitem__, ids))
        idx = table.index(np.array(ids, dtype=np.intp))  # raises on an unknown id
        mu, var = table.columns
        return mu[idx].tolist(), var[idx].tolist()

    def belief_pair(self, a: int, b: int) -> tuple[float, float, float, float]:
        """Return the belief means and variances of two players, ``(mu_a, var_a, mu_b, var_b)``
        (:meth:`belief_lists` of ``[a, b]``, for a small pass of two)."""
        table = self._table
        if 0 <= a < table.n_dense and 0 <= b < table.n_dense:
            mu, var = table.views
            return mu[a], var[a], mu[b], var[b]
        (mu_a, mu_b), (var_a, var_b) = self.belief_lists([a, b])
        return mu_a, var_a, mu_b, var_b

    def mean_list(self, ids: list[int]) -> list[float]:
        """Return the belief means of ``ids`` as a list of floats (:meth:`belief_lists`' first)."""
        table = self._table
        if ids and min(ids) >= 0 and max(ids) < table.n_dense:
            return list(map(table.views[0].__getitem__, ids))
        return self.means(np.array(ids, dtype=np.intp)).tolist()  # raises on an unknown id

    def win_probability(self, ids_a: IdArray, ids_b: IdArray) -> FloatArray:
        """Return P(a beats b) = Phi((mu_a - mu_b) / c) per pair, under the current beliefs."""
        mu_a, var_a = self._beliefs(ids_a)
        mu_b, var_b = self._beliefs(ids_b)
        return gaussian.win_probability(mu_a, var_a, mu_b, var_b, self.beta2)

    def quality(self, ids_a: IdArray, ids_b: IdArray) -> FloatArray:
        """Return TrueSkill's match quality per pair: sqrt(2 beta2 / c^2) exp(-d^2 / (2 c^2))."""
        mu_a, var_a = self._beliefs(ids_a)
        mu_b, var_b = self._beliefs(ids_b)
        return gaussian.match_quality(mu_a, var_a, mu_b, var_b, self.beta2)


class FloatBeliefs(Protocol):
    """A capability a rater may declare: its beliefs read on Python floats.

    ``float_means = True`` promises :meth:`mean_list`, the means of a few players as floats,
    equal to :meth:`Rater.means` of them. ``float_beliefs = True`` also promises
    :meth:`belief_lists` and :meth:`belief_pair` (means and variances as floats, equal to
    :meth:`Rater.means` and :meth:`Rater.variances`) and that :meth:`Rater.quality` is
    TrueSkill's match quality of those Gaussian beliefs with :attr:`Rater.beta2`
    (:func:`lobbysim.skill.gaussian.match_quality`). The lobby then decides small passes and
    back-fills on floats (:class:`lobbysim.sim.fast.plan.FastPlan`) with the same results.
    :class:`GaussianBeliefs` declares both; a subclass that overrides the methods behind them
    loses the declaration unless it sets it again itself.
    """

    float_means: ClassVar[bool]
    float_beliefs: ClassVar[bool]

    def mean_list(self, ids: list[int]) -> list[float]: ...

    def belief_lists(self, ids: list[int]) -> tuple[list[float], list[float]]: ...

    def belief_pair(self, a: int, b: int) -> tuple[float, float, float, float]: ...


def declares(plugin: object, capability: str) -> bool:
    """Return whether ``plugin`` declares ``capability`` (a class attribute set to True).

    Raises:
        ValueError: the attribute is set to something other than True or False.
    """
    flag = getattr(plugin, capability, False)
    if not isinstance(flag, bool):
        raise ValueError(f"{capability} must be True or False, got {flag!r}")
    return flag


def float_beliefs(rater: object) -> FloatBeliefs | None:
    """Return ``rater`` if it declares ``float_beliefs`` (see :class:`FloatBeliefs`), else None."""
    return rater if declares(rater, "float_beliefs") else None  # type: ignore[return-value]


def mean_lists(rater: object) -> Callable[[list[int]], list[float]] | None:
    """Return ``rater``'s :meth:`FloatBeliefs.mean_list` if it declares ``float_means``, else
    None (ask :meth:`Rater.means` for an array)."""
    return rater.mean_list if declares(rater, "float_means") else None  # type: ignore[attr-defined]


#: The replay families a rater may declare (``replay_family``, see :func:`replay_family`).
REPLAY_FAMILIES = ("gaussian", "elo", "glicko2", "generic")
#: The methods a replay family's predictions stand for: a class that defines one of them below
#: the class that declares the family no longer predicts as the family says (see
#: :func:`replay_family`).
REPLAY_METHODS = ("win_probability", "means", "variances")


def replay_family(rater: object) -> str:
    """Return the replay family ``rater`` declares with ``replay_family`` (a class attribute),
    or ``"generic"``, what a rater declaring none gets.

    A family promises how the rater predicts a match from its ratings as they stand, so that
    :mod:`lobbysim.calibration.replay` predicts a whole stage of a log at once (on arrays)
    rather than asking :meth:`Rater.win_probability` player by player, with the same
    predictions:

    * ``"gaussian"``: ``win_probability`` is ``Phi((mu_a - mu_b) / sqrt(2 beta2 + var_a +
      var_b))`` of :meth:`Rater.means`, :meth:`Rater.variances` and :attr:`Rater.beta2` (sides of
      several players: the formula of :mod:`lobbysim.calibration.replay`), and an update moves
      only the ratings of the game's players (:class:`GaussianBeliefs` declares it).
    * ``"elo"``: ``win_probability`` is ``1 / (1 + exp(-(R_a - R_b) / t))`` of the means, with
      the logistic scale an attribute ``t``; no variances; an update moves only its players
      (the SPH Elo).
    * ``"glicko2"``: Glickman's predictive probability of Glicko ratings (means) and
      deviations (variances are ``RD^2``); ratings move only when a rating period of
      ``period`` minutes (an attribute) closes, and then every player's (Glicko-2).
    * ``"generic"``: none of these; the replay asks ``win_probability`` and takes every update
      as moving every rating (slow, and exact for any rater).

    A subclass inherits the family, unless it defines one of :data:`REPLAY_METHODS` itself
    without declaring ``replay_family`` again: it then predicts its own way and gets
    ``"generic"``.

    Raises:
        ValueError: the attribute is not one of :data:`REPLAY_FAMILIES`.
    """
    family = getattr(rater, "replay_family", "generic")
    if family not in REPLAY_FAMILIES:
        raise ValueError(f"replay_family must be one of {list(REPLAY_FAMILIES)}, got {family!r}")
    mro = type(rater).__mro__
    declared = next((k for k, cls in enumerate(mro) if "replay_family" in vars(cls)), None)
    if declared is None or family == "generic":
        return family
    overridden = any(name in vars(cls) for cls in mro[:declared] for name in REPLAY_METHODS)
    return "generic" if overridden else str(family)


class PlayerTable:
    """Float columns indexed by player id, grown by doubling, with an undo journal.

    Writes go through :meth:`write`, which remembers the old values while a journal is open, so a
    batch update that fails half-way can be rolled back in time proportional to what it touched.
    """

    def __init__(self, rater: str, n_columns: int) -> None:
        self.rater = rater
        self.known = np.zeros(0, dtype=bool)
        self.n_dense = 0  # ids 0 .. n_dense - 1 are all known (players are never removed)
        self.columns: list[FloatArray] = [np.zeros(0) for _ in range(n_columns)]
        #: The columns as memoryviews (a Python float per item, read and written in place at a
        #: fraction of an array's indexing cost): one player at a time, on the hot path.
        self.views: list[Any] = [col.data for col in self.columns]
        self._journal: list[tuple[NDArray[np.intp], list[FloatArray]]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["views"]  # a memoryview does not pickle; made again from the columns
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.views = [col.data for col in self.columns]

    def add(self, ids: ArrayLike, values: Sequence[FloatArray]) -> None:
        """Add players ``ids`` (new, non-negative, unique) with one value array per column."""
        idx = np.asarray(ids)
        if idx.ndim != 1 or not (np.issubdtype(idx.dtype, np.integer) or idx.size == 0):
            raise ValueError(f"rater '{self.rater}': ids must be a 1-d array of ints, got {ids!r}")
        idx = idx.astype(np.intp)
        if idx.size == 0:
            return
        if idx.min() < 0:
            raise ValueError(f"rater '{self.rater}': player id {int(idx.min())} is negative")
        uniq, counts = np.unique(idx, return_counts=True)
        if (counts > 1).any():
            dup = int(uniq[np.argmax(counts > 1)])
            raise ValueError(f"rater '{self.rater}': player id {dup} is given twice")
        capacity = self.known.size
        old = idx[idx < capacity]
        if self.known[old].any():
            raise ValueError(
                f"rater '{self.rater}': player id {int(old[self.known[old]][0])} is already added"
            )
        needed = int(idx.max()) + 1
        if needed > capacity:
            new_capacity = max(needed, 2 * capacity, 16)
            self.known = np.concatenate([self.known, np.zeros(new_capacity - capacity, bool)])
            self.columns = [
                np.concatenate([col, np.zeros(new_capacity - capacity)]) for col in self.columns
            ]
            self.views = [col.data for col in self.columns]
        self.known[idx] = True
        rest = self.known[self.n_dense :]
        unknown = np.flatnonzero(~rest)
        self.n_dense += int(unknown[0]) if unknown.size else rest.size
        for col, val in zip(self.columns, values, strict=True):
            col[idx] = val

    def index(self, ids: ArrayLike) -> NDArray[np.intp]:
        """Return ``ids`` as an index array; raise :class:`KeyError` naming an unknown id."""
        idx = np.asarray(ids)
        if idx.dtype == np.intp and idx.ndim == 1 and 0 < idx.size <= 8:
            # a few ids (a small pass): the same check on Python ints, without a reduction
            listed = idx.tolist()
            if min(listed) >= 0 and max(listed) < self.n_dense:
                return idx
        if idx.dtype == np.intp and idx.ndim == 1 and idx.size:
            # the common case (the lobby's id arrays, with players added in id order), checked
            # in one reduction: seen as unsigned, a negative id is larger than any other
            top = idx.view(np.uintp).max()
            if top < self.n_dense or (top < self.known.size and self.known[idx].all()):
                return idx
        if idx.size and not np.issubdtype(idx.dtype, np.integer):
            raise KeyError(f"rater '{self.rater}': player ids must be ints, got {ids!r}")
        idx = idx.astype(np.intp)
        bad = (idx < 0) | (idx >= self.known.size)
        bad[~bad] = ~self.known[idx[~bad]]
        if bad.any():
            raise KeyError(f"rater '{self.rater}': unknown player id {int(idx[bad].flat[0])}")
        return idx

    def write(self, idx: NDArray[np.intp], values: Sequence[FloatArray]) -> None:
        """Set the columns at ``idx`` (journalled while a batch is in progress)."""
        if self._journal is not None:
            self._journal.append((idx, [col[idx] for col in self.columns]))
        for col, val in zip(self.columns, values, strict=True):
            col[idx] = val

    def begin(self) -> None:
        """Open the undo journal of a batch."""
        self._journal = []

    def commit(self) -> None:
        """Close the journal, keeping every write."""
        self._journal = None

    def rollback(self) -> None:
        """Undo every write since :meth:`begin`, newest first, and close the journal."""
        journal, self._journal = self._journal or [], None
        for idx, old in reversed(journal):
            for col, val in zip(self.columns, old, strict=True):
                col[idx] = val


def float_array(name: str, values: ArrayLike, size: int, rater: str) -> FloatArray:
    """Return ``values`` as a finite float array of length ``size``; raise naming ``name``."""
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if arr.size != size:
        raise ValueError(f"rater '{rater}': {name} has {arr.size} values for {size} ids")
    if not np.isfinite(arr).all():
        raise ValueError(f"rater '{rater}': {name} must be finite, got {arr[~np.isfinite(arr)][0]}")
    return arr


def game_error(game: GameResult, message: str) -> ValueError:
    """Return the error for a malformed game, naming its id and mode."""
    return ValueError(f"game {game.game_id} ({game.mode}): {message}")


def check_seats(game: GameResult) -> None:
    """Validate a team or ffa game's seats: sides, unique players, finite stints and scores."""
    if game.mode not in ("team", "ffa"):
        raise game_error(game, "mode must be one of '1v1', 'team', 'ffa'")
    team_game = game.mode == "team"
    seen: set[int] = set()
    for seat in game.seats:
        if (seat.team is not None) != team_game:
            side = "an int team" if team_game else "team None"
            raise game_error(game, f"player {seat.player_id} has team {seat.team!r}; needs {side}")
        if seat.player_id in seen:
            raise game_error(game, f"player {seat.player_id} has more than one seat")
        seen.add(seat.player_id)
        if not (
            math.isfinite(seat.score)
            and math.isfinite(seat.joined)
            and math.isfinite(seat.left)
            and seat.left >= seat.joined
        ):
            raise game_error(game, f"player {seat.player_id} has a bad stint or score: {seat!r}")


def duel_sides(game: GameResult) -> tuple[Seat, Seat]:
    """Return the two seats of a 1v1 game, checked."""
    if len(game.seats) != 2:
        raise game_error(game, f"a 1v1 game needs exactly 2 seats, got {len(game.seats)}")
    a, b = game.seats
    if a.player_id == b.player_id or a.team is None or a.team == b.team:
        raise game_error(game, "a 1v1 game needs two different players on two different teams")
    return a, b


def waves(id_groups: Sequence[Sequence[int]]) -> list[range]:
    """Split games (given by their rated ids) into maximal runs with no id in common."""
    flat = [pid for ids in id_groups for pid in ids]
    if len(set(flat)) == len(flat):  # nobody in two games (a tick's games): one wave
        return [range(len(id_groups))] if id_groups else []
    runs: list[range] = []
    start = 0
    seen: set[int] = set()
    for k, ids in enumerate(id_groups):
        if not seen.isdisjoint(ids):
            runs.append(range(start, k))
            start, seen = k, set()
        seen.update(ids)
    if id_groups:
        runs.append(range(start, len(id_groups)))
    return runs


def compare_sph(
    score_a: FloatArray, min_a: FloatArray, score_b: FloatArray, min_b: FloatArray
) -> NDArray[np.int64]:
    """Return sign(SPH_a - SPH_b) per pair, exactly, for minutes > 0 and finite scores.

    SPH_a > SPH_b iff ``score_a * min_b > score_b * min_a`` in exact arithmetic. Rounding is
    monotone, so a strict inequality between the rounded products holds exactly as well; only
    rounded products that are equal are decided again with :class:`~fractions.Fraction`.
    """
    x = score_a * min_b
    y = score_b * min_a
    sign = (x > y).astype(np.int64) - (x < y).astype(np.int64)
    # two scores of 0 tie exactly (sign 0): only other equal products need the fractions
    for k in np.flatnonzero((x == y) & ((score_a != 0.0) | (score_b != 0.0))).tolist():
        fx = Fraction(float(score_a[k])) * Fraction(float(min_b[k]))
        fy = Fraction(float(score_b[k])) * Fraction(float(min_a[k]))
        sign[k] = (fx > fy) - (fx < fy)
    return sign
