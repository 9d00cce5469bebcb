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
from collections.abc import Mapping
from typing import Any

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


class Uniforms:
    """A generator's uniforms, drawn ahead in blocks and handed out in order.

    ``take(k)`` returns the ``k`` values ``rng.random(k).tolist()`` would have drawn next, for
    a fraction of a call's cost when ``k`` is small (a matchmaking pass on every arrival draws
    two to a few dozen tie-break uniforms). A double of ``random`` is one 64-bit output of the
    bit generator, so a block of ``m`` holds the next ``m`` draws whatever sizes they are asked
    for in. Whoever draws from the generator itself must get it from :meth:`generator`, which
    first rewinds it to just after the values taken (the bit generator's saved state, then
    those values drawn again): the stream is then the one a plain generator would have been.

    Blocks start small and double while nobody else draws (up to :attr:`LARGEST`); after a
    rewind they start small again.

    Args:
        rng: the generator (from now on, reach it only through :meth:`generator`).
    """

    SMALLEST = 16
    LARGEST = 4096

    __slots__ = ("_block", "_next", "_rng", "_size", "_start")

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._block: list[float] = []
        self._next = 0  # the first value of the block not taken
        self._start: Mapping[str, Any] | None = None  # the bit generator before the block
        self._size = self.SMALLEST

    def take(self, k: int) -> list[float]:
        """Return the next ``k`` uniforms of the stream, as ``rng.random(k).tolist()``."""
        first = self._next
        end = first + k
        block = self._block
        if end <= len(block):
            self._next = end
            return block[first:end]
        # the rest of this block, then the next one: the generator is at the end of this one
        rest = block[first:]
        need = k - len(rest)
        self._start = self._rng.bit_generator.state
        self._block = self._rng.random(self._size if self._size >= need else need).tolist()
        self._size = min(2 * self._size, self.LARGEST)
        self._next = need
        return rest + self._block[:need]

    def generator(self) -> np.random.Generator:
        """Return the generator, in the state the values taken so far would have left it."""
        if self._start is not None:
            if self._next < len(self._block):  # rewind to just after the values taken
                self._rng.bit_generator.state = self._start
                self._rng.random(self._next)
                self._size = self.SMALLEST
            self._start = None
            self._block = []
            self._next = 0
        return self._rng
