"""The scenario's parties: players who queue together as one ticket (docs/model.md, section 9).

See :class:`PartiesConfig`; the engine's side is :mod:`lobbysim.sim.parties`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from lobbysim.registry import did_you_mean
from lobbysim.validation import check

#: How a party's skill for matching is combined from its members' ratings.
SKILL_RULES = ("average", "max", "min", "average_plus")
MAX_PARTY = 100


@dataclass(frozen=True)
class PartiesConfig:
    """Guests who arrive and queue as parties: one ticket, never split across teams or games.

    Attributes:
        sizes: ``(size, share)`` pairs: the share of tickets of each party size (size 1: a solo
            player); the shares sum to 1.
        skill: how a party's rating for matching is combined from its members' means:
            ``average``, ``max``, ``min`` or ``average_plus`` (the average plus
            ``premade_bonus`` per member beyond the first, as services add for coordination).
        premade_bonus: rating points per extra member, for ``average_plus`` (>= 0).
        parity: team games only: ``(wait_minutes, players)`` steps, the most the two teams'
            counts of players in parties of two or more may differ, relaxing with the longest
            wait in the game (None: no parity rule).
    """

    sizes: tuple[tuple[float, float], ...] = field(
        default=((1.0, 1.0),),
        metadata={"expected": "a non-empty list of [party_size, share] pairs"},
    )
    skill: str = "average"
    premade_bonus: float = 0.0
    parity: tuple[tuple[float, float], ...] | None = field(
        default=None, metadata={"expected": "a non-empty list of [wait_minutes, players] pairs"}
    )

    def __post_init__(self) -> None:
        problems: list[str | None] = []
        shown = [[int(n) if float(n).is_integer() else n, s] for n, s in self.sizes]
        sizes = [n for n, _ in self.sizes]
        if not self.sizes:
            problems.append("parties.sizes: expected a non-empty list of [party_size, share] pairs")
        elif not all(float(n).is_integer() and 1 <= n <= MAX_PARTY for n in sizes):
            problems.append(
                f"parties.sizes: a size is a whole number in 1..{MAX_PARTY}, got {shown}"
            )
        elif len(set(sizes)) != len(sizes):
            problems.append(f"parties.sizes: each size once, got {shown}")
        elif not all(math.isfinite(s) and s > 0 for _, s in self.sizes):
            problems.append(f"parties.sizes: a share is a number > 0, got {shown}")
        elif abs(math.fsum(s for _, s in self.sizes) - 1.0) > 1e-9:
            total = math.fsum(s for _, s in self.sizes)
            problems.append(f"parties.sizes: the shares must sum to 1, got {total:g} in {shown}")
        if self.skill not in SKILL_RULES:
            problems.append(
                f"parties.skill: expected one of {', '.join(SKILL_RULES)}, got {self.skill!r}"
                + did_you_mean(str(self.skill), list(SKILL_RULES))
            )
        if not (math.isfinite(self.premade_bonus) and self.premade_bonus >= 0):
            problems.append(
                f"parties.premade_bonus: expected a number >= 0, got {self.premade_bonus!r}"
            )
        problems.append(_parity_problem(self.parity))
        check(*problems)

    @property
    def largest(self) -> int:
        """The largest party size."""
        return int(max(n for n, _ in self.sizes))


def _parity_problem(steps: tuple[tuple[float, float], ...] | None) -> str | None:
    where = "parties.parity"
    if steps is None:
        return None
    shown = [list(step) for step in steps]
    waits = [w for w, _ in steps]
    if not steps:
        return f"{where}: expected a non-empty list of [wait_minutes, players] pairs, got []"
    if not all(math.isfinite(w) for w in waits) or waits[0] != 0.0:
        return f"{where}: the first step must start at wait 0, got {shown}"
    if any(b <= a for a, b in itertools.pairwise(waits)):
        return f"{where}: the waits must increase from step to step, got {shown}"
    if any(not (d >= 0) for _, d in steps):
        return f"{where}: a difference is a number of players >= 0, got {shown}"
    return None
