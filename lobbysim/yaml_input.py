"""Reading YAML from users safely: scenario files, ``--set`` and ``--grid`` values.

PyYAML's ``safe_load`` builds no arbitrary objects, but it is not safe against hostile or
mistaken input: an alias chain ("billion laughs") expands to gigabytes once the data is walked, a
deeply nested document overflows the stack, a 50 MB file takes minutes, and a key given twice
silently keeps the last value. :func:`load_yaml` bounds all of these and fails fast with one
line (:class:`YamlInputError`):

* the text is at most :data:`MAX_BYTES` bytes (and a file must be UTF-8);
* nesting is at most :data:`MAX_DEPTH` levels;
* the document, with every alias expanded, has at most :data:`MAX_NODES` nodes (aliases
  themselves are allowed: a scenario may reuse a threshold schedule);
* a key repeated in one mapping is an error (merge keys ``<<`` still override as YAML says).

It also reads numbers the way YAML 1.2 and every user do: ``5e-1`` and ``1e3`` are floats (YAML
1.1, which PyYAML follows, reads them as text).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, ClassVar

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from lobbysim.validation import read_input_text

MAX_BYTES = 1_000_000  # a scenario is a few kilobytes; a trace belongs in a CSV file
MAX_DEPTH = 50
MAX_NODES = 100_000

# YAML 1.2's float forms that YAML 1.1 lacks: an exponent without a dot, e.g. 1e3, 5e-1, -2E+4.
_FLOAT_12 = re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")


class YamlInputError(ValueError):
    """YAML text that cannot be read, or breaks a bound; the message is one line."""


class _Loader(yaml.SafeLoader):
    """``SafeLoader`` with YAML 1.2 exponents, duplicate-key and depth checks."""

    # A copy, so that adding a resolver leaves PyYAML's SafeLoader unchanged.
    yaml_implicit_resolvers: ClassVar[dict[Any, list[Any]]] = {
        key: list(value) for key, value in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise YamlInputError(
                    f"nested more than {MAX_DEPTH} levels deep at line {mark.line + 1}"
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}  # key -> the line it is first given on
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the base class reports it
                continue
            if first is not None:
                raise YamlInputError(
                    f"the key {key!r} is given twice (lines {first} and {line}); remove one"
                )
            seen[key] = line
        for key_node, value_node in node.value:  # a number too long: named by its key
            problem = _long_integer(value_node)
            if problem is not None and isinstance(key_node, ScalarNode):
                raise YamlInputError(f"{key_node.value}: {problem}")
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: ScalarNode) -> Any:
        problem = _long_integer(node)
        if problem is not None:  # in a list: named by its line
            raise YamlInputError(problem)
        return super().construct_yaml_int(node)


def _long_integer(node: Node) -> str | None:
    """Return the problem with an integer too long for Python to convert (more digits than
    ``sys.get_int_max_str_digits()``, 4,300 by default), else None."""
    if not isinstance(node, ScalarNode) or node.tag != "tag:yaml.org,2002:int":
        return None
    digits = sum(c.isdigit() for c in node.value)
    limit = sys.get_int_max_str_digits()
    if not limit or digits <= limit:
        return None
    return (
        f"the number {node.value[:12]}... ({digits:,} digits) at line {node.start_mark.line + 1} "
        "is too long to read as a number"
    )


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)
_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789"))


def _expanded_size(root: Node) -> int:
    """Return the nodes of the document with every alias expanded (stops past the bound).

    Aliases make the node graph a DAG whose expanded tree can be exponentially large; sizes are
    memoised per node, so this costs one visit per distinct node.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # nodes whose children are being sized
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes or (not children_done and id(node) in open_nodes):
            if id(node) in open_nodes:
                raise YamlInputError("an alias refers to the collection that contains it")
            continue
        if isinstance(node, ScalarNode):
            sizes[id(node)] = 1
            continue
        if isinstance(node, SequenceNode):
            children = list(node.value)
        elif isinstance(node, MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            children = []
        if children_done:
            open_nodes.discard(id(node))
            sizes[id(node)] = min(1 + sum(sizes[id(c)] for c in children), MAX_NODES + 1)
        else:
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


def load_yaml(text: str) -> Any:
    """Return the data of one YAML document, within the bounds of the module docstring.

    Raises:
        YamlInputError: a syntax error (with its line and column) or a broken bound.
    """
    if len(text.encode("utf-8", errors="surrogatepass")) > MAX_BYTES:
        raise YamlInputError(f"longer than {MAX_BYTES:,} bytes")
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        if _expanded_size(root) > MAX_NODES:
            raise YamlInputError(
                f"more than {MAX_NODES:,} values once its aliases are expanded (an alias chain?)"
            )
        return loader.construct_document(root)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
        problem = ", ".join(p for p in parts if p) or str(exc).splitlines()[0]
        raise YamlInputError(f"YAML syntax error{where}: {problem}") from None
    except RecursionError:  # a safety net: the depth bound should come first
        raise YamlInputError(f"nested more than {MAX_DEPTH} levels deep") from None
    finally:
        loader.dispose()


def read_yaml_file(path: Path) -> Any:
    """Return the data of a YAML file (see :func:`load_yaml`).

    Raises:
        YamlInputError: the file cannot be read, is not a regular file (a device such as
            ``/dev/zero``, a pipe: refused before reading), is too large, is not UTF-8, or
            :func:`load_yaml` rejects it.
    """
    try:
        text = read_input_text(path, MAX_BYTES)
    except ValueError as exc:
        raise YamlInputError(str(exc)) from None
    return load_yaml(text)
