"""The text of a FlexMatch rule set turned into data: comments skipped, a key given twice located.

The GameLift guide's own example rule sets carry ``//`` comments, which strict JSON refuses, so
:func:`strip_comments` blanks ``//`` line comments and ``/* */`` block comments outside strings
(every character of a comment becomes a space, its line breaks stay, so a later JSON error keeps
its line and column). :func:`parse_json_text` parses the result with :mod:`json`, recording each
object that gives a key twice, and refuses the first such object by its JSON path
(``expansions[0]: the key 'target' is given twice; remove one``), with one exception: an element
of the rule set's ``expansions`` that gives exactly the keys ``target`` and ``steps``, each ``k``
times, alternately (``k`` expansions written into one object, as one of the guide's examples
does), is read as ``k`` expansions in the order written, each a :class:`SplitExpansion` that
remembers the object it came from. :func:`comment_lines` counts the lines holding a comment, for
``lobbysim rules show`` to note them (FlexMatch's service takes plain JSON).
:func:`load_json` reads a rule set's file through it, within a size and a depth, NaN and
Infinity refused, numbers too long to convert kept as text for the field to be named.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lobbysim.flexmatch.rules import LongNumber
from lobbysim.validation import ScenarioError, read_input_text

MAX_BYTES = 1_000_000  # a rule set is a few kilobytes
MAX_DEPTH = 50

_QUOTE = '"'
_BACKSLASH = "\\"
_LINE_BREAKS = "\r\n"


class _Twice(dict[str, Any]):
    """A JSON object that gives one or more keys twice (:attr:`twice`, in the order given;
    :attr:`pairs`, every key and value as written)."""

    twice: list[str]
    pairs: list[tuple[str, Any]]


class SplitExpansion(dict[str, Any]):
    """One of the ``of`` expansions written into one object of the rule set's ``expansions``
    (its ``target`` and ``steps`` given ``of`` times, alternately): the ``part``-th (from 1) in
    the order written; ``origin`` is the object's index in the file's ``expansions`` list."""

    origin: int
    part: int
    of: int


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
    marked.pairs = list(pairs)
    return marked


def _written_twice(pairs: list[tuple[str, Any]]) -> bool:
    """Whether an object's keys are ``target`` and ``steps``, each given two or more times,
    alternately (several expansions written into one object)."""
    keys = [key for key, _ in pairs]
    return (
        len(keys) >= 4
        and len(keys) % 2 == 0
        and set(keys) == {"target", "steps"}
        and all(a != b for a, b in itertools.pairwise(keys))
    )


def _split_expansions(data: Any) -> None:
    """Replace, in the rule set's ``expansions`` list, each object that writes several
    expansions into one (:func:`_written_twice`) by those expansions, in the order written."""
    expansions = data.get("expansions") if isinstance(data, dict) else None
    if not isinstance(expansions, list):
        return
    out: list[Any] = []
    for origin, item in enumerate(expansions):
        if not (isinstance(item, _Twice) and _written_twice(item.pairs)):
            out.append(item)
            continue
        of = len(item.pairs) // 2
        for part in range(of):
            given = dict(item.pairs[2 * part : 2 * part + 2])
            one = SplitExpansion(target=given["target"], steps=given["steps"])
            one.origin, one.part, one.of = origin, part + 1, of
            out.append(one)
    data["expansions"] = out


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
            children = [  # an expansion split from an object: that object's index
                (f"{path}[{v.origin if isinstance(v, SplitExpansion) else i}]", v)
                for i, v in enumerate(value)
            ]
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
    """Return the data of a JSON text that may carry comments, refusing a key given twice
    (but for several expansions written into one object of ``expansions``, read as those
    expansions: see the module docstring).

    Args:
        text: the JSON text; ``//`` and ``/* */`` comments outside strings are skipped.
        parse_int, parse_float, parse_constant: as :func:`json.loads` takes them.

    Raises:
        json.JSONDecodeError: the text is not JSON once its comments are skipped (its line and
            column are the original text's), or a ``/*`` comment is never closed.
        ValueError: an object gives a key twice (other than several expansions written into
            one): one line naming the object's JSON path and the key (``expansions[0]: the key
            'target' is given twice; remove one``).
    """
    data = json.loads(
        strip_comments(text),
        object_pairs_hook=_record_twice,
        parse_int=parse_int,
        parse_float=parse_float,
        parse_constant=parse_constant,
    )
    _split_expansions(data)
    found = _first_twice(data)
    if found is not None:
        path, key = found
        where = path or "the top-level object"
        raise ValueError(f"{where}: the key {key!r} is given twice; remove one")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _integer(text: str) -> int | LongNumber:
    """Return a JSON integer, or the text of one too long for Python to convert (over 4,300
    digits), for the field holding it to be named (:class:`LongNumber`)."""
    try:
        return int(text)
    except ValueError:
        return LongNumber(text)


def _real(text: str) -> float | LongNumber:
    """Return a JSON number with a fraction or an exponent, or its text if it is beyond a
    float's range (``1e400``: :class:`LongNumber`)."""
    value = float(text)
    return value if math.isfinite(value) else LongNumber(text)


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_DEPTH:
        return level
    if isinstance(value, dict):
        return max((_depth(v, level + 1) for v in value.values()), default=level)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level)
    return level


def load_json(path: str | Path) -> Any:
    """Return the data of a FlexMatch rule set's JSON file.

    Raises:
        ScenarioError: one line naming the file: it cannot be read, is not a regular file, is
            larger than :data:`MAX_BYTES`, is not UTF-8, is not JSON (with the line and column),
            gives a key twice (but for several expansions written into one object of
            ``expansions``, read as those expansions: :mod:`lobbysim.flexmatch.json_text`),
            nests deeper than :data:`MAX_DEPTH` or uses NaN or Infinity.
    """
    try:
        text = read_input_text(path, MAX_BYTES, encoding="utf-8-sig")
    except ValueError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    try:
        data = parse_json_text(
            text,
            parse_constant=_no_constant,
            parse_int=_integer,
            parse_float=_real,
        )
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            f"{path}: not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    except ValueError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    except RecursionError:
        raise ScenarioError(f"{path}: nested more than {MAX_DEPTH} levels deep") from None
    if _depth(data) > MAX_DEPTH:
        raise ScenarioError(f"{path}: nested more than {MAX_DEPTH} levels deep")
    return data
