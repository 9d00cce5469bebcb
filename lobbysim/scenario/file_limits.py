"""An imported rule's limit in its FlexMatch file's own units.

A rule read from a FlexMatch file (:mod:`lobbysim.flexmatch.read`) keeps, in ``read_from``, the
file's property its limit comes from and the factor from that property to lobbysim's limit (2 for a
team balance read from ``maxDistance``). Nothing in the simulation reads it: ``lobbysim rules show``
and the run report show the file's numbers beside lobbysim's, and an override may give the limit in
the file's units, ``--set matchmaker.rules.FairTeams.maxDistance=30`` (:func:`in_rule_units`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lobbysim.registry import did_you_mean
from lobbysim.validation import ScenarioError

#: The FlexMatch properties a rule's limit can be read from (:class:`FileLimit`).
FILE_PROPERTIES = (
    "maxDistance",
    "minDistance",
    "maxLatency",
    "minCount",
    "maxCount",
    "referenceValue",
)


def _number_text(value: float) -> str:
    """A number as a rule's line shows it: up to six significant digits, no trailing zeros."""
    return f"{value:.6g}"


@dataclass(frozen=True)
class FileLimit:
    """Where an imported rule's limit comes from in its FlexMatch file, so that the file's own
    numbers can be shown (``lobbysim rules show``, the report) and overridden (``--set
    matchmaker.rules.NAME.maxDistance=30``).

    Attributes:
        property: the FlexMatch property (``maxDistance``, ``maxLatency``, ...).
        factor: the rule's limit per unit of the property (2 for a team balance read from
            ``maxDistance``: each team within d of the match is two teams within 2d).
    """

    property: str = ""
    factor: float = 1.0

    def shown(self, limit: float, expansions: Sequence[tuple[float, float]]) -> str:
        """Return a limit and its expansions (waits in minutes) in the file's units:
        ``maxDistance 25, expansions [60 s: 50, 180 s: 100]``."""
        text = f"{self.property} {_number_text(limit / self.factor)}"
        if expansions:
            steps = ", ".join(
                f"{_number_text(w * 60)} s: {_number_text(v / self.factor)}" for w, v in expansions
            )
            text += f", expansions [{steps}]"
        return text

    def problems(self, where: str) -> list[str]:
        """Return what is wrong with it (``where``: its field path)."""
        out = []
        if self.property not in FILE_PROPERTIES:
            out.append(
                f"{where}.property: expected one of {', '.join(FILE_PROPERTIES)}, got "
                f"{self.property!r}" + did_you_mean(str(self.property), list(FILE_PROPERTIES))
            )
        if not (math.isfinite(self.factor) and self.factor > 0):
            out.append(f"{where}.factor: expected a number > 0, got {self.factor!r}")
        return out


def in_rule_units(data: Mapping[str, Any], key: str, value: Any, what: str) -> tuple[str, Any]:
    """Return the override ``key=value`` in lobbysim's terms: a rule read from a FlexMatch file
    takes its limit in the file's units by the file's property,
    ``matchmaker.rules.FairTeams.maxDistance=30`` (the rule's ``read_from``:
    :class:`FileLimit`), which is its ``limit`` times the factor;
    every other override is returned as it is.

    Raises:
        ScenarioError: the property is not the one the rule's limit comes from, the rule is of
            lobbysim's own language, or the value is not a number the property takes; each
            naming the option, the field and the value in the file's terms.
    """
    parts = key.strip().split(".")
    if len(parts) != 4 or parts[:2] != ["matchmaker", "rules"] or parts[3] not in FILE_PROPERTIES:
        return key, value
    mm = data.get("matchmaker")
    rules = mm.get("rules") if isinstance(mm, Mapping) else None
    named = [
        r
        for r in (rules if isinstance(rules, list) else ())
        if isinstance(r, Mapping) and r.get("name") == parts[2]
    ]
    rule = named[0] if named else None
    if rule is None:
        return key, value  # set_path names the rules there are
    source = rule.get("read_from")
    name, prop = parts[2], parts[3]
    if not isinstance(source, Mapping):
        raise ScenarioError(
            f"{what} {key}: rule {name} is written in lobbysim's own rule language, not read from "
            f"a FlexMatch file: set its limit, matchmaker.rules.{name}.limit"
        )
    if source.get("property") != prop:
        raise ScenarioError(
            f"{what} {key}: rule {name}'s limit comes from its FlexMatch file's "
            f"{source.get('property')}: set matchmaker.rules.{name}.{source.get('property')}"
        )
    signed = prop == "referenceValue"
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or (value < 0 and not signed)
    ):
        expected = "a finite number" if signed else "a number >= 0"
        raise ScenarioError(
            f"{what} {key}: expected {expected} (FlexMatch's {prop}), got {value!r}"
        )
    return f"matchmaker.rules.{name}.limit", value * float(source.get("factor", 1.0))
