"""The package's import layers (docs/architecture.md): each module imports only its own layer and
the layers below it, and no module imports another module's private (``_``) names.

Imports inside functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
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
            "lobbysim.records",
            "lobbysim.record_files",  # the record files: CSV or Parquet, read back typed
            "lobbysim.record_reader",  # record files read back: typed, checked against the manifest
            "lobbysim.record_writer",  # the writer process of streamed records
            "lobbysim.outputs",
            "lobbysim.parallel",
            "lobbysim.intervals",  # the statistics behind every interval: no imports
            "lobbysim.progress",  # progress bars and lines: tqdm, imported when shown
            "lobbysim.remaining_time",  # the time left of a stage of runs
        },
    ),
    (
        "model",
        {
            "lobbysim.skill",
            "lobbysim.scenario",
            "lobbysim.scenarios",  # bundled scenario files and the example plug-in they name
            "lobbysim.arrivals",
            "lobbysim.visits",
            "lobbysim.retention",
            "lobbysim.latency",  # latency models of a world: players to data centres
            "lobbysim.rules",  # rule sets in other formats: FlexMatch in and out
            "lobbysim.population",
            "lobbysim.policies",
            "lobbysim.raters",
            "lobbysim.metrics",
        },
    ),
    ("engines", {"lobbysim.sim", "lobbysim.paper"}),
    ("experiments", {"lobbysim.experiments"}),
    ("tune", {"lobbysim.tuning"}),  # studies: the search, racing, the fresh-seed answer
    ("calibrate", {"lobbysim.calibration"}),  # match logs: read, fit a scenario, score raters
    ("reporting", {"lobbysim.reporting"}),
    ("commands", {"lobbysim.commands", "lobbysim.api"}),  # api: the notebook-shaped functions
    ("cli", {"lobbysim.cli", "lobbysim.cli_options", "lobbysim.cli_studies", "lobbysim.__main__"}),
]


#: The package's lazy public API: ``lobbysim.simulate`` and the rest of :mod:`lobbysim.api` are
#: loaded by the package's module ``__getattr__`` on first use, so that ``import lobbysim`` (and
#: every module below that imports ``RESULTS_VERSION`` from it) never loads them. Only that import,
#: inside a function, is allowed to go up from the package itself.
FACADE = ("lobbysim", "lobbysim.api")


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
        tree = ast.parse(source)
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
            "def f():\n    import lobbysim.cli\n",
            "lobbysim.scenario.model (layer model) imports lobbysim.cli (layer cli) at line 2",
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
    (found,) = violations({"lobbysim": "def f():\n    import lobbysim.cli\n"})
    assert "imports lobbysim.cli (layer cli)" in found


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
    "lobbysim.arrivals",
    "lobbysim.visits",
    "lobbysim.retention",
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
        for target, _, line in _imports(ast.parse(source)):
            if target.startswith("lobbysim.sim") and not target.startswith(KERNEL_IMPORTS):
                found.append(f"{module} imports {target} at line {line}")
    return found


def simpy_private_readers(sources: Mapping[str, str]) -> dict[str, list[int]]:
    """Return the modules that read SimPy's private state (``._queue``, ``._eid``, ``._now``
    of anything), with the lines."""
    found: dict[str, list[int]] = {}
    for module, source in sources.items():
        for node in ast.walk(ast.parse(source)):
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
        tree = ast.parse(source)
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
