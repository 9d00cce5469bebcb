"""Capabilities, not classes: no module of the package decides by a plug-in's concrete class.

A caller that needs to know something of a plug-in (a rater's replay family, an arrival model's
rate) reads what the plug-in *declares* (docs/plugins.md, "Capabilities"), so that a user's
plug-in that declares it is treated as a built-in is. This test walks the source of every module
of :mod:`lobbysim` and fails on any ``isinstance``/``issubclass`` check, ``type(x) is C``
(``==``, ``is not``, ``!=``, ``in``; ``x.__class__`` alike) or ``type(x).__name__``
comparison against a plug-in class registered in a registry
(:class:`lobbysim.registry.Registry`), or a class (not a protocol) such a class derives from (a
shared mixin like ``GaussianBeliefs``). A check against a family's protocol ("is this a rater at
all") is fine.
"""

from __future__ import annotations

import ast
import functools
import importlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from lobbysim.registry import Registry

PACKAGE = Path(__file__).resolve().parent.parent / "lobbysim"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _sources() -> tuple[tuple[str, Path, str, ast.Module], ...]:
    """Every module of the package: its name, path, text and syntax tree (parsed once)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found.append((_module_name(path), path, text, ast.parse(text, str(path))))
    return tuple(found)


def _registries() -> list[Registry[Any]]:
    """Every registry of the package, with every class registered in it: the modules that
    define a registry or register into one are imported (importing registers)."""
    found: list[Registry[Any]] = []
    for name, _, text, _ in _sources():
        if "Registry(" not in text and ".register" not in text:
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, Registry) and all(value is not r for r in found):
                found.append(value)
    return found


@functools.cache
def plugin_classes() -> dict[type, str]:
    """Return the concrete plug-in classes, each with what it is (for the message): every
    registered class and every class other than a protocol that one derives from."""
    classes: dict[type, str] = {}
    for registry in _registries():
        for name, cls in registry:
            classes[cls] = f"the {registry.family} '{name}'"
            for base in cls.__mro__[1:]:
                if base is not object and not getattr(base, "_is_protocol", False):
                    classes.setdefault(base, f"a base class of the {registry.family} '{name}'")
    return classes


def _imports(tree: ast.Module, module: str) -> dict[str, str]:
    """Return each name the module imports anywhere (top level, in functions, under
    ``TYPE_CHECKING``) with what it names: ``"package.module:Name"`` or ``"package.module"``."""
    names: dict[str, str] = {}
    package = module if (PACKAGE / Path(*module.split(".")[1:]) / "__init__.py").exists() else ""
    package = package or module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, source] if source else base)
            for alias in node.names:
                names[alias.asname or alias.name] = f"{source}:{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    names[top] = top
    return names


def _resolve(node: ast.expr, module: ModuleType, imports: dict[str, str]) -> list[object]:
    """Return the objects a class expression names: a name, a dotted name, a tuple or a union
    of them (an expression it cannot resolve names nothing)."""
    if isinstance(node, ast.Tuple):
        return [obj for item in node.elts for obj in _resolve(item, module, imports)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _resolve(node.left, module, imports) + _resolve(node.right, module, imports)
    dotted: list[str] = []
    while isinstance(node, ast.Attribute):
        dotted.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return []
    if node.id in vars(module):
        obj: object = vars(module)[node.id]
    elif node.id in imports:
        source, _, attr = imports[node.id].partition(":")
        try:
            obj = importlib.import_module(source)
            if attr:
                obj = getattr(obj, attr)
        except (ImportError, AttributeError):
            return []
    else:
        return []
    for attr in dotted:
        if not hasattr(obj, attr):
            return []
        obj = getattr(obj, attr)
    return [obj]


def _is_type_call(node: ast.expr) -> bool:
    """Whether ``node`` is ``type(x)`` or ``x.__class__``."""
    if isinstance(node, ast.Attribute):
        return node.attr == "__class__"
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 1
    )


def class_checks(
    tree: ast.Module, module: ModuleType, classes: dict[type, str]
) -> Iterator[tuple[int, str, str]]:
    """Yield ``(line, code, what)`` for each check of a concrete plug-in class in ``tree``."""
    imports = _imports(tree, module.__name__)
    names = {cls.__name__: what for cls, what in classes.items()}
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "issubclass")
            and len(node.args) == 2
        ):
            targets = [node.args[1]]
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = node.left, node.comparators[0]
            identity = isinstance(node.ops[0], ast.Is | ast.IsNot | ast.Eq | ast.NotEq)
            member = isinstance(node.ops[0], ast.In | ast.NotIn)
            if (identity or member) and _is_type_call(left):
                targets = [right]
            elif identity and _is_type_call(right):
                targets = [left]
            else:  # type(x).__name__ == "Poisson", or in a collection of names
                for side, other in ((left, right), (right, left)):
                    named = (
                        isinstance(side, ast.Attribute)
                        and side.attr in ("__name__", "__qualname__")
                        and _is_type_call(side.value)
                    )
                    if not named:
                        continue
                    texts = [
                        c.value
                        for c in ast.walk(other)
                        if isinstance(c, ast.Constant) and isinstance(c.value, str)
                    ]
                    for text in texts:
                        if text in names:
                            yield node.lineno, ast.unparse(node), names[text]
        for target in targets:
            for obj in _resolve(target, module, imports):
                if isinstance(obj, type) and obj in classes:
                    yield node.lineno, ast.unparse(node), classes[obj]


def test_the_scan_sees_every_family() -> None:
    families = {r.family for r in _registries()}
    assert {"policy", "rater", "arrival model", "visit model", "retention model"} <= families
    assert {"latency model", "assignment"} <= families


def test_the_scan_finds_a_class_check() -> None:
    """The scan itself: it finds each form of check in a piece of code (so an empty answer on
    the package means what it says)."""
    from lobbysim.raters import base

    code = (
        "from lobbysim.players.arrivals import Poisson as P\n"
        "import lobbysim.raters.sph_elo\n"
        "def f(x, y):\n"
        "    from lobbysim.raters.base import GaussianBeliefs\n"
        "    return (isinstance(x, (int, P)), issubclass(y, GaussianBeliefs),\n"
        "            type(x) is lobbysim.raters.sph_elo.SPHEloRater,\n"
        "            type(y).__name__ == 'Daily', isinstance(x, Rater),\n"
        "            x.__class__ in (str, P))\n"
    )
    found = list(class_checks(ast.parse(code), base, plugin_classes()))
    whats = [what for _, _, what in found]
    assert whats == [
        "the arrival model 'poisson'",
        "a base class of the rater 'bayesian'",
        "the rater 'sph_elo'",
        "the visit model 'daily'",
        "the arrival model 'poisson'",
    ], found


def test_no_module_decides_by_a_plugin_class() -> None:
    classes = plugin_classes()
    found: list[str] = []
    for name, path, _, tree in _sources():
        module = importlib.import_module(name)
        for line, code, what in class_checks(tree, module, classes):
            where = path.relative_to(PACKAGE.parent)
            found.append(f"{where}:{line}: {code} (checks {what})")
    assert not found, (
        "decide by a declared capability (docs/plugins.md, 'Capabilities'), not by a plug-in's "
        "class:\n" + "\n".join(found)
    )
