"""The quality threshold of a matchmaking pass, relaxed as players wait.

A pair of waiting players may meet when its match quality clears the threshold for the longer
wait of the two. The schedule is a step function of the minutes waited, given in a scenario as
``matchmaker.threshold: [[wait, min_quality], ...]``.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from lobbysim.policies.base import FloatArray


@dataclass(frozen=True)
class ThresholdSchedule:
    """Minimum match quality as a step function of the time waited.

    ``steps`` are ``(wait_minutes, min_quality)`` pairs with increasing waits starting at 0; the
    threshold after waiting w minutes is the ``min_quality`` of the last step with
    ``wait_minutes <= w``. Example: ``((0, 0.8), (1, 0.5), (3, 0.0))``: at first only good matches,
    after a minute fair ones, after three anything.
    """

    steps: tuple[tuple[float, float], ...] = ((0.0, 0.0),)
    _waits: FloatArray = field(init=False, repr=False, compare=False)
    _qualities: FloatArray = field(init=False, repr=False, compare=False)
    _wait_steps: tuple[float, ...] = field(init=False, repr=False, compare=False)
    #: ``(until, quality)``: the first step's quality holds for waits in ``[0, until)`` (the
    #: second step's wait, or inf), where :meth:`at_one` needs no search.
    first_step: tuple[float, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        steps = tuple((float(w), float(q)) for w, q in self.steps)
        object.__setattr__(self, "steps", steps)
        if not steps:
            raise ValueError("threshold steps must not be empty")
        if steps[0][0] != 0.0:
            raise ValueError(f"the first threshold step must start at wait 0, got {steps[0][0]}")
        waits = [w for w, _ in steps]
        if any(b <= a for a, b in itertools.pairwise(waits)):
            raise ValueError(f"threshold step waits must increase, got {waits}")
        for w, q in steps:
            if not 0.0 <= q <= 1.0:
                raise ValueError(f"threshold min_quality must be in [0, 1], got {q} at wait {w}")
        # the steps as arrays, made once (read-only)
        waits_array = np.array(waits)
        qualities = np.array([q for _, q in steps])
        waits_array.flags.writeable = qualities.flags.writeable = False
        object.__setattr__(self, "_waits", waits_array)
        object.__setattr__(self, "_qualities", qualities)
        object.__setattr__(self, "_wait_steps", tuple(waits))
        until = waits[1] if len(waits) > 1 else math.inf
        object.__setattr__(self, "first_step", (until, steps[0][1]))

    def at(self, waited: FloatArray) -> FloatArray:
        """Return the minimum quality for players who have waited ``waited`` minutes."""
        return self._qualities[np.searchsorted(self._waits, np.asarray(waited), side="right") - 1]

    def at_one(self, waited: float) -> float:
        """:meth:`at` for one wait, on floats (``bisect_right`` is ``searchsorted``'s
        ``side="right"``, NaN included: it sorts after every step)."""
        return self.steps[bisect.bisect_right(self._wait_steps, waited) - 1][1]
