"""The scenarios shipped inside the package, found by name, and the plug-in files they name.

The bundled scenarios are the ``*.yaml`` files of ``lobbysim/scenarios/`` (the repository's
top-level ``scenarios`` links there), read with :mod:`importlib.resources`, so that an installed
lobbysim runs ``lobbysim run quickstart`` from any folder. :func:`find_scenario` turns what a user
typed into a file: an existing path always wins, and so does ``./NAME.yaml`` for a bare ``NAME``
(the file ``lobbysim init NAME`` writes, edited); otherwise a bundled scenario's name
(``quickstart`` or ``quickstart.yaml``). When a local file wins over a bundled scenario of the
same name, :func:`local_file_note` is the line the commands print to say which file they read.
A plug-in file a scenario names (``examples/custom_arrivals.py:Evenings``)
is found relative to the current folder, as always, and failing that relative to the scenario
file's own folder (:func:`resolve_plugin_files`), which is how a bundled scenario finds the
example it ships with (``lobbysim/scenarios/examples/``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

from lobbysim.registry import did_you_mean
from lobbysim.validation import ScenarioError
from lobbysim.yaml_input import YamlInputError, read_yaml_file

#: ``path/to/file.py:Class``: a plug-in class in a file rather than an installed module.
_PLUGIN_FILE = re.compile(r"^(?P<file>[^:]+\.py):(?P<name>[A-Za-z_][\w.]*)$")
_SUFFIXES = (".yaml", ".yml")


def bundled_folder() -> Path:
    """Return the folder of the bundled scenarios (inside the installed package)."""
    return Path(str(files("lobbysim").joinpath("scenarios")))


def bundled_scenarios() -> dict[str, Path]:
    """Return every bundled scenario's file by name (its file name without ``.yaml``), sorted."""
    folder = bundled_folder()
    return {path.stem: path for path in sorted(folder.glob("*.yaml")) if path.is_file()}


def _local_file(path: Path) -> Path | None:
    """Return the file in the current folder a bare name means: the name as given, else
    ``NAME.yaml`` or ``NAME.yml`` (for a name without one of those suffixes), if it exists and
    is not a folder."""
    candidates = [path]
    if path.suffix not in _SUFFIXES:
        candidates += [path.with_name(path.name + suffix) for suffix in _SUFFIXES]
    return next((c for c in candidates if c.exists() and not c.is_dir()), None)


def find_scenario(name_or_path: str | Path) -> Path:
    """Return the scenario file a user means: an existing path, else a bundled scenario's file.

    A name is a bundled scenario's, with or without ``.yaml``; a file in the current folder
    always wins over a name: ``NAME`` as given, or ``NAME.yaml`` (``.yml``) for a bare ``NAME``,
    so that after ``lobbysim init quickstart`` and an edit, ``lobbysim run quickstart`` reads your
    ``quickstart.yaml`` (:func:`local_file_note` says so); a folder of a bundled scenario's name
    does not.

    Raises:
        ScenarioError: neither a file nor a bundled scenario's name, when the argument is a bare
            name (no folder part); one line listing the bundled names. A missing file given with
            a folder is returned as it is, for the reader to report.
    """
    path = Path(name_or_path)
    if (path.exists() and not path.is_dir()) or len(path.parts) != 1:
        return path
    local = _local_file(path)
    if local is not None:
        return local
    bundled = bundled_scenarios()
    stem = path.stem if path.suffix in _SUFFIXES else path.name
    if stem in bundled:
        return bundled[stem]  # a folder of that name is not a scenario: the name is meant
    if path.exists():
        return path  # a folder: for the reader to report
    raise ScenarioError(
        f"{name_or_path}: no such file, and no bundled scenario of that name"
        f"{did_you_mean(stem, list(bundled))}; bundled scenarios: {', '.join(bundled)}"
    )


def local_file_note(name_or_path: str | Path) -> str | None:
    """Return the line saying which file a scenario argument names when a file in the current
    folder wins over a bundled scenario of that name (or ``NAME`` was read as ``NAME.yaml``),
    else None: ``scenario: quickstart.yaml, the file in this folder (not the bundled scenario
    quickstart, .../lobbysim/scenarios/quickstart.yaml)``."""
    path = Path(name_or_path)
    if len(path.parts) != 1:
        return None
    local = _local_file(path)
    if local is None:
        return None
    stem = local.stem if local.suffix in _SUFFIXES else local.name
    bundled = bundled_scenarios().get(stem)
    if bundled is None and local == path:
        return None
    shadowed = f" (not the bundled scenario {stem}, {bundled})" if bundled is not None else ""
    return f"scenario: {local}, the file in this folder{shadowed}"


def scenario_headline(path: Path) -> str:
    """Return a scenario file's one-line summary: its first line if that reads
    ``# <name>: <summary>`` (as in every bundled scenario), else its ``description`` on one line
    (empty if it has neither or cannot be read)."""
    text = path.read_text(encoding="utf-8")
    first = text.splitlines()[0] if text else ""
    match = re.match(rf"#\s*{re.escape(path.stem)}:\s*(.+)", first)
    if match:
        return match.group(1).strip()
    try:
        data = read_yaml_file(path)
    except YamlInputError:
        return ""
    description = data.get("description") if isinstance(data, dict) else None
    return " ".join(str(description).split()) if description else ""


def _plugin_files(data: Any) -> Iterator[str]:
    """Yield every relative ``file.py`` named by a ``file.py:Class`` string in scenario data,
    and every relative FlexMatch rule set (``matchmaker.rules: {flexmatch: FILE}``)."""
    if isinstance(data, str):
        match = _PLUGIN_FILE.match(data)
        if match and not Path(match.group("file")).is_absolute():
            yield match.group("file")
    elif isinstance(data, dict):
        rules = data.get("flexmatch")
        if isinstance(rules, str) and not Path(rules).is_absolute():
            yield rules
        for value in data.values():
            yield from _plugin_files(value)
    elif isinstance(data, list | tuple):
        for value in data:
            yield from _plugin_files(value)


def plugin_files(data: Any) -> list[str]:
    """Return the relative plug-in files (``examples/custom_arrivals.py``) and FlexMatch rule
    sets scenario data names."""
    return list(dict.fromkeys(_plugin_files(data)))


def resolve_plugin_files(data: Any, folder: Path) -> Any:
    """Return scenario data whose relative plug-in files, when not found from the current folder
    but found from ``folder`` (the scenario file's), are named by their absolute path instead.

    A file found from the current folder is left as it is, so runs from the repository's folder
    are unchanged; one found nowhere is left for the plug-in loader to report.
    """
    if isinstance(data, str):
        match = _PLUGIN_FILE.match(data)
        if match is None:
            return data
        file = Path(match.group("file"))
        if file.is_absolute() or file.is_file() or not (folder / file).is_file():
            return data
        return f"{(folder / file).absolute()}:{match.group('name')}"
    if isinstance(data, dict):
        return {key: resolve_plugin_files(value, folder) for key, value in data.items()}
    if isinstance(data, list):
        return [resolve_plugin_files(value, folder) for value in data]
    return data
