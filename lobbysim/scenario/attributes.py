"""The players' attributes beyond skill that rules read (``attributes:``; docs/model.md,
section 10).

An :class:`AttributeConfig` is drawn per player (a ``number`` normal, a ``string`` by shares, a
``string_list`` value by value, a ``string_number_map`` key by key) or bound to the simulation (a
number as ``offset + scale * x``, x the driving rater's mean or the true skill). ``rating`` is the
built-in attribute: the driving rater's mean, unscaled. The rules that read them are
:mod:`lobbysim.scenario.rules`; the engine draws them in :mod:`lobbysim.sim.rules`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from lobbysim.registry import did_you_mean

#: A rule's or an attribute's name.
LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,59}")
ATTRIBUTE_TYPES = ("number", "string", "string_list", "string_number_map")
NUMBER_SOURCES = ("drawn", "rating", "skill")
#: The number attribute every scenario has: the driving rater's mean.
RATING = "rating"


@dataclass(frozen=True)
class AttributeConfig:
    """A player attribute beyond skill, drawn per player as they are registered (stream
    ``attributes``) or bound to the simulation.

    Attributes:
        type: ``number``, ``string``, ``string_list`` or ``string_number_map``.
        source: of a number: ``drawn`` (normal, ``mean`` and ``sd``), ``rating`` (the driving
            rater's mean now) or ``skill`` (true skill); the value is ``offset + scale * x``.
        scale, offset: of a bound number (``rating`` or ``skill``).
        mean, sd: of a drawn number.
        values: of a ``string``: each value's share of the players (summing to 1); of a
            ``string_list``: each value's chance to be in a player's list, independently (a
            player with none gets the likeliest); of a ``string_number_map``: each key's mean
            (every player has every key, its number drawn normal with ``sd``).
    """

    type: str = "number"
    source: str = "drawn"
    scale: float = 1.0
    offset: float = 0.0
    mean: float = 0.0
    sd: float = 0.0
    values: Mapping[str, float] = field(default_factory=dict)

    def problems(self, where: str) -> list[str]:
        """Return what is wrong with the attribute (``where``: its field path)."""
        out: list[str] = []
        if self.type not in ATTRIBUTE_TYPES:
            return [
                f"{where}.type: expected one of {', '.join(ATTRIBUTE_TYPES)}, got {self.type!r}"
                + did_you_mean(str(self.type), list(ATTRIBUTE_TYPES))
            ]
        if self.type == "number":
            if self.source not in NUMBER_SOURCES:
                out.append(
                    f"{where}.source: expected one of {', '.join(NUMBER_SOURCES)}, got "
                    f"{self.source!r}" + did_you_mean(str(self.source), list(NUMBER_SOURCES))
                )
            for name in ("scale", "offset", "mean"):
                if not math.isfinite(getattr(self, name)):
                    out.append(
                        f"{where}.{name}: expected a finite number, got {getattr(self, name)!r}"
                    )
            if not (math.isfinite(self.sd) and self.sd >= 0):
                out.append(f"{where}.sd: expected a number >= 0, got {self.sd!r}")
            if self.values:
                out.append(f"{where}.values: a number attribute has no values")
            return out
        if self.source != "drawn":
            out.append(f"{where}.source: a {self.type} attribute is drawn, got {self.source!r}")
        if self.type == "string_number_map":
            return out + self._map_problems(where)
        if not self.values:
            out.append(f"{where}.values: expected at least one value with its share")
            return out
        bad = [v for v in self.values if not isinstance(v, str) or not v]
        if bad:
            out.append(f"{where}.values: a value is a non-empty text, got {bad[0]!r}")
        shares = list(self.values.values())
        if not all(math.isfinite(s) and 0.0 < s <= 1.0 for s in shares):
            out.append(f"{where}.values: a share is a number in (0, 1], got {dict(self.values)}")
        elif self.type == "string" and abs(math.fsum(shares) - 1.0) > 1e-9:
            out.append(
                f"{where}.values: the shares of a string attribute sum to 1, got "
                f"{math.fsum(shares):g}"
            )
        return out

    def _map_problems(self, where: str) -> list[str]:
        out: list[str] = []
        if not self.values:
            out.append(f"{where}.values: expected at least one key with its mean, {{KEY: mean}}")
        bad = [v for v in self.values if not isinstance(v, str) or not v]
        if bad:
            out.append(f"{where}.values: a key is a non-empty text, got {bad[0]!r}")
        means = list(self.values.values())
        if not all(isinstance(m, int | float) and math.isfinite(m) for m in means):
            out.append(f"{where}.values: a key's mean is a finite number, got {dict(self.values)}")
        if not (math.isfinite(self.sd) and self.sd >= 0):
            out.append(f"{where}.sd: expected a number >= 0, got {self.sd!r}")
        return out


def attributes_problems(attributes: Mapping[str, AttributeConfig]) -> list[str]:
    """Return what is wrong with a scenario's ``attributes:`` section."""
    out: list[str] = []
    for name, attribute in attributes.items():
        where = f"attributes.{name}"
        if not LABEL.fullmatch(name) or name == RATING:
            out.append(
                f"{where}: an attribute's name starts with a letter or _, then letters, digits, "
                f"_, . and - (at most 60), and is not {RATING!r}"
            )
        out += attribute.problems(where)
    return out
