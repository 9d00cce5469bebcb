"""scripts/calibrate_roundtrip.py on a small setting: the bundled quickstart (two days of a
500-member 1v1 base) simulated, calibrated from its own log and checked against its settings."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from lobbysim.scenario.inputs import as_scenario

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "calibrate_roundtrip.py"


def load_script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("calibrate_roundtrip", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["calibrate_roundtrip"] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def test_the_script_has_at_least_three_true_settings() -> None:
    script = load_script()
    assert len(script.SETTINGS) >= 3
    made = [as_scenario(name, overrides) for name, overrides in script.SETTINGS.values()]
    sizes = {s.base.size for s in made if s.base is not None}
    spreads = {s.population.get("skill_sd", 2.0) for s in made}
    assert len(sizes) >= 3 and len(spreads) >= 3


@pytest.mark.slow
def test_a_small_round_trip_recovers_its_settings(capsys: pytest.CaptureFixture[str]) -> None:
    script = load_script()
    rows = script.round_trip(as_scenario("quickstart", []), "quickstart", 11, 3)
    printed = capsys.readouterr().out
    assert "skill sd" in printed and "within 5% or 2 s.e." in printed
    missed = [row.name for row in rows if not row.ok]
    assert missed == [], printed


def test_rows_judged_by_an_error_say_how_far_off_and_how_often_chance_misses() -> None:
    script = load_script()
    assert script.seeds_of("11") == [11]
    assert script.seeds_of("11,12") == [11, 12]
    assert script.seeds_of("11-13,20") == [11, 12, 13, 20]
    # an honest error leaves 4.6% of estimates beyond 2 of it; on 4 degrees of freedom 11.6%
    assert abs(script.chance(float("inf")) - 0.0455) < 1e-3
    assert abs(script.chance(4.0) - 0.1161) < 1e-3
    row = script.Row("newcomers per day", 100.0, "92 ± 3.7", "within 2 s.e.", False, -0.08)
    assert script.off(row) == ""  # no standard error: not judged by one
    row.z, row.degrees = -2.28, 4.1
    assert script.off(row) == "-2.28 (4.1 df)"
    row.degrees = 1600.0
    assert script.off(row) == "-2.28"


def test_the_logs_own_scatter_shrinks_as_the_square_root_of_its_players() -> None:
    """log_scatter: the relative standard error of a log's games and players per period, from
    the players it holds (sd * sqrt(n) / sum): none where every player plays alike; over a log
    and the same log again under other players' ids (twice the players, alike), about sqrt 2
    less."""
    from tests.calibration.logs import make_log

    script = load_script()
    # four players, two matches a day for four days (three whole days are counted: the periods
    # of compare_logs, whole days from the first start, the last partial one dropped)
    even = [
        (day * 1440.0 + 60.0 * k, day * 1440.0 + 60.0 * k + 10.0, [(a, 0, 1), (b, 1, 2)])
        for day in range(4)
        for k, (a, b) in enumerate([(0, 1), (2, 3)])
    ]
    flat = script.log_scatter(make_log(even))
    assert flat == {"games_per_day": 0.0, "players_per_day": 0.0}
    # player 0 plays far more than the others, on more days
    uneven = even + [
        (day * 1440.0 + 600.0 + 30.0 * k, day * 1440.0 + 610.0 + 30.0 * k, [(0, 0, 1), (4, 1, 2)])
        for day in range(2)
        for k in range(day + 2)
    ]
    once = script.log_scatter(make_log(uneven))
    twice = script.log_scatter(
        make_log(
            uneven
            + [
                (s + 1.0, e + 1.0, [(p + 100, side, r) for p, side, r in seats])
                for s, e, seats in uneven
            ]
        )
    )
    seats = [3 + 2 + 3, 3, 3, 3, 5]  # player 0: 3 days x 1, and 2 + 3 more; player 4: 5
    n = len(seats)
    mean = sum(seats) / n
    sd = (sum((x - mean) ** 2 for x in seats) / (n - 1)) ** 0.5
    assert once["games_per_day"] == pytest.approx(sd * n**0.5 / sum(seats))
    for key in ("games_per_day", "players_per_day"):
        assert 0 < twice[key] < once[key]
        assert once[key] / twice[key] == pytest.approx(2**0.5, rel=0.1)
