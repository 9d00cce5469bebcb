"""The text of a FlexMatch rule set turned into data: comments skipped, a key given twice located.

The GameLift guide's own example rule sets carry ``//`` comments, which strict JSON refuses, so
:func:`strip_comments` blanks ``//`` line comments and ``/* */`` block comments outside strings
(every character of a comment becomes a space, its line breaks stay, so a later JSON error keeps
its line and column). :func:`parse_json_text` parses the result with :mod:`json`, recording each
object that gives a key twice, and refuses the first such object by its JSON path
(``expansions[0]: the key 'target' is given twice; remove one``). :func:`comment_lines` counts the
lines holding a comment, for ``lobbysim rules show`` to note them (FlexMatch's service takes plain
JSON). :func:`lobbysim.flexmatch.read.load_json` reads a rule set's file through it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_QUOTE = '"'
_BACKSLASH = "\\"
_LINE_BREAKS = "\r\n"


class _Twice(dict[str, Any]):
    """A JSON object that gives one or more keys twice (:attr:`twice`, in the order given)."""

    twice: list[str]


def _blank(text: str) -> str:
    """Return ``text`` with every character but a line break turned into a space."""
    return "".join(c if c in _LINE_BREAKS else " " for c in text)


def _scan(text: str) -> tuple[str, set[int]]:
    """Return ``text`` with its comments blanked and the (0-based) lines holding a comment.

    Raises:
        json.JSONDecodeError: a ``/*`` comment is never closed (at its opening).
    """
    out: list[str] = []
    lines: set[int] = set()
    line = counted = 0  # the line of text[counted]
    i, n = 0, len(text)
    start = 0  # the start of the run of text copied as it is
    while i < n:
        c = text[i]
        if c == _QUOTE:  # a string: skip to its closing quote, over escapes
            i += 1
            while i < n and text[i] != _QUOTE and text[i] not in _LINE_BREAKS:
                i += 2 if text[i] == _BACKSLASH else 1
            i += 1 if i < n and text[i] == _QUOTE else 0
            continue
        if c != "/" or i + 1 >= n or text[i + 1] not in "/*":
            i += 1
            continue
        out.append(text[start:i])
        if text[i + 1] == "/":
            end = i + 2
            while end < n and text[end] not in _LINE_BREAKS:
                end += 1
        else:
            close = text.find("*/", i + 2)
            if close < 0:
                raise json.JSONDecodeError("a /* comment is never closed", text, i)
            end = close + 2
        line += text.count("\n", counted, i)
        counted = i
        lines.update(range(line, line + text.count("\n", i, end) + 1))
        out.append(_blank(text[i:end]))
        i = start = end
    out.append(text[start:])
    return "".join(out), lines


def strip_comments(text: str) -> str:
    """Return ``text`` with its ``//`` and ``/* */`` comments outside strings blanked.

    Every character of a comment becomes a space and its line breaks stay, so each remaining
    character keeps its line and column.

    Args:
        text: a JSON text that may carry comments.

    Raises:
        json.JSONDecodeError: a ``/*`` comment is never closed (at its opening).
    """
    return _scan(text)[0]


def comment_lines(text: str) -> int:
    """Return how many lines of ``text`` hold a comment (a block comment counts each line).

    Args:
        text: a JSON text that may carry comments.

    Raises:
        json.JSONDecodeError: a ``/*`` comment is never closed (at its opening).
    """
    return len(_scan(text)[1])


def _record_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Return a JSON object's pairs as a dict, a :class:`_Twice` if a key comes twice."""
    out: dict[str, Any] = {}
    twice: list[str] = []
    for key, value in pairs:
        if key in out and key not in twice:
            twice.append(key)
        out[key] = value
    if not twice:
        return out
    marked = _Twice(out)
    marked.twice = twice
    return marked


def _first_twice(data: Any) -> tuple[str, str] | None:
    """Return the JSON path of the first object (in the text's order) giving a key twice, and
    the key; None if there is none."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Twice):
            return path, value.twice[0]
        if isinstance(value, dict):
            children = [(f"{path}.{k}" if path else str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            children = [(f"{path}[{i}]", v) for i, v in enumerate(value)]
        else:
            continue
        stack.extend(reversed(children))
    return None


def parse_json_text(
    text: str,
    *,
    parse_int: Callable[[str], Any] | None = None,
    parse_float: Callable[[str], Any] | None = None,
    parse_constant: Callable[[str], Any] | None = None,
) -> Any:
    """Return the data of a JSON text that may carry comments, refusing a key given twice.

    Args:
        text: the JSON text; ``//`` and ``/* */`` comments outside strings are skipped.
        parse_int, parse_float, parse_constant: as :func:`json.loads` takes them.

    Raises:
        json.JSONDecodeError: the text is not JSON once its comments are skipped (its line and
            column are the original text's), or a ``/*`` comment is never closed.
        ValueError: an object gives a key twice: one line naming the object's JSON path and
            the key (``expansions[0]: the key 'target' is given twice; remove one``).
    """
    data = json.loads(
        strip_comments(text),
        object_pairs_hook=_record_twice,
        parse_int=parse_int,
        parse_float=parse_float,
        parse_constant=parse_constant,
    )
    found = _first_twice(data)
    if found is not None:
        path, key = found
        where = path or "the top-level object"
        raise ValueError(f"{where}: the key {key!r} is given twice; remove one")
    return data
