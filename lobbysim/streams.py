"""Named, independent random streams spawned from one master seed (docs/model.md, section 5).

Every random component of a replication (arrivals, population, performances, quits, scores, policy
tie-breaks, ...) draws from its own :class:`numpy.random.Generator`, obtained by name from one
:class:`Streams`. A stream depends only on the master seed and its name, never on which other
streams exist or in which order they were requested, so changing the matchmaking policy (which
draws from its own stream) cannot change who arrives when or how skilled they are: policies compared
on the same seeds see common random numbers.

Nothing else in lobbysim creates generators from seeds; components receive a ``Generator``.
"""

from __future__ import annotations

import numbers
import zlib

import numpy as np


def _name_key(name: str) -> int:
    """Return the stable 32-bit spawn key of a stream name (unlike ``hash``, fixed across runs)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a stream name must be a non-empty string, got {name!r}")
    return zlib.crc32(name.encode("utf-8"))


class Streams:
    """Independent named random streams of one replication.

    ``get(name)`` is the stream ``SeedSequence(seed, spawn_key=(crc32(name),))``;
    ``spawn(name, index)`` is ``SeedSequence(seed, spawn_key=(crc32(name), index))``, a family of
    per-entity streams (e.g. one per arrival window) under the same name.

    Args:
        seed: the master seed of the replication, a non-negative integer.

    Raises:
        ValueError: if ``seed`` is not a non-negative integer, or if two names used with the same
            ``Streams`` collide on their 32-bit key (the stream would not be independent).
    """

    def __init__(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or int(seed) < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        self._seed: int = int(seed)
        self._streams: dict[str, np.random.Generator] = {}
        self._names_by_key: dict[int, str] = {}

    @property
    def seed(self) -> int:
        """Return the master seed."""
        return self._seed

    def names(self) -> list[str]:
        """Return the names used so far (by ``get`` or ``spawn``), in first-use order."""
        return list(self._names_by_key.values())

    def _key(self, name: str) -> int:
        key = _name_key(name)
        other = self._names_by_key.setdefault(key, name)
        if other != name:
            raise ValueError(
                f"stream names {other!r} and {name!r} share the key {key}; rename one of them"
            )
        return key

    def get(self, name: str) -> np.random.Generator:
        """Return the stream called ``name``: the same ``Generator`` object on every call.

        Args:
            name: the component's stream name, e.g. ``"arrivals"`` or ``"population"``.
        """
        stream = self._streams.get(name)
        if stream is None:
            sequence = np.random.SeedSequence(self._seed, spawn_key=(self._key(name),))
            stream = self._streams[name] = np.random.default_rng(sequence)
        return stream

    def spawn(self, name: str, index: int) -> np.random.Generator:
        """Return a fresh ``Generator`` for entity ``index`` of the family ``name``.

        Its numbers depend only on (seed, name, index); each call returns a new generator
        positioned at the start of that stream. It is independent of ``get(name)``.

        Args:
            name: the family, e.g. ``"arrival-window"``.
            index: the entity, a non-negative integer (e.g. the window number).
        """
        if isinstance(index, bool) or not isinstance(index, numbers.Integral) or int(index) < 0:
            raise ValueError(f"index must be a non-negative integer, got {index!r}")
        sequence = np.random.SeedSequence(self._seed, spawn_key=(self._key(name), int(index)))
        return np.random.default_rng(sequence)

    def __repr__(self) -> str:
        return f"Streams(seed={self._seed})"
