"""``lobbysim init``: copy a bundled scenario out of the package, to edit and run it.

:func:`init_scenario` copies the scenario's file unchanged (its comments explain every field) and
the plug-in files it names (``custom_arrivals`` needs ``examples/custom_arrivals.py``), next to
it under the same relative path, where :func:`lobbysim.scenario.bundled.resolve_plugin_files`
finds them. It never overwrites a file: everything is checked before anything is written, and
each file is written as every output file is (:func:`lobbysim.records.outputs.write_output_file`).
The
JSON Schema the scenario's modeline names (``scenario.schema.json``, for editors) is copied next
to it too, unless a file of that name is there already (an editor's help, never an error).
:func:`bundled_list` lists the bundled scenarios with their one-line summaries.
"""

from __future__ import annotations

import functools
from pathlib import Path

from lobbysim.records.outputs import OutputTargetError, write_output_file
from lobbysim.registry import did_you_mean
from lobbysim.scenario.bundled import (
    bundled_scenarios,
    plugin_files,
    scenario_headline,
)
from lobbysim.scenario.schema import SCHEMA_FILE
from lobbysim.yaml_input import read_yaml_file


class InitError(ValueError):
    """A name that is not a bundled scenario's, or a file that would be overwritten."""


def bundled_list() -> list[tuple[str, str]]:
    """Return each bundled scenario's name and one-line summary, sorted by name."""
    return [(name, scenario_headline(path)) for name, path in bundled_scenarios().items()]


def init_scenario(name: str, to: str | Path | None = None) -> list[Path]:
    """Copy the bundled scenario ``name`` to ``to`` (default ``./<name>.yaml``); return the files
    written, the scenario first.

    The plug-in files it names are copied under the same relative paths, and the JSON Schema
    its ``# yaml-language-server: $schema=scenario.schema.json`` comment names is copied next to
    it when no file of that name is there (it is not among the files returned: it is an
    editor's help, not part of the scenario).

    Args:
        name: a bundled scenario's name, with or without ``.yaml``.
        to: the file to write, or an existing folder to write ``<name>.yaml`` into; missing
            parent folders are created.

    Raises:
        InitError: ``name`` is not bundled (the message lists the bundled names), or the
            scenario or one of its plug-in files exists already with other content.
    """
    bundled = bundled_scenarios()
    stem = name[: -len(".yaml")] if name.endswith(".yaml") else name
    if stem not in bundled:
        raise InitError(
            f"no bundled scenario '{name}'{did_you_mean(stem, list(bundled))}; "
            f"bundled scenarios: {', '.join(bundled)}"
        )
    source = bundled[stem]
    target = Path(f"{stem}.yaml") if to is None else Path(to)
    if target.is_dir():
        target = target / f"{stem}.yaml"
    copies = [(source, target)] + [
        (source.parent / file, target.parent / file)
        for file in plugin_files(read_yaml_file(source))
        if (source.parent / file).is_file()
    ]
    if target.exists():
        raise InitError(f"{target} exists already: not overwritten (choose another file with --to)")
    for origin, copy in copies[1:]:
        if copy.exists() and copy.read_bytes() != origin.read_bytes():
            raise InitError(
                f"{copy} exists already with other content: not overwritten (the scenario "
                f"needs the plug-in file {origin.name}; choose another folder with --to)"
            )
    written = []
    for origin, copy in copies:
        if copy.exists():  # a plug-in file already there, identical
            continue
        content = origin.read_bytes()
        try:
            copy.parent.mkdir(parents=True, exist_ok=True)
            # never over a file, even one made meanwhile; never through a link
            write_output_file(
                copy, functools.partial(Path.write_bytes, data=content), option="--to"
            )
        except OutputTargetError as exc:
            raise InitError(str(exc)) from None
        except OSError as exc:
            raise InitError(f"{copy}: cannot write it: {exc.strerror or exc}") from None
        written.append(copy)
    _copy_schema(source.parent / SCHEMA_FILE, target.parent / SCHEMA_FILE)
    return written


def _copy_schema(origin: Path, copy: Path) -> None:
    """Copy the scenario schema next to the scenario, unless a file of its name is there (an
    older copy, or the user's: never overwritten) or it cannot be written (the scenario is
    complete without it)."""
    if not origin.is_file():
        return
    try:
        handle = copy.open("xb")
    except OSError:
        return
    try:
        with handle:
            handle.write(origin.read_bytes())
    except OSError:
        copy.unlink(missing_ok=True)  # ours, half-written
