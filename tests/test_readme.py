"""Every Python example in the README runs as printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_has_examples() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(README.parent)  # examples use paths relative to the repository
    exec(compile(BLOCKS[index], f"README.md example {index}", "exec"), {})


def test_the_readme_prints_the_custom_arrival_model_exactly() -> None:
    example = (README.parent / "examples" / "custom_arrivals.py").read_text(encoding="utf-8")
    assert example in BLOCKS
