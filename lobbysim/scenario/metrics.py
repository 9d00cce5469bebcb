"""The scenario's ``metrics`` section: settings of the measures a run reports.

See :class:`MetricsConfig`; the measures are :mod:`lobbysim.stats.metrics`'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from lobbysim.validation import check

#: The default band of predicted win chances a team game counts as fair in: 45% to 55%.
FAIR_BAND = (0.45, 0.55)


@dataclass(frozen=True)
class MetricsConfig:
    """Settings of the measures a run reports.

    Attributes:
        fair_band: ``[low, high]``: a team game counts as fair in ``fair_band_share`` when the
            driving rater's predicted chance that its stronger team wins, at its start, is
            within this band (``0.5 <= high``, ``low <= 0.5``, inclusive; default 45% to 55%,
            as services state their targets).
    """

    fair_band: tuple[float, float] = field(
        default=FAIR_BAND, metadata={"expected": "[low, high], two chances around 0.5"}
    )

    def __post_init__(self) -> None:
        low, high = self.fair_band
        fine = all(math.isfinite(x) for x in (low, high)) and 0.0 <= low <= 0.5 <= high <= 1.0
        check(
            None
            if fine
            else "metrics.fair_band: expected [low, high] with 0 <= low <= 0.5 <= high <= 1, "
            f"got {[low, high]}"
        )
