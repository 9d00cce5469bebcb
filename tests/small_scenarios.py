"""Scenario texts shared by test modules (not a test module: pytest collects only ``test_*.py``).

Plain constants rather than fixtures: modules build their own variants from them at import time,
in module-level constants (``SMALL.replace("horizon: 40", ...)``).

* :data:`SMALL`: a small 1v1 lobby in YAML (40 minutes, 5 of warm-up, one replication, seed 3),
  which the safety and hardening tests write into a folder and run through the CLI; a longer
  ``horizon`` gives them a run that is still going when they interrupt or kill it.
"""

from __future__ import annotations

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
