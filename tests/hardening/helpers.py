"""Helpers of the hostile-input suites (not a test module: pytest collects only ``test_*.py``).

* :data:`SMALL`: a small 1v1 lobby in YAML (40 minutes, 5 of warm-up, one replication, seed 3),
  which the safety and hardening tests write into a folder and run through the CLI; a longer
  ``horizon`` gives them a run that is still going when they interrupt or kill it. Plain
  constants rather than fixtures: modules build their own variants from them at import time.
* :data:`TINY`: a smaller one (20 minutes) for commands that are refused before they run.
* :func:`lobbysim_under_limit`: ``python -m lobbysim`` with 3 GB of address space and a timeout.
* :func:`one_line_error`: the one error line of a refused command, checked.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

SMALL = """\
name: small
horizon: 40
warmup: 5
seed: 3
replications: 1
arrivals: {name: poisson, rate: 1.5}
population: {patience_mean: 3.0, session_games_mean: 4}
game: {length: 8}
matchmaker:
  policy: draw_chance
  threshold: [[0, 0.5], [1, 0.0]]
records: {ratings_every: 20}
"""

TINY = """\
name: tiny
horizon: 20
warmup: 5
seed: 3
replications: 1
arrivals: {name: poisson, rate: 1.5}
population: {patience_mean: 3.0, session_games_mean: 4}
game: {length: 5}
matchmaker: {policy: draw_chance, threshold: [[0, 0.0]]}
records: {ratings_every: 10}
"""

MEMORY_LIMIT = 3 * 2**30  # bytes of address space for the CLI subprocesses


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def lobbysim_under_limit(
    args: list[str], cwd: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m lobbysim ARGS`` with 3 GB of address space and a timeout."""
    env = {**os.environ, "LOBBYSIM_PROGRESS_EVERY": "3600"}
    return subprocess.run(
        [sys.executable, "-m", "lobbysim", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_limit_memory,
        env=env,
        check=False,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """Return the one error line of a refused command (exit 2, no traceback), checked."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("lobbysim: error: ")
    return lines[0]
