"""Engine tests: the ``slow`` mark on tests of modules that are not marked in the file itself.

A test is marked ``slow`` with ``@pytest.mark.slow`` next to it, so that its reader sees it. The
modules listed in :data:`SLOW_ELSEWHERE` are being reworked along with the engine and are left
untouched for now; their longer runs are marked here instead, by test function (every case) or by
test id (one case). ``python -m pytest -m "not slow"`` leaves them out; the default run and CI
run them all the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent

#: Module file name -> the names (function, or ``function[case]``) of its slow tests.
SLOW_ELSEWHERE: dict[str, frozenset[str]] = {
    # the statistical comparisons with the reference lobby (30+30 replications per lobby)
    "test_reference_lobby.py": frozenset(
        {
            "test_the_engine_queues_as_the_reference",
            "test_the_comparison_flags_a_different_lobby",
            "test_one_game_sessions_on_every_arrival_match_the_closed_form",
        }
    ),
    # the three longest bundled scenarios, each run twice (fast plan on and off)
    "test_fast_paths.py": frozenset(
        {
            "test_the_plan_off_gives_every_bundled_scenarios_records[global_5v5]",
            "test_the_plan_off_gives_every_bundled_scenarios_records[engagement_pools]",
            "test_the_plan_off_gives_every_bundled_scenarios_records[live_game_retention]",
        }
    ),
    # the engagement and retention lobbies, run with and without batched events
    "test_event_batching.py": frozenset(
        {
            "test_engagement_pairing_gives_the_plain_models_records",
            "test_batched_events_give_the_plain_models_records[base-retention]",
        }
    ),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.parent != HERE:
            continue
        names = SLOW_ELSEWHERE.get(item.path.name, frozenset())
        if item.name in names or getattr(item, "originalname", None) in names:
            item.add_marker(pytest.mark.slow)
