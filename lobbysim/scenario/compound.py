"""A compound rule's statement (FlexMatch's ``compound`` rule type, lobbysim's kind
``compound``): ``and(A, B, ...)``, ``or(...)``, ``xor(...)`` (exactly one true) and
``not(A)`` over the names of earlier rules, nested at will.

:func:`parse_statement` reads one into a tree, which :mod:`lobbysim.sim.rule_kinds` evaluates
from the named rules' truth values and :mod:`lobbysim.scenario.rules` checks against the rule
set.
"""

from __future__ import annotations

import re
from typing import Any

from lobbysim.registry import did_you_mean

_STATEMENT = re.compile(r"\s*(and|or|xor|not)\s*\(|\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*|\s*([,)])")


def parse_statement(text: str) -> tuple[Any, list[str]]:
    """Return a compound rule's statement as a tree (a rule's name, or ``(op, [children])``)
    and the names it uses, in order.

    Raises:
        ValueError: one line saying what is wrong with the statement.
    """
    tokens: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        match = _STATEMENT.match(text, at)
        if match is None:
            raise ValueError(f"cannot read {text[at : at + 20]!r} at character {at}")
        if match[1]:
            tokens.append(("op", match[1]))
        elif match[2]:
            tokens.append(("name", match[2]))
        else:
            tokens.append((match[3], match[3]))
        at = match.end()
    names: list[str] = []
    position = 0

    def node() -> Any:
        nonlocal position
        if position >= len(tokens):
            raise ValueError("ends too early")
        what, word = tokens[position]
        position += 1
        if what == "name":
            names.append(word)
            return word
        if what != "op":
            raise ValueError(f"unexpected {word!r}")
        children = [node()]
        while position < len(tokens) and tokens[position][0] == ",":
            position += 1
            children.append(node())
        if position >= len(tokens) or tokens[position][0] != ")":
            raise ValueError(f"{word}( is not closed")
        position += 1
        if word == "not" and len(children) != 1:
            raise ValueError(f"not(...) takes one argument, got {len(children)}")
        if word != "not" and len(children) < 2:
            raise ValueError(f"{word}(...) takes two or more arguments, got {len(children)}")
        return (word, children)

    tree = node()
    if position != len(tokens):
        raise ValueError(f"unexpected {tokens[position][1]!r} after the statement")
    return tree, names


def format_statement(tree: Any) -> str:
    """Return a statement tree written canonically: ``or(and(A, B), not(C))``."""
    if isinstance(tree, str):
        return tree
    op, children = tree
    return f"{op}({', '.join(format_statement(c) for c in children)})"


def statement_problems(
    where: str, statement: str, earlier: dict[str, str], no_truth: tuple[str, ...]
) -> list[str]:
    """Return what is wrong with a compound rule's statement: it reads, and names earlier
    rules (``earlier``: their kinds by name) that have a truth value (not of ``no_truth``)."""
    try:
        _, names = parse_statement(statement)
    except ValueError as exc:
        return [f"{where}.statement: {statement!r}: {exc}"]
    out: list[str] = []
    for name in names:
        if name not in earlier:
            out.append(
                f"{where}.statement: {name!r} names no earlier rule (a compound combines rules "
                "listed before it)" + did_you_mean(name, list(earlier))
            )
        elif earlier[name] in no_truth:
            out.append(f"{where}.statement: {name!r} is a sort rule, which has no truth value")
    return out


def compound_children(rules: Any) -> set[str]:
    """Return the names of the rules a compound rule of ``rules`` names (they hold only
    through it)."""
    out: set[str] = set()
    for rule in rules:
        if rule.kind == "compound" and rule.statement is not None:
            try:
                out.update(parse_statement(rule.statement)[1])
            except ValueError:
                continue
    return out
