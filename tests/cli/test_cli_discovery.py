"""Help and discovery: ``validate`` checks the bundled plug-ins' parameters without importing
anything (those of the ``compare:`` and ``sweep:`` sections' policies too) and says plainly
what it did not check; ``plugins`` says what each plug-in does and where writing one is
documented; no help text prints a doubled percent sign."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lobbysim.cli.main import build_parser, main
from lobbysim.commands.validate import PLUGINS_DOC, description, plugins_text
from lobbysim.players.arrivals import ARRIVALS
from lobbysim.policies import POLICIES
from lobbysim.raters import RATERS

TINY = """\
name: tiny
horizon: 60
warmup: 10
arrivals: {name: poisson, rate: 1.5}
"""

USER_POLICY = """\
from dataclasses import dataclass
from typing import ClassVar

import numpy as np


@dataclass(frozen=True)
class Mine:
    \"\"\"A user's policy.\"\"\"

    name: ClassVar[str] = "mine"
    needs_variance: ClassVar[bool] = False
    width: float = 1.0

    def score(self, decision):
        return np.zeros(decision.mu.shape)
"""


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text(USER_POLICY)
    return tmp_path


def _validate(work: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    (work / "s.yaml").write_text(TINY + text)
    code = main(["validate", "s.yaml"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "matchmaker: {policy: {name: knowledge_gradient, gama: 0.9}}\n",
            "matchmaker.policy: policy 'knowledge_gradient' has no parameter 'gama' "
            "(did you mean 'gamma'?)",
        ),
        (
            "raters: {driver: {name: glicko2, tauu: 0.5}}\n",
            "raters.driver: rater 'glicko2' has no parameter 'tauu' (did you mean 'tau'?)",
        ),
        (
            "compare: {policies: [draw_chance, 'knowledge_gradient(gama=0.9)']}\n",
            "compare.policies[1]: policy 'knowledge_gradient' has no parameter 'gama' "
            "(did you mean 'gamma'?)",
        ),
        (
            "sweep: {grid: {matchmaker.tick: [0.5, 1.0]}, policies: ['engagement(reac=false)']}\n",
            "sweep.policies[0]: policy 'engagement' has no parameter 'reac' "
            "(did you mean 'reach'?)",
        ),
        (
            "compare: {policies: [draw_chance, 'nowhere.py:Gone']}\n",
            "compare.policies[1]: no file 'nowhere.py' for 'nowhere.py:Gone'",
        ),
    ],
)
def test_validate_finds_a_typo_in_a_bundled_plugin_without_importing(
    work: Path, capsys: pytest.CaptureFixture[str], text: str, problem: str
) -> None:
    code, out, err = _validate(work, text, capsys)
    assert code == 2 and out == ""
    assert f"lobbysim: error: s.yaml: {problem}" in err
    assert "Traceback" not in err


def test_validate_checks_the_bundled_plugins_beside_a_user_one_and_says_what_it_did_not(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a typo in the user's class: not found without importing, and said so
    code, out, err = _validate(
        work,
        "matchmaker: {policy: {name: 'mine.py:Mine', widht: 2}}\n"
        "compare: {policies: ['mine.py:Mine', 'knowledge_gradient(gamma=0.9)']}\n",
        capsys,
    )
    assert code == 0 and err == ""
    assert out.startswith("s.yaml: ok (plug-ins not imported, so not run: ")
    assert "matchmaker.policy 'mine.py:Mine'" in out
    assert "their parameters are NOT checked: --import-plugins imports and checks them" in out
    # a bundled typo beside the user's class: found without importing
    code, out, err = _validate(
        work,
        "matchmaker: {policy: {name: 'mine.py:Mine'}}\n"
        "compare: {policies: ['mine.py:Mine', 'knowledge_gradient(gama=0.9)']}\n",
        capsys,
    )
    assert code == 2 and out == ""
    assert "compare.policies[1]: policy 'knowledge_gradient' has no parameter 'gama'" in err
    # imported, the user's typo is found too
    (work / "s.yaml").write_text(TINY + "matchmaker: {policy: {name: 'mine.py:Mine', widht: 2}}\n")
    assert main(["validate", "--import-plugins", "s.yaml"]) == 2
    err = capsys.readouterr().err
    assert "has no parameter 'widht' (did you mean 'width'?)" in err


def test_plugins_says_what_each_does_and_where_writing_one_is_documented(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["plugins"]) == 0
    text = capsys.readouterr().out
    assert text == plugins_text() + "\n"
    lines = text.splitlines()
    for registry in (ARRIVALS, POLICIES, RATERS):
        for name, cls in registry:
            (k,) = [i for i, line in enumerate(lines) if re.match(rf"  {name}(:|$)", line)]
            said = lines[k + 1].strip()
            assert said and said == description(cls), name
    # each says something of its own: no two plug-ins share a description
    described = [line for line in lines if line.startswith("      ")]
    assert len(described) == len(set(described))
    # the two random ones read differently, and say which is which
    said = {name: description(cls) for name, cls in POLICIES}
    assert "Lower bound" in said["uniform_random"] and "whole pool" in said["uniform_random"]
    assert "candidates at random" in said["random"]
    assert "Upper bound" in said["oracle"]
    assert "``" not in text
    assert lines[-1].startswith(f"writing one: {PLUGINS_DOC} (https://")
    assert (Path(__file__).resolve().parents[2] / PLUGINS_DOC).is_file()


def _help_texts(parser: object) -> list[tuple[str, str]]:
    """Return (command, printed help) for the parser and every sub-command."""
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    out = [("lobbysim", parser.format_help())]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append((name, sub.format_help()))
    return out


def test_no_help_prints_a_doubled_percent_sign() -> None:
    texts = _help_texts(build_parser())
    assert len(texts) > 8
    for name, text in texts:
        assert "%%" not in text, name
    compare = dict(texts)["compare"]
    assert "a 95% interval" in compare and "the 95% interval's half-width" in compare
    assert "docs/plugins.md" in dict(texts)["plugins"]
