"""User plug-ins a scenario names, checked without importing them (``lobbysim validate``).

A plug-in may be a user class, ``"path/to/file.py:Class"`` or ``"package.module:Class"``
(:func:`lobbysim.registry.load_object` imports it). Importing runs the module's code, so
``lobbysim validate`` on a folder someone sent you would run their Python; it checks such a
reference with :func:`reference_problem` instead, which only looks: a file must exist and be a
regular ``.py`` file, the class and module names must be Python identifiers, and a module's
top-level package must be found by :func:`importlib.util.find_spec`, which locates a top-level
module without executing it. Only the top level is looked up: finding ``package.module`` would
import (run) ``package`` first, so whether ``module`` exists in it, and whether the class exists
and is a plug-in of the right family, is known only once imported (``validate
--import-plugins``, and ``run``, ``compare`` and ``sweep``, which must import them).
"""

from __future__ import annotations

import importlib.util
import keyword
from pathlib import Path

from lobbysim.validation import input_file_problem

_NO_LIMIT = 2**62  # a plug-in file's size is not bounded here: the import reads it


def is_user_class(name: str) -> bool:
    """Return whether a plug-in name is a user class (``module:Class`` or ``file.py:Class``)."""
    return ":" in name


def _identifier(text: str) -> bool:
    return text.isidentifier() and not keyword.iskeyword(text)


def reference_problem(name: str) -> str | None:
    """Return what is wrong with a user class reference, found without importing it, or None.

    ``file.py:Class``: the file (relative to the current folder, as the loader reads it) must
    exist and be a regular file, not a folder, device or pipe; ``package.module:Class``: every
    dotted part must be an identifier and the top-level package must be installed (found by
    :func:`importlib.util.find_spec` without running it). The class name must be an identifier.
    """
    module_name, _, attr = name.rpartition(":")
    if not module_name or not attr:
        return f"'{name}' is not of the form 'package.module:Class' or 'file.py:Class'"
    if not _identifier(attr):
        return f"'{attr}' in '{name}' is not a class name (a Python identifier)"
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.exists():
            return f"no file '{module_name}' for '{name}' (relative to {Path.cwd()})"
        problem = input_file_problem(path, _NO_LIMIT)
        return None if problem is None else f"'{module_name}' for '{name}': {problem}"
    parts = module_name.split(".")
    if not all(_identifier(part) for part in parts):
        return f"'{module_name}' in '{name}' is not a module name (dotted Python identifiers)"
    try:
        found = importlib.util.find_spec(parts[0])  # top level only: executes nothing
    except (ImportError, ValueError) as exc:
        return f"cannot find module '{parts[0]}' for '{name}': {exc}"
    if found is None:
        return f"no module '{parts[0]}' for '{name}' (not installed, or not on the path)"
    return None
