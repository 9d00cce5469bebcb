"""The column mapping of a match log: its layout, its columns by role, its units and words.

:func:`read_mapping` makes a :class:`ColumnMapping` from a dict, a YAML file (``--columns FILE``)
or the name of a bundled mapping (lobbysim/calibration/mappings/lichess.yaml), checking every key
and value; :func:`resolve_columns` finds the file's column of each role from its header. What
the layouts, roles and units mean is :mod:`lobbysim.calibration.read`'s docstring;
docs/calibrate.md ("Match logs") is the user's account. :class:`LogError` is the one-line error of
every reader of a log.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lobbysim.yaml_input import YamlInputError, read_yaml_file

LAYOUTS = ("seats", "games_1v1")
TIME_KINDS = ("auto", "relative", "epoch", "iso")
TIME_UNITS = ("minutes", "seconds", "milliseconds")
#: The bundled column mappings, by name (``--columns lichess``).
MAPPINGS_DIR = Path(__file__).resolve().parent / "mappings"

#: The columns of each layout, by role (a mapping's ``columns`` keys; ``team`` is ``side``).
ROLES = {
    "seats": (
        "match_id",
        "player_id",
        "start",
        "end",
        "duration",
        "side",
        "result",
        "score",
        "rank",
        "region",
        "party_id",
        "queue_time",
    ),
    "games_1v1": ("match_id", "start", "end", "duration", "player_0", "player_1", "winner"),
}
ALIASES = {"team": "side"}
#: The values of a ``result`` column, lower case, with a result code: 0 win, 1 draw, 2 loss.
RESULT_WORDS = {
    **dict.fromkeys(("win", "won", "victory", "w", "1", "1.0"), 0),
    **dict.fromkeys(("draw", "drawn", "tie", "tied", "d", "0.5", ".5"), 1),
    **dict.fromkeys(("loss", "lost", "lose", "defeat", "l", "0", "0.0"), 2),
}
WIN, DRAW, LOSS = 0, 1, 2
_KEYS = (
    "layout",
    "columns",
    "times",
    "time_unit",
    "duration_unit",
    "queue_time_unit",
    "results",
    "sides",
    "draws",
    "exclude",
    "encoding",
    "free_for_all",
)


class LogError(ValueError):
    """A match log or a column mapping that cannot be read: one line, naming the file, the
    column or mapping key, and the value."""


@dataclass(frozen=True)
class ColumnMapping:
    """How to read a log: its layout, its column names by role, and its units (see
    :mod:`lobbysim.calibration.read`; :func:`read_mapping` makes one from a dict or a YAML file)."""

    layout: str = "seats"
    columns: Mapping[str, str] = field(default_factory=dict)
    times: str = "auto"
    time_unit: str = "minutes"
    duration_unit: str | None = None
    queue_time_unit: str | None = None
    results: Mapping[str, int] = field(default_factory=dict)
    sides: tuple[str, str] | str = ("0", "1")
    draws: tuple[str, ...] = ("", "draw")
    exclude: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    encoding: str = "utf-8-sig"
    free_for_all: bool = False


def _text(where: str, value: Any) -> str:
    if isinstance(value, bool) or value is None:
        raise LogError(
            f"{where}: expected text, got {value!r} (quote words YAML reads otherwise, such as "
            "'yes', 'no', 'on', 'off', 'null')"
        )
    if isinstance(value, str | int | float):
        return str(value)
    raise LogError(f"{where}: expected text, got {value!r}")


def _texts(where: str, value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, list | tuple) else [value]
    return tuple(_text(where, item) for item in items)


def _choice(where: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise LogError(f"{where}: expected one of {', '.join(choices)}, got {value!r}")
    return str(value)


def read_mapping(
    mapping: Mapping[str, Any] | str | os.PathLike[str] | ColumnMapping | None,
) -> ColumnMapping:
    """Return the column mapping ``mapping`` gives: a dict, a YAML file (``--columns FILE``),
    the name of a bundled mapping (``lichess``), or None for the defaults.

    Raises:
        LogError: an unknown key, layout, role, unit or time kind, or a value of the wrong
            type, naming the key and the value; a YAML file that cannot be read.
    """
    if mapping is None:
        return ColumnMapping()
    if isinstance(mapping, ColumnMapping):
        return mapping
    where = "mapping"
    if isinstance(mapping, str | os.PathLike):
        path = Path(mapping)
        bundled = MAPPINGS_DIR / f"{path}.yaml"
        if not path.exists() and str(mapping).isidentifier() and bundled.is_file():
            path = bundled
        where = str(mapping)
        try:
            data = read_yaml_file(path)
        except YamlInputError as exc:
            raise LogError(f"{where}: {exc}") from None
        if not isinstance(data, Mapping):
            raise LogError(f"{where}: expected a mapping of keys (layout, columns, ...)")
    elif isinstance(mapping, Mapping):
        data = mapping
    else:
        raise LogError(f"mapping: expected a dict or a YAML file, got {type(mapping).__name__}")
    unknown = [key for key in data if key not in _KEYS]
    if unknown:
        raise LogError(f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(_KEYS)}")
    layout = _choice(f"{where}: layout", data.get("layout", "seats"), LAYOUTS)
    columns: dict[str, str] = {}
    raw_columns = data.get("columns", {}) or {}
    if not isinstance(raw_columns, Mapping):
        raise LogError(f"{where}: columns: expected a mapping of role: column name")
    for role, name in raw_columns.items():
        key = ALIASES.get(role, role) if layout == "seats" else role
        if key not in ROLES[layout]:
            raise LogError(
                f"{where}: columns: unknown role {role!r} for layout {layout}; the roles are "
                f"{', '.join(ROLES[layout])}{' (team for side)' if layout == 'seats' else ''}"
            )
        if key in columns:
            raise LogError(f"{where}: columns: {role!r} gives the {key} column twice")
        columns[key] = _text(f"{where}: columns: {role}", name)
    for one_of in (("end", "duration"), ("result", "score", "rank")):
        given = [role for role in one_of if role in columns]
        if len(given) > 1:
            raise LogError(f"{where}: columns: give one of {', '.join(given)}, not both")
    times = _choice(f"{where}: times", data.get("times", "auto"), TIME_KINDS)
    unit = _choice(f"{where}: time_unit", data.get("time_unit", "minutes"), TIME_UNITS)
    units = {
        key: _choice(f"{where}: {key}", data[key], TIME_UNITS) if key in data else None
        for key in ("duration_unit", "queue_time_unit")
    }
    results: dict[str, int] = {}
    raw_results = data.get("results", {}) or {}
    if not isinstance(raw_results, Mapping):
        raise LogError(f"{where}: results: expected a mapping of win/loss/draw: [values]")
    for outcome, words in raw_results.items():
        code = {"win": WIN, "draw": DRAW, "loss": LOSS}.get(outcome)
        if code is None:
            raise LogError(f"{where}: results: expected win, loss or draw, got {outcome!r}")
        for word in _texts(f"{where}: results: {outcome}", words):
            results[word.strip().lower()] = code
    only_1v1 = [key for key in ("sides", "draws") if key in data and layout != "games_1v1"]
    if only_1v1:
        raise LogError(f"{where}: {only_1v1[0]}: only with layout: games_1v1")
    sides: tuple[str, str] | str = ("0", "1")
    if "sides" in data:
        if data["sides"] == "players":
            sides = "players"
        else:
            given_sides = _texts(f"{where}: sides", data["sides"])
            if len(given_sides) != 2 or given_sides[0].lower() == given_sides[1].lower():
                raise LogError(
                    f"{where}: sides: expected two different values of the winner column (side "
                    f"0's, side 1's) or 'players', got {data['sides']!r}"
                )
            sides = (given_sides[0], given_sides[1])
    draws = _texts(f"{where}: draws", data.get("draws", ["", "draw"]))
    exclude: dict[str, tuple[str, ...]] = {}
    raw_exclude = data.get("exclude", {}) or {}
    if not isinstance(raw_exclude, Mapping):
        raise LogError(f"{where}: exclude: expected a mapping of column: [values]")
    for column, values in raw_exclude.items():
        exclude[_text(f"{where}: exclude", column)] = _texts(f"{where}: exclude: {column}", values)
    free_for_all = data.get("free_for_all", False)
    if not isinstance(free_for_all, bool):
        raise LogError(f"{where}: free_for_all: expected true or false, got {free_for_all!r}")
    if free_for_all and (layout != "seats" or "side" in columns):
        raise LogError(f"{where}: free_for_all: only with layout seats and no side column")
    return ColumnMapping(
        layout=layout,
        columns=columns,
        times=times,
        time_unit=unit,
        duration_unit=units["duration_unit"],
        queue_time_unit=units["queue_time_unit"],
        results=results,
        sides=sides,
        draws=tuple(word.strip().lower() for word in draws),
        exclude=exclude,
        encoding=_text(f"{where}: encoding", data.get("encoding", "utf-8-sig")),
        free_for_all=free_for_all,
    )


def bundled_matches(header: list[str]) -> list[str]:
    """Return the names of the bundled mappings (:data:`MAPPINGS_DIR`) every column of which
    the header has: what to suggest when a file's columns are not the default layout's."""
    have = set(header)
    names = []
    for file in sorted(MAPPINGS_DIR.glob("*.yaml")):
        try:
            columns = read_mapping(file).columns
        except LogError:  # pragma: no cover - the bundled mappings are tested
            continue
        if columns and set(columns.values()) <= have:
            names.append(file.stem)
    return names


def resolve_columns(mapping: ColumnMapping, header: list[str], path: str) -> dict[str, str]:
    """Return the file's column of each role the log uses (see :mod:`lobbysim.calibration.read`)."""
    have = set(header)
    listed = ", ".join(header) if header else "no columns"

    def missing(what: str) -> LogError:
        hint = "".join(
            f"; its header is that of the bundled mapping {name!r}: give --columns {name}"
            for name in bundled_matches(header)
        )
        return LogError(f"{path}: no column {what}; the file has: {listed}{hint}")

    plan: dict[str, str] = {}
    for role, name in mapping.columns.items():
        if name not in have:
            raise missing(f"{name!r} (columns: {role})")
        plan[role] = name
    layout = mapping.layout
    required = (
        ["match_id", "player_id", "start"]
        if layout == "seats"
        else ["match_id", "start", "player_0", "player_1", "winner"]
    )
    for role in required:
        if role not in plan:
            if role not in have:
                raise missing(repr(role))
            plan[role] = role
    groups: list[tuple[str, ...]] = [("end", "duration")]
    if layout == "seats":
        groups.append(("result", "score", "rank"))
        if not mapping.free_for_all and "side" not in plan:
            groups.append(("team", "side"))
    for group in groups:
        if any(role in plan for role in group):
            continue
        found = next((name for name in group if name in have), None)
        if found is None:
            raise missing(" or ".join(repr(name) for name in group))
        plan[ALIASES.get(found, found)] = found
    if layout == "seats":
        for role in ("region", "party_id", "queue_time"):
            if role not in plan and role in have:
                plan[role] = role
    for column in mapping.exclude:
        if column not in have:
            raise missing(f"{column!r} (exclude)")
    return plan
