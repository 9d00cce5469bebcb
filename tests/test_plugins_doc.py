"""docs/plugins.md: every plug-in example on the page runs the simulator with its plug-in.

Each ```python block starts with ``# file: name.py`` and is followed by the ```yaml scenario that
names it (``name.py:Class``); the test saves both in a temporary folder, runs the scenario there
with :func:`lobbysim.simulate`, and checks that the plug-in was really used.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

import lobbysim

PAGE = Path(__file__).resolve().parents[1] / "docs" / "plugins.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
FILE_LINE = re.compile(r"\A# file: (\w+\.py)\n")

#: The section headings the page must have, one per plug-in role.
ROLES = (
    "Arrival model",
    "Visit model (player base)",
    "Retention model",
    "Latency model (world)",
    "Opponent-selection policy",
    "Rater",
    "1v1 assignment",
)


def _blocks() -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in FENCE.findall(PAGE.read_text(encoding="utf-8"))]


def _examples() -> list[tuple[str, str, dict]]:
    """Return (file name, python source, scenario) for every ```python block of the page."""
    blocks = _blocks()
    out = []
    for k, (lang, body) in enumerate(blocks):
        if lang != "python":
            continue
        match = FILE_LINE.match(body)
        assert match, f"python block {k} of {PAGE.name} does not start with '# file: name.py'"
        nxt = next(
            ((lang2, b) for lang2, b in blocks[k + 1 :] if lang2 in ("python", "yaml")),
            ("", ""),
        )
        assert nxt[0] == "yaml", f"the block after {match[1]} is not its ```yaml scenario"
        scenario = yaml.safe_load(nxt[1])
        assert f"{match[1]}:" in nxt[1], f"the scenario after {match[1]} does not name it"
        out.append((match[1], body, scenario))
    return out


EXAMPLES = _examples()


def test_page_has_a_section_per_role() -> None:
    headings = re.findall(r"^## (.+)$", PAGE.read_text(encoding="utf-8"), re.MULTILINE)
    for role in ROLES:
        assert role in headings, f"docs/plugins.md has no '## {role}' section"
    assert len(EXAMPLES) == len(ROLES), "one runnable example per role"


def _used(scenario: dict, file_name: str) -> object:
    """Return the plug-in spec of the scenario that names ``file_name``."""

    def walk(node: object) -> object:
        if isinstance(node, dict):
            if str(node.get("name", "")).startswith(f"{file_name}:"):
                return node
            for value in node.values():
                found = walk(value)
                if found is not None:
                    return found
        if isinstance(node, list):
            for value in node:
                found = walk(value)
                if found is not None:
                    return found
        return None

    return walk(scenario)


@pytest.mark.parametrize(
    ("file_name", "source", "scenario"), EXAMPLES, ids=[e[0] for e in EXAMPLES]
)
def test_example_runs(
    file_name: str,
    source: str,
    scenario: dict,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _used(scenario, file_name) is not None, f"the scenario does not name {file_name}"
    assert scenario["horizon"] <= 120, "examples stay short"
    (tmp_path / file_name).write_text(source, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    module_name = "lobbysim_user_" + file_name.removesuffix(".py")
    monkeypatch.delitem(sys.modules, module_name, raising=False)  # load this file, not a cache
    try:
        run = lobbysim.simulate(scenario, progress=False)
        assert len(run.games) > 0, f"{file_name}: no game was played"
        # The class really was loaded from the page's block and used by the run.
        module = sys.modules[module_name]
        assert Path(module.__file__).resolve() == (tmp_path / file_name).resolve()
    finally:
        sys.modules.pop(module_name, None)


#: The verb of each role the engine surely calls in a run; the first one the class has is used.
VERBS = ("sample", "next_visits", "leave_probability", "latencies", "score", "update", "pairs")


@pytest.mark.parametrize(
    ("file_name", "source", "scenario"), EXAMPLES, ids=[e[0] for e in EXAMPLES]
)
def test_example_plugin_is_called(
    file_name: str,
    source: str,
    scenario: dict,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A verb of the example's class that raises stops its run, named: the run calls it."""
    spec = _used(scenario, file_name)
    assert isinstance(spec, dict)
    class_name = spec["name"].split(":", 1)[1]
    verb = next(v for v in VERBS if re.search(rf"^    def {v}\(", source, re.MULTILINE))
    broken = source + (
        f"\n\ndef _boom(*args, **kwargs):\n    raise RuntimeError('doc example called')\n\n\n"
        f"{class_name}.{verb} = _boom\n"
    )
    (tmp_path / file_name).write_text(broken, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    module_name = "lobbysim_user_" + file_name.removesuffix(".py")
    monkeypatch.delitem(sys.modules, module_name, raising=False)
    try:
        with pytest.raises(ValueError, match=r"failed in .*RuntimeError: doc example called"):
            lobbysim.simulate(scenario, progress=False)
    finally:
        sys.modules.pop(module_name, None)


def test_a_broken_example_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run above would fail if an example broke: a plug-in's error stops the run, named."""
    file_name, source, scenario = EXAMPLES[0]
    broken = source.replace("return Arrivals.of(times, sizes)", "return Arrivals.of(times[::-1])")
    assert broken != source
    (tmp_path / file_name).write_text(broken, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    module_name = "lobbysim_user_" + file_name.removesuffix(".py")
    monkeypatch.delitem(sys.modules, module_name, raising=False)
    try:
        with pytest.raises(ValueError, match="arrival model 'steady'"):
            lobbysim.simulate(scenario, progress=False)
    finally:
        sys.modules.pop(module_name, None)
