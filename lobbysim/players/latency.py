"""Latency models: how far, in milliseconds, each player is from every data centre.

A scenario's world declares data centres and player regions; every new player belongs to a
region, and a *latency model* gives them a latency (ms) to each data centre. A model is a small
plug-in with one verb, vectorised and drawing only from the generator it is given::

    latencies(rng, regions, region_names, data_centres) -> array of shape (n, k)

``regions`` holds each of the ``n`` new players' region index into ``region_names``; row ``i``
of the answer is player ``i``'s latency to each of the ``k`` data centres, in the order of
``data_centres``: finite numbers >= 0. The engine checks every model's answer with
:func:`check_latency_output` and names the model in the error (a verb that raises or calls
``sys.exit`` too, on one line: :class:`~lobbysim.registry.PluginRef`).

The built-in ``matrix`` model has a base latency for every (region, data centre) pair,
``base_ms``, and scatters the players of a region around it with a lognormal factor::

    latency[i, d] = max(floor_ms, base_ms[region of i][d] * exp(spread * Z[i, d]))

with ``Z`` independent standard normals, one per player and data centre. So the *median* of a
player's latency to a data centre is the base (above the floor), and ``spread`` is the standard
deviation of the log-latency: 0.25 puts half the players within about 16% of the base and one in
forty above 1.6 times it. ``spread: 0`` gives every player of a region the base latencies
exactly; ``floor_ms`` is a physical minimum (light in fibre, the last mile) that no latency goes
below. The normals are drawn in one call of ``rng.standard_normal((n, k))``, so the draws depend
only on how many players and data centres there are, never on their regions or on the
parameters: two scenarios differing only in ``base_ms`` see the same players' luck.

A latency is a property of the player, not of the visit: the members of a persistent player base
(``base:``) keep their latencies from visit to visit. The engine ensures that by asking the model
once per player, when the player is created, and keeping the answer.

**Your own model.** Any class with a class attribute ``name`` and the verb ``latencies`` above is
a latency model; a scenario names it as ``package.module:Class`` or ``file.py:Class`` (a path
relative to the current folder), with its parameters as the fields of a dataclass, checked as the
built-ins' are: ``LATENCY.create(name, params)`` builds a built-in or a user class alike. A model
may also have ``check(region_names, data_centres)``, returning the problems of its parameters
against the world (one line each), as ``matrix`` does.

Models never import SimPy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from lobbysim.registry import Registry, did_you_mean
from lobbysim.validation import is_number

FloatArray = NDArray[np.float64]
IntpArray = NDArray[np.intp]

#: The largest ``spread``: a log-latency sd of 3 already puts one player in six above 20 times
#: the base; more is a mistake.
MAX_SPREAD = 3.0
#: The largest latency a scenario may give (a base or the floor), in ms: ten seconds, far beyond
#: any game that can be played at all.
MAX_LATENCY_MS = 10_000.0
#: The most data centres a row of ``base_ms`` may have.
MAX_DATA_CENTRES = 1_000

#: Where a scenario declares the latency model's base latencies, as check messages name it.
BASE_MS_FIELD = "world.latency.base_ms"


@runtime_checkable
class LatencyModel(Protocol):
    """The latency (ms) of every new player to every data centre."""

    name: ClassVar[str]

    def latencies(
        self,
        rng: np.random.Generator,
        regions: IntpArray,
        region_names: tuple[str, ...],
        data_centres: tuple[str, ...],
    ) -> FloatArray:
        """Return the latencies of ``len(regions)`` new players to the data centres.

        Args:
            rng: the stream to draw from (the only source of randomness).
            regions: each new player's region, an index into ``region_names``.
            region_names: the world's regions.
            data_centres: the world's data centres.

        Returns:
            An array of shape ``(len(regions), len(data_centres))`` of finite latencies >= 0, ms.
        """
        ...


LATENCY: Registry[LatencyModel] = Registry("latency model", required=("latencies",))


def check_latency_output(values: object, n: int, k: int) -> FloatArray:
    """Return a latency model's answer as a float array, or raise saying what is wrong.

    The engine calls it on every model's answer (and names the model). A numpy array or a list of
    lists of numbers (integers too) will do; booleans, text and other objects will not.

    Args:
        values: what the model's ``latencies`` returned.
        n: the number of players asked for (rows).
        k: the number of data centres (columns).

    Returns:
        The latencies as a ``float64`` array of shape ``(n, k)``.

    Raises:
        ValueError: saying what is wrong: not an array of numbers, not of shape ``(n, k)``, a
            NaN or infinite value, a negative value (with its position).
    """
    expected = f"an array of shape ({n}, {k}) (players x data centres) of latencies in ms"
    if isinstance(values, np.ndarray):
        array = values
    elif isinstance(values, list | tuple):
        try:
            array = np.asarray(values)
        except (TypeError, ValueError):  # ragged lists
            raise ValueError(f"expected {expected}, got a ragged {type(values).__name__}") from None
    else:
        raise ValueError(f"expected {expected}, got {type(values).__name__}")
    if array.dtype.kind not in "iuf":
        raise ValueError(f"expected {expected}, got an array of {array.dtype} values")
    if array.shape != (n, k):
        raise ValueError(f"expected {expected}, got shape {array.shape}")
    out = array.astype(np.float64, copy=False)
    bad = ~np.isfinite(out)
    if bad.any():
        i, d = np.argwhere(bad)[0]
        raise ValueError(
            f"expected finite latencies, got {out[i, d].item()!r} for player {i}, data centre {d}"
        )
    negative = out < 0
    if negative.any():
        i, d = np.argwhere(negative)[0]
        raise ValueError(
            f"expected latencies >= 0, got {out[i, d].item()!r} for player {i}, data centre {d}"
        )
    return out


def _range_problem(where: str, value: object, low: float, high: float) -> str | None:
    """Return ``"<where>: expected a number in [low, high], got <value>"``, or None if fine."""
    if is_number(value) and low <= float(value) <= high:  # type: ignore[arg-type]
        return None  # NaN fails the comparison, infinities the bound
    return f"{where}: expected a number in [{low:g}, {high:g}], got {value!r}"


def _latency_problem(where: str, value: object) -> str | None:
    """Return what is wrong with one latency of ``base_ms``, or None if fine."""
    if is_number(value) and 0.0 <= float(value) <= MAX_LATENCY_MS:  # type: ignore[arg-type]
        return None
    return (
        f"{where}: expected a latency in ms, a finite number in [0, {MAX_LATENCY_MS:g}], "
        f"got {value!r}"
    )


def _is_row(row: object) -> bool:
    return isinstance(row, Sequence | np.ndarray) and not isinstance(row, str | bytes)


def _row_problems(where: str, row: object) -> list[str]:
    """Return the problems of one row of ``base_ms`` that do not depend on the world."""
    if not _is_row(row):
        return [f"{where}: expected a list of latencies in ms, one per data centre, got {row!r}"]
    values = list(row)  # type: ignore[call-overload]
    if len(values) > MAX_DATA_CENTRES:
        return [f"{where}: at most {MAX_DATA_CENTRES:,} data centres, got {len(values):,} values"]
    return [
        problem
        for d, value in enumerate(values)
        if (problem := _latency_problem(f"{where}[{d}]", value)) is not None
    ]


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(names) if names else "none"


@LATENCY.register
@dataclass(frozen=True)
class MatrixLatency:
    """A base latency per region and data centre, scattered across players by a lognormal factor.

    ``latency = max(floor_ms, base * exp(spread * Z))``, Z standard normal per player and data
    centre: the median latency of a region's players to a data centre is its base.

    Args:
        base_ms: region name -> one base latency (ms, finite, in [0, 10,000]) per data centre,
            in the order of the world's data centres (stored as tuples of floats).
        spread: the standard deviation of the log-latency, in [0, 3] (0: every player of a
            region has the base latencies exactly).
        floor_ms: no latency is below this (ms, in [0, 10,000]), applied after the factor.

    Raises:
        ValueError: naming the parameter and the value, for a spread or floor out of range, or a
            ``base_ms`` that is not a mapping of region names to lists of such latencies.
    """

    name: ClassVar[str] = "matrix"

    base_ms: Mapping[str, Sequence[float]] = field(default_factory=dict)
    spread: float = 0.25
    floor_ms: float = 1.0
    _matrices: dict[tuple[tuple[str, ...], tuple[str, ...]], FloatArray] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        problem = _range_problem("spread", self.spread, 0.0, MAX_SPREAD) or _range_problem(
            "floor_ms", self.floor_ms, 0.0, MAX_LATENCY_MS
        )
        if problem is not None:
            raise ValueError(problem)
        object.__setattr__(self, "spread", float(self.spread))
        object.__setattr__(self, "floor_ms", float(self.floor_ms))
        if not isinstance(self.base_ms, Mapping):
            raise ValueError(
                "base_ms: expected a mapping of region name -> list of latencies in ms (one per "
                f"data centre), got {self.base_ms!r}"
            )
        problems = []
        for region, row in self.base_ms.items():
            if not isinstance(region, str):
                problems.append(f"base_ms: a region name must be text, got {region!r}")
            else:
                problems += _row_problems(f"base_ms.{region}", row)
        if problems:
            raise ValueError("; ".join(problems))
        rows = {region: tuple(float(v) for v in row) for region, row in self.base_ms.items()}
        object.__setattr__(self, "base_ms", rows)

    def __hash__(self) -> int:
        return hash((tuple(self.base_ms.items()), self.spread, self.floor_ms))

    def check(self, region_names: tuple[str, ...], data_centres: tuple[str, ...]) -> list[str]:
        """Return the problems of ``base_ms`` against the world, one line each (empty: fine).

        Each problem starts with the field path, ``world.latency.base_ms.<region>`` (or
        ``world.latency.base_ms`` for a region of the world it lacks) and shows the value.

        Args:
            region_names: the world's regions.
            data_centres: the world's data centres.

        Returns:
            A region of ``base_ms`` that is not in the world (with a "did you mean"), a region of
            the world missing from ``base_ms``, a row whose length is not the number of data
            centres, a value that is not a finite number in [0, 10,000].
        """
        problems = []
        k = len(data_centres)
        for region, row in self.base_ms.items():
            where = f"{BASE_MS_FIELD}.{region}"
            if region not in region_names:
                hint = did_you_mean(str(region), list(region_names))
                problems.append(
                    f"{where}: unknown region {region!r}{hint}; the world's regions: "
                    f"{_names(region_names)}"
                )
                continue
            row_problems = _row_problems(where, row)
            if _is_row(row) and len(row) != k:
                problems.append(
                    f"{where}: {len(row)} latencies {list(row)!r} for {k} data centres "
                    f"({_names(data_centres)}); give one per data centre, in that order"
                )
            problems += row_problems
        for region in region_names:
            if region not in self.base_ms:
                problems.append(
                    f"{BASE_MS_FIELD}: no latencies for the region {region!r}; give a row "
                    f"for every region ({_names(region_names)})"
                )
        return problems

    def _matrix(self, region_names: tuple[str, ...], data_centres: tuple[str, ...]) -> FloatArray:
        """Return the base latencies as a (regions x data centres) array, checked once a world."""
        key = (tuple(region_names), tuple(data_centres))
        matrix = self._matrices.get(key)
        if matrix is None:
            problems = self.check(*key)
            if problems:
                raise ValueError("; ".join(problems))
            matrix = np.array(
                [self.base_ms[region] for region in key[0]], dtype=np.float64
            ).reshape(len(key[0]), len(key[1]))
            matrix.flags.writeable = False
            self._matrices[key] = matrix
        return matrix

    def latencies(
        self,
        rng: np.random.Generator,
        regions: IntpArray,
        region_names: tuple[str, ...],
        data_centres: tuple[str, ...],
    ) -> FloatArray:
        """Return ``max(floor_ms, base * exp(spread * Z))`` for every player and data centre.

        ``Z`` is drawn as ``rng.standard_normal((n, k))`` in one call, whatever the regions and
        parameters (also with ``spread: 0``).

        Args:
            rng: the stream to draw from.
            regions: each new player's region index into ``region_names`` (1-d, integers).
            region_names: the world's regions.
            data_centres: the world's data centres.

        Returns:
            The latencies, shape ``(len(regions), len(data_centres))``, ms.

        Raises:
            ValueError: for the problems :meth:`check` finds, or a region index that is not a
                whole number in ``[0, len(region_names))``.
        """
        matrix = self._matrix(region_names, data_centres)
        index = np.asarray(regions)
        if index.ndim != 1 or (index.size and index.dtype.kind not in "iu"):
            raise ValueError(
                f"regions: expected a 1-d array of region indices, got {index.dtype} of shape "
                f"{index.shape}"
            )
        outside = (index < 0) | (index >= len(region_names))
        if outside.any():
            raise ValueError(
                f"regions: the index {index[outside][0].item()!r} is not one of the "
                f"{len(region_names)} regions ({_names(region_names)})"
            )
        z = rng.standard_normal((index.shape[0], len(data_centres)))
        out = matrix[index.astype(np.intp, copy=False)] * np.exp(self.spread * z)
        return np.maximum(out, self.floor_ms, out=out)
