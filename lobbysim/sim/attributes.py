"""Every player's attributes beyond skill (``attributes:``; docs/model.md, section 10).

:class:`Attributes` draws them from a stream of each attribute's own (``attributes:<name>``): a
drawn number from its normal, a string by its shares, a string list value by value (a player
with none gets the likeliest), a string_number_map key by key; player i's value is its i-th
draw, whenever a pass first asks for it. The rules read them (:mod:`lobbysim.sim.rules`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lobbysim.scenario.attributes import AttributeConfig
from lobbysim.sim.entities import IdArray


class Attributes:
    """Every player's attributes beyond skill (see the module docstring), by player id.

    Each attribute has a random stream of its own (``rng_of(name)``), and player ``i``'s value
    is its ``i``-th draw: the values are drawn, in id order, the first time a pass asks for a
    player's, and do not depend on when that is.

    Args:
        config: the scenario's ``attributes:`` section.
        rng_of: the stream of an attribute, by name.
    """

    def __init__(
        self, config: Mapping[str, AttributeConfig], rng_of: Callable[[str], np.random.Generator]
    ) -> None:
        self.config = dict(config)
        self._rngs = {name: rng_of(name) for name in self.config}
        self._n = 0
        #: Per attribute: the values of the players drawn so far (floats, value codes, or bit
        #: masks of the values in a list), grown as players come.
        self._columns: dict[str, NDArray[Any]] = {}
        #: Each string attribute's values, in the order declared (a code is an index in it).
        self.values = {name: list(a.values) for name, a in self.config.items()}
        for name, attribute in self.config.items():
            if attribute.type == "string_number_map":  # a column per key, X[KEY]
                for key in attribute.values:
                    self._columns[f"{name}[{key}]"] = np.zeros(1024, dtype=np.float64)
                continue
            dtype = np.float64 if attribute.type == "number" else np.int64
            self._columns[name] = np.zeros(1024, dtype=dtype)

    def _draw_up_to(self, end: int) -> None:
        """Draw the attributes of players ``self._n`` to ``end - 1``."""
        first, n = self._n, end - self._n
        if n <= 0:
            return
        for name, attribute in self.config.items():
            rng = self._rngs[name]
            if attribute.type == "string_number_map":  # every key, drawn together
                means = np.array(list(attribute.values.values()), dtype=float)
                drawn = rng.normal(means, attribute.sd, (n, len(means)))
                for k, key in enumerate(attribute.values):
                    name_k = f"{name}[{key}]"
                    if end > len(self._columns[name_k]):
                        grown = max(end, 2 * len(self._columns[name_k]))
                        self._columns[name_k] = np.resize(self._columns[name_k], grown)
                    self._columns[name_k][first:end] = drawn[:, k]
                continue
            column = self._columns[name]
            if end > len(column):
                column = self._columns[name] = np.resize(column, max(end, 2 * len(column)))
            if attribute.type == "number":
                if attribute.source == "drawn":
                    column[first:end] = rng.normal(attribute.mean, attribute.sd, n)
                continue
            shares = np.array(list(attribute.values.values()))
            if attribute.type == "string":
                column[first:end] = rng.choice(len(shares), size=n, p=shares / shares.sum())
                continue
            has = rng.random((n, len(shares))) < shares
            has[~has.any(axis=1), int(np.argmax(shares))] = True
            column[first:end] = (has * (1 << np.arange(len(shares)))).sum(axis=1)
        self._n = end

    def column(self, name: str, pids: IdArray) -> NDArray[Any]:
        """Return an attribute's values (codes, bit masks; a map's key as ``X[KEY]``) of
        players ``pids``."""
        index = np.asarray(pids, dtype=np.intp)
        if index.size:
            self._draw_up_to(int(index.max()) + 1)
        return self._columns[name][index]
