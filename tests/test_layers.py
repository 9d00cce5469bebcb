"""The package's import layers (docs/architecture.md): each module imports only its own layer and
the layers below it, and no module imports another module's private (``_``) names.

Imports inside functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "lobbysim"

#: Bottom to top. A module belongs to the first layer holding it or a package above it.
LAYERS: list[tuple[str, set[str]]] = [
    (
        "foundations",
        {
            "lobbysim",  # the package itself: __version__, RESULTS_VERSION
            "lobbysim.validation",
            "lobbysim.yaml_input",
            "lobbysim.registry",
            "lobbysim.streams",
            "lobbysim.records",  # rows, record files, their reader and writer, output folders
            "lobbysim.running",  # worker processes, progress, time left, interpreter settings
            "lobbysim.stats",  # the package face; its metrics sit with the model (below)
            "lobbysim.stats.intervals",  # the statistics behind every interval: no imports
        },
    ),
    (
        "model",
        {
            "lobbysim.skill",
            "lobbysim.scenario",
            "lobbysim.scenarios",  # bundled scenario files and the example plug-in they name
            "lobbysim.players",  # arrivals, population, visits, retention, latency
            "lobbysim.flexmatch",  # rule sets in other formats: FlexMatch in and out
            "lobbysim.policies",
            "lobbysim.raters",
            "lobbysim.stats.metrics",
        },
    ),
    ("engines", {"lobbysim.sim", "lobbysim.paper"}),
    ("experiments", {"lobbysim.experiments"}),
    ("tune", {"lobbysim.tuning"}),  # studies: the search, racing, the fresh-seed answer
    ("calibrate", {"lobbysim.calibration"}),  # match logs: read, fit a scenario, score raters
    ("reporting", {"lobbysim.reporting"}),
    ("commands", {"lobbysim.commands", "lobbysim.api"}),  # api: the notebook-shaped functions
    ("cli", {"lobbysim.cli", "lobbysim.__main__"}),
]


#: The package's lazy public API: ``lobbysim.simulate`` and the rest of :mod:`lobbysim.api` are
#: loaded by the package's module ``__getattr__`` on first use, so that ``import lobbysim`` (and
#: every module below that imports ``RESULTS_VERSION`` from it) never loads them. Only that import,
#: inside a function, is allowed to go up from the package itself.
FACADE = ("lobbysim", "lobbysim.api")


@functools.cache
def _parse(source: str) -> ast.Module:
    """The syntax tree of a source text, parsed once per text (the checks only read it)."""
    return ast.parse(source)


def layer_of(module: str) -> int:
    """Return the index of the layer of ``module`` (its own entry, else its package's)."""
    parts = module.split(".")
    if module == "lobbysim":
        return 0
    for end in range(len(parts), 1, -1):  # the package itself holds only its __init__
        name = ".".join(parts[:end])
        for index, (_, members) in enumerate(LAYERS):
            if name in members:
                return index
    raise KeyError(f"{module} is in no layer: add it to LAYERS and docs/architecture.md")


def module_sources(package: Path = PACKAGE) -> dict[str, str]:
    """Return every module of the package by dotted name, with its source."""
    sources = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        sources[".".join(parts)] = path.read_text(encoding="utf-8")
    return sources


def violations(sources: Mapping[str, str]) -> list[str]:
    """Return one line per import that goes up a layer or takes another module's private name."""
    found = []
    for module, source in sources.items():
        here = layer_of(module)
        package = module if module == "lobbysim" else module.rsplit(".", 1)[0]
        tree = _parse(source)
        top_level = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            targets: list[tuple[str, list[str]]] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: resolve against this module's package
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets.append((base, [a.name for a in node.names]))
            elif isinstance(node, ast.Import):
                targets += [(a.name, []) for a in node.names]
            for target, names in targets:
                if target != "lobbysim" and not target.startswith("lobbysim."):
                    continue
                lazy_facade = (module, target) == FACADE and id(node) not in top_level
                if layer_of(target) > here and not lazy_facade:
                    found.append(
                        f"{module} (layer {LAYERS[here][0]}) imports {target} "
                        f"(layer {LAYERS[layer_of(target)][0]}) at line {node.lineno}"
                    )
                private = [n for n in names if n.startswith("_") and not n.startswith("__")]
                if private and target != module:
                    found.append(
                        f"{module} imports the private {', '.join(private)} of {target} "
                        f"at line {node.lineno}"
                    )
    return found


def test_every_module_imports_only_its_layer_and_those_below() -> None:
    sources = module_sources()
    assert len(sources) > 30
    assert violations(sources) == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        (
            "lobbysim.skill.gaussian",
            "from lobbysim.sim.lobby import LobbySimulation\n",
            "lobbysim.skill.gaussian (layer model) imports lobbysim.sim.lobby (layer engines)",
        ),
        (
            "lobbysim.scenario.model",
            "def f():\n    import lobbysim.cli.main\n",
            "lobbysim.scenario.model (layer model) imports lobbysim.cli.main (layer cli) at line 2",
        ),
        (
            "lobbysim.reporting.run",
            "from lobbysim.experiments.simulation import _metrics\n",
            "lobbysim.reporting.run imports the private _metrics of "
            "lobbysim.experiments.simulation",
        ),
    ],
)
def test_the_contract_catches_an_upward_or_private_import(
    module: str, source: str, expected: str
) -> None:
    found = violations({module: source})
    assert len(found) == 1 and found[0].startswith(expected)


def test_the_package_loads_its_api_only_lazily() -> None:
    lazy = "def __getattr__(name):\n    import lobbysim.api\n"
    assert violations({"lobbysim": lazy}) == []
    (found,) = violations({"lobbysim": "import lobbysim.api\n"})
    assert found.startswith("lobbysim (layer foundations) imports lobbysim.api (layer commands)")
    (found,) = violations({"lobbysim": "def f():\n    import lobbysim.cli.main\n"})
    assert "imports lobbysim.cli.main (layer cli)" in found


def test_a_module_outside_every_layer_is_named() -> None:
    with pytest.raises(KeyError, match=r"lobbysim\.newthing is in no layer"):
        violations({"lobbysim.newthing": ""})


# --- the engine's kernels (lobbysim.sim.fast) -----------------------------------------------------

#: What a kernel may import from the engine: the plain objects and other kernels.
KERNEL_IMPORTS = ("lobbysim.sim.entities", "lobbysim.sim.fast")
#: The plug-in families whose concrete classes the engine must never test for.
PLUGIN_PACKAGES = (
    "lobbysim.policies",
    "lobbysim.raters",
    "lobbysim.players.arrivals",
    "lobbysim.players.visits",
    "lobbysim.players.retention",
)
SIMPY_PRIVATE = {"_queue", "_eid", "_now"}


def _imports(tree: ast.AST) -> list[tuple[str, list[str], int]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            found += [(a.name, [], node.lineno) for a in node.names]
    return found


def kernel_violations(sources: Mapping[str, str]) -> list[str]:
    """Return one line per import of a kernel (``lobbysim.sim.fast``) from a role module: a
    kernel imports only lobbysim.sim.entities, other kernels and the layers below the engine."""
    found = []
    for module, source in sources.items():
        if not module.startswith("lobbysim.sim.fast"):
            continue
        for target, _, line in _imports(_parse(source)):
            if target.startswith("lobbysim.sim") and not target.startswith(KERNEL_IMPORTS):
                found.append(f"{module} imports {target} at line {line}")
    return found


def simpy_private_readers(sources: Mapping[str, str]) -> dict[str, list[int]]:
    """Return the modules that read SimPy's private state (``._queue``, ``._eid``, ``._now``
    of anything), with the lines."""
    found: dict[str, list[int]] = {}
    for module, source in sources.items():
        for node in ast.walk(_parse(source)):
            if isinstance(node, ast.Attribute) and node.attr in SIMPY_PRIVATE:
                found.setdefault(module, []).append(node.lineno)
    return found


def concrete_class_checks(sources: Mapping[str, str]) -> list[str]:
    """Return one line per place in the engine (``lobbysim.sim``) that decides by a plug-in's
    class rather than by what it declares: ``type(x) is C``, ``isinstance(x, C)`` for a class
    imported from a plug-in family, or a method identity ``A.m is B.m``."""
    found = []
    for module, source in sources.items():
        if not module.startswith("lobbysim.sim"):
            continue
        tree = _parse(source)
        plugin_names = {
            name
            for target, names, _ in _imports(tree)
            if target.startswith(PLUGIN_PACKAGES)
            for name in names
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(
                isinstance(op, ast.Is | ast.IsNot) for op in node.ops
            ):
                sides = [node.left, *node.comparators]
                # type(x) itself, or a member of type(x) or of a class (a capitalised name)
                owners = [s.value if isinstance(s, ast.Attribute) else s for s in sides]
                if any(
                    (isinstance(o, ast.Call) and getattr(o.func, "id", None) == "type")
                    or (o is not s and isinstance(o, ast.Name) and o.id[:1].isupper())
                    for o, s in zip(owners, sides, strict=True)
                ):
                    found.append(f"{module}: a class or method identity at line {node.lineno}")
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) in ("isinstance", "issubclass")
                and len(node.args) == 2
            ):
                classes = node.args[1]
                named = classes.elts if isinstance(classes, ast.Tuple) else [classes]
                if any(getattr(c, "id", None) in plugin_names for c in named):
                    found.append(f"{module}: isinstance of a plug-in class at line {node.lineno}")
    return found


def test_kernels_import_only_entities_and_the_layers_below() -> None:
    sources = module_sources()
    assert any(m.startswith("lobbysim.sim.fast.") for m in sources)
    assert kernel_violations(sources) == []
    bad = {"lobbysim.sim.fast.duels": "from lobbysim.sim.games import Games\n"}
    assert kernel_violations(bad) == [
        "lobbysim.sim.fast.duels imports lobbysim.sim.games at line 1"
    ]


def test_simpys_private_state_is_read_in_one_module() -> None:
    readers = simpy_private_readers(module_sources())
    assert list(readers) == ["lobbysim.sim.fast.events"]
    assert simpy_private_readers({"m": "now = env._now\n"}) == {"m": [1]}


def test_no_engine_code_decides_by_a_plugins_concrete_class() -> None:
    assert concrete_class_checks(module_sources()) == []
    bad = {
        "lobbysim.sim.matchmaker": (
            "from lobbysim.policies.simple import DrawChance\n"
            "a = type(p) is DrawChance\n"
            "b = isinstance(p, DrawChance)\n"
            "c = type(r).means is Base.means\n"
            "d = a.leave is not b.leave\n"
        )
    }
    assert [line[-2:] for line in concrete_class_checks(bad)] == [" 2", " 3", " 4"]


# --- the repository stands alone ------------------------------------------------------------------

CITED_PATH = re.compile(
    r"(?<![\w/])((?:docs|tests|benchmarks|scripts|lobbysim|examples|scenarios)/[\w/.-]*\w"
    r"\.(?:md|py|yaml|txt))"
)
CITED_DOCUMENT = re.compile(r"\b[A-Z][A-Z_]+\.md\b")  # DESIGN.md, README.md, ...


def cited_files_missing(sources: Mapping[str, str], root: Path) -> list[str]:
    """Return the files the package's sources cite (a repository path, or a document such as
    ``NAME.md``) that do not exist in the repository."""
    missing = []
    for module, source in sources.items():
        for pattern in (CITED_PATH, CITED_DOCUMENT):
            for match in pattern.finditer(source):
                cited = match.group(1) if match.groups() else match.group(0)
                if not (root / cited).exists():
                    missing.append(f"{module} cites {cited}")
    return missing


def test_the_package_cites_only_files_that_ship() -> None:
    root = PACKAGE.parent
    assert cited_files_missing(module_sources(), root) == []
    fake = {"lobbysim.x": '"""See DESIGN.md 3.1 and docs/gone.md; docs/model.md is here."""'}
    assert sorted(cited_files_missing(fake, root)) == [
        "lobbysim.x cites DESIGN.md",
        "lobbysim.x cites docs/gone.md",
    ]


ENGINE_MAX_LINES = 450  # the engine issue: one version of each piece, in rooms of a readable size


def test_no_engine_file_is_over_450_lines() -> None:
    engine = PACKAGE / "sim"
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(engine.rglob("*.py"))
    }
    assert len(sizes) > 15
    assert {name: n for name, n in sizes.items() if n > ENGINE_MAX_LINES} == {}


MAX_LINES = 600  # outside the engine: a module is one concept, split along concepts when it grows


def test_no_module_outside_the_engine_is_over_600_lines() -> None:
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(PACKAGE.rglob("*.py"))
        if "sim" not in path.relative_to(PACKAGE).parts[:1]
    }
    assert len(sizes) > 100
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


# --- one home per name: no import cycles, no forwarding modules ----------------------------------

TESTS = Path(__file__).resolve().parent


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """Return the absolute module an ``ImportFrom`` in ``module`` names."""
    base = node.module or ""
    if node.level:
        package = module if is_package else module.rsplit(".", 1)[0]
        parts = package.split(".")
        anchor = parts[: len(parts) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    return base


def _packages(package: Path = PACKAGE) -> set[str]:
    """Return the dotted names of the package and its subpackages."""
    return {
        ".".join(path.parent.relative_to(package.parent).parts)
        for path in package.rglob("__init__.py")
    }


def import_graph(sources: Mapping[str, str], packages: set[str]) -> dict[str, set[str]]:
    """Return, per module, the package modules it imports (lazy imports too). ``from p import m``
    of a submodule ``m`` goes to ``p.m``. The package face (``lobbysim``) has no edges out: it
    loads :mod:`lobbysim.api` only lazily, for its users."""
    graph: dict[str, set[str]] = {module: set() for module in sources}
    for module, source in sources.items():
        if module == "lobbysim":
            continue
        for node in ast.walk(_parse(source)):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = _resolve(module, module in packages, node)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in sources else base)
            elif isinstance(node, ast.Import):
                targets += [a.name for a in node.names]
            for target in targets:
                if target in sources and target != module:
                    graph[module].add(target)
    return graph


def import_cycles(sources: Mapping[str, str], packages: set[str]) -> list[list[str]]:
    """Return the strongly connected groups of two or more modules of the import graph, each
    sorted, with the imports that join them."""
    graph = import_graph(sources, packages)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(
        [*group, *(f"{a} -> {b}" for a in group for b in sorted(graph[a]) if b in group)]
        for group in groups
    )


def test_no_import_cycles() -> None:
    cycles = import_cycles(module_sources(), _packages())
    assert cycles == [], "import cycles:\n" + "\n".join(map(str, cycles))
    cyclic = {
        "lobbysim.a": "def f():\n    from lobbysim import b\n",
        "lobbysim.b": "import lobbysim.a\n",
    }
    assert import_cycles(cyclic, {"lobbysim"}) == [
        ["lobbysim.a", "lobbysim.b", "lobbysim.a -> lobbysim.b", "lobbysim.b -> lobbysim.a"]
    ]


def defined_names(source: str) -> tuple[set[str], set[str], set[str]]:
    """Return the names a module defines at its top level (defs, classes, assignments, including
    inside top-level ``if``/``try``), the names it only imports, and its ``__all__``."""
    defined: set[str] = set()
    imported: set[str] = set()
    exported: set[str] = set()

    def bind(target: ast.expr) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                defined.add(node.id)

    def scan(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target)
                if any(getattr(t, "id", None) == "__all__" for t in node.targets):
                    exported.update(
                        c.value
                        for c in ast.walk(node.value)
                        if isinstance(c, ast.Constant) and isinstance(c.value, str)
                    )
            elif isinstance(node, ast.AnnAssign | ast.AugAssign):
                bind(node.target)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    imported.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.If | ast.Try | ast.With | ast.For | ast.While):
                for part in ("body", "orelse", "finalbody"):
                    scan(getattr(node, part, []))
                for handler in getattr(node, "handlers", []):
                    scan(handler.body)

    scan(_parse(source).body)
    return defined, imported - defined, exported


#: The package face's names are :mod:`lobbysim.api`'s: the face (``lobbysim.__getattr__``) loads
#: them from there only, so the API module also gives the few it takes from below (``Scenario``,
#: ``RunFolder``, ``load_run``).
FACE_BODY = ("lobbysim.api",)


def forwarded_imports(
    sources: Mapping[str, str], packages: set[str], importers: Mapping[str, tuple[str, str]]
) -> list[str]:
    """Return one line per import that takes a name from a package module that does not define
    it (a module that only imports the name forwards it), and per module ``__getattr__`` outside
    the package face. ``importers`` maps a file's label to its dotted name and source. A package's
    ``__init__`` may re-export the names in its ``__all__``; a submodule is its package's name."""
    homes: dict[str, list[str]] = {}
    facts = {module: defined_names(source) for module, source in sources.items()}
    for module, (defined, _, _) in facts.items():
        for name in defined:
            homes.setdefault(name, []).append(module)
    found = []
    for module, (defined, _, exported) in facts.items():
        if module != "lobbysim" and "__getattr__" in defined:
            found.append(f"{module} defines a module __getattr__")
        forwarded = sorted(exported - defined)
        if module not in packages and module not in FACE_BODY and forwarded:
            found.append(f"{module} re-exports {', '.join(forwarded)} in its __all__")
    for label, (module, source) in importers.items():
        for node in ast.walk(_parse(source)):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = _resolve(module, module in packages, node)
            if target not in sources:
                continue
            defined, _, exported = facts[target]
            for alias in node.names:
                name = alias.name
                if name == "*" or name in defined or f"{target}.{name}" in sources:
                    continue
                if target in packages and name in exported:
                    continue
                where = ", ".join(sorted(m for m in homes.get(name, []) if m != target))
                found.append(
                    f"{label}:{node.lineno} takes {name} from {target}, "
                    f"which does not define it (defined in: {where or 'nowhere'})"
                )
    return found


def _importers() -> dict[str, tuple[str, str]]:
    root = PACKAGE.parent
    importers = {
        str(path.relative_to(root)): (module, path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
        for module in [
            ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        ]
    }
    for path in sorted(TESTS.rglob("*.py")):
        importers[str(path.relative_to(root))] = ("tests", path.read_text(encoding="utf-8"))
    return importers


def test_every_import_names_the_module_that_defines_the_name() -> None:
    found = forwarded_imports(module_sources(), _packages(), _importers())
    assert found == [], f"{len(found)} forwarded imports:\n" + "\n".join(found)
    fake = {
        "lobbysim": "",
        "lobbysim.a": "X = 1\n",
        "lobbysim.b": "from lobbysim.a import X\n",
        "lobbysim.p": "from lobbysim.a import X\n__all__ = ['X']\n",
        "lobbysim.c": "def __getattr__(name): ...\n",
        "lobbysim.d": "from lobbysim.a import X\n__all__ = ['X']\n",
    }
    importers = {"t.py": ("tests", "from lobbysim.b import X\nfrom lobbysim.p import X\n")}
    assert forwarded_imports(fake, {"lobbysim", "lobbysim.p"}, importers) == [
        "lobbysim.c defines a module __getattr__",
        "lobbysim.d re-exports X in its __all__",
        "t.py:1 takes X from lobbysim.b, which does not define it (defined in: lobbysim.a)",
    ]


def modules_imported_by_test_modules(tests: Path = TESTS) -> list[str]:
    """Return ``file:line imports module`` for every test module that imports a test module."""
    found = []
    for path in sorted(tests.rglob("test_*.py")):
        tree = _parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if isinstance(node, ast.ImportFrom) and node.module in {"tests"} | {
                f"tests.{p.name}" for p in tests.iterdir() if p.is_dir()
            }:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_"):
                    found.append(f"{path.relative_to(tests.parent)}:{node.lineno} imports {name}")
    return found


def test_no_test_module_imports_another(tmp_path: Path) -> None:
    assert modules_imported_by_test_modules() == []
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "test_a.py").write_text("X = 1\n")
    (tmp_path / "sub" / "helpers.py").write_text("Y = 1\n")
    (tmp_path / "sub" / "test_b.py").write_text(
        "from tests.sub.test_a import X\n"
        "from tests.sub import test_a\n"
        "from tests.sub.helpers import Y\n"
    )
    assert modules_imported_by_test_modules(tmp_path) == [
        f"{tmp_path.name}/sub/test_b.py:1 imports tests.sub.test_a",
        f"{tmp_path.name}/sub/test_b.py:2 imports tests.sub.test_a",
    ]
