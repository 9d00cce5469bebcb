"""A user-written arrival model for lobbysim: more players in the evening."""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from lobbysim.players.arrivals import Arrivals


@dataclass(frozen=True)
class Evenings:
    """Poisson arrivals: ``base`` players a minute, ``peak`` times as many 18:00-23:00."""

    name: ClassVar[str] = "evenings"
    base: float = 2.0
    peak: float = 3.0

    def __post_init__(self) -> None:
        if not (self.base > 0 and self.peak >= 1):
            raise ValueError(f"need base > 0 and peak >= 1, got {self.base}, {self.peak}")

    def sample(self, rng: np.random.Generator, start: float, end: float) -> Arrivals:
        top = self.base * self.peak  # thinning: draw at the top rate, keep rate/top of them
        times = np.sort(rng.uniform(start, end, rng.poisson(top * (end - start))))
        hour = (times / 60.0) % 24
        rate = np.where((hour >= 18) & (hour < 23), top, self.base)
        return Arrivals.of(times[rng.random(times.size) < rate / top])
