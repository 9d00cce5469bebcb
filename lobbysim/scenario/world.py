"""The scenario's world: data centres, the regions players come from, and their latencies.

See :class:`WorldConfig`; the engine's side is :mod:`lobbysim.sim.world`, the latency models
:mod:`lobbysim.players.latency`, and docs/model.md, section 8, the model.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from lobbysim.registry import did_you_mean
from lobbysim.scenario.plugin_spec import PluginSpec
from lobbysim.validation import check

_LABEL = re.compile(r"[A-Za-z0-9_-]{1,40}")  # a data centre or region name


#: How a game's data centre is chosen among those within every seat's limits.
HOST_RULES = ("lowest_worst", "lowest_mean")
MAX_UTC_OFFSET = (-12.0, 14.0)


@dataclass(frozen=True)
class RegionConfig:
    """A region players live in.

    Attributes:
        name: the region's name (a label: letters, digits, ``_``, ``-``).
        share: the share of the players from it (the shares of all regions sum to 1).
        utc_offset_hours: its time zone: a player base's members visit by the visit model's
            time of day in their own zone, so regions are busy at different hours.
    """

    name: str
    share: float
    utc_offset_hours: float = 0.0


@dataclass(frozen=True)
class WorldConfig:
    """Where players are: data centres, regions, latencies (docs/model.md, "Regions and
    latency").

    Attributes:
        data_centres: the data centres games are hosted in, by name.
        regions: the regions players come from, with their shares and time zones.
        latency: the latency model (default ``matrix``: a region-to-data-centre base matrix in
            ms with per-player lognormal spread; see :mod:`lobbysim.players.latency`).
        host: how a game's data centre is chosen among those within every seat's limits:
            ``lowest_worst`` (the lowest latency of the worst seat) or ``lowest_mean``.
    """

    data_centres: tuple[str, ...] = ()
    regions: tuple[RegionConfig, ...] = ()
    latency: PluginSpec = field(default_factory=lambda: PluginSpec("matrix"))
    host: str = "lowest_worst"

    def __post_init__(self) -> None:
        problems: list[str | None] = []
        for where, names in (
            ("world.data_centres", list(self.data_centres)),
            ("world.regions", [r.name for r in self.regions]),
        ):
            if not names:
                problems.append(f"{where}: expected at least one, got none")
            bad = [n for n in names if not _LABEL.fullmatch(n)]
            if bad:
                problems.append(
                    f"{where}: a name is letters, digits, _ and - (at most 40), got {bad[0]!r}"
                )
            dup = sorted({n for n in names if names.count(n) > 1})
            if dup:
                problems.append(f"{where}: each name once, got {dup[0]!r} twice")
        for i, region in enumerate(self.regions):
            where = f"world.regions[{i}]"
            if not (math.isfinite(region.share) and 0.0 < region.share <= 1.0):
                problems.append(f"{where}.share: expected a number in (0, 1], got {region.share!r}")
            low, high = MAX_UTC_OFFSET
            if not (
                math.isfinite(region.utc_offset_hours) and low <= region.utc_offset_hours <= high
            ):
                problems.append(
                    f"{where}.utc_offset_hours: expected a number in [{low:g}, {high:g}], "
                    f"got {region.utc_offset_hours!r}"
                )
        total = math.fsum(r.share for r in self.regions)
        finite = all(math.isfinite(r.share) for r in self.regions)
        if self.regions and finite and abs(total - 1.0) > 1e-9:
            problems.append(
                "world.regions: the shares must sum to 1, got "
                f"{' + '.join(f'{r.share:g}' for r in self.regions)} = {total:g}"
            )
        if self.host not in HOST_RULES:
            problems.append(
                f"world.host: expected one of {', '.join(HOST_RULES)}, got {self.host!r}"
                + did_you_mean(str(self.host), list(HOST_RULES))
            )
        check(*problems)

    @property
    def region_names(self) -> tuple[str, ...]:
        """The regions' names, in order."""
        return tuple(r.name for r in self.regions)
