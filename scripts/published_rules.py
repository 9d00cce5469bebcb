"""Read every FlexMatch rule set in a folder as ``lobbysim rules show`` does, one line per file.

Usage::

    python scripts/published_rules.py FOLDER

Each ``*.json`` file in FOLDER (sorted by name) is read by
:func:`lobbysim.commands.rules.show_lines`, the function behind ``lobbysim rules show FILE``.
A file that loads prints ``FILE: loads`` (and how many comment lines were skipped, if any); a
refused one prints ``FILE: refused:`` and the first problem line lobbysim gives (without the
file's name), with how many more lines follow. The last line counts them: ``N of M load as
published``. A folder that is missing or holds no ``*.json`` file is one line on standard error,
exit 2. The README of ``tests/fixtures/flexmatch/modelled/`` keeps the figures this prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lobbysim.commands.rules import show_lines  # noqa: E402
from lobbysim.scenario import ScenarioError  # noqa: E402

_NOTE = "comment lines skipped (FlexMatch's service takes plain JSON)"


def outcome(path: Path) -> tuple[bool, str]:
    """Return whether ``path`` loads as ``lobbysim rules show`` reads it, and its line's text.

    Args:
        path: a FlexMatch rule set's JSON file.

    Returns:
        ``(True, "loads")`` (with the comment lines skipped, if any), or ``(False, "refused:
        LINE")`` with the first problem line, less the file's name, and how many more follow.
    """
    try:
        lines = show_lines(path)
    except ScenarioError as exc:
        problems = list(exc.problems)
        first = problems[0].removeprefix(f"{path}: ")
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        return False, f"refused: {first}{more}"
    last = lines[-1]  # show_lines ends with the note on comments, when there are any
    note = f" ({last.split(' (', 1)[0]})" if last.endswith(_NOTE) else ""
    return True, f"loads{note}"


def report(folder: Path) -> list[str]:
    """Return the lines for every ``*.json`` file in ``folder`` and the count line.

    Args:
        folder: a folder of FlexMatch rule sets.

    Raises:
        ValueError: the folder is missing or holds no ``*.json`` file.
    """
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a folder")
    files = sorted(folder.glob("*.json"))
    if not files:
        raise ValueError(f"{folder}: holds no *.json file")
    lines, loading = [], 0
    for path in files:
        loads, text = outcome(path)
        loading += loads
        lines.append(f"{path.name}: {text}")
    lines.append(f"{loading} of {len(files)} load as published")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the folder's lines; return the exit status (2 for a bad folder)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python scripts/published_rules.py FOLDER", file=sys.stderr)
        return 2
    try:
        lines = report(Path(args[0]))
    except ValueError as exc:
        print(f"published_rules: error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
