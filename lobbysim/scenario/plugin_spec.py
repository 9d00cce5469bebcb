"""A plug-in as a scenario names it: a registered name or a user class, with its parameters."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PluginSpec:
    """A plug-in by name (registered, or "package.module:Class") with its parameters."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
