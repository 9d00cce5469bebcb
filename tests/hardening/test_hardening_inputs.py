"""Hardening of inputs (issue 29, part B): ``validate`` runs no plug-in code, counts that would
exhaust memory and input files that are devices, pipes or too large are refused before anything
is allocated or read, a local scenario file wins over a bundled one of its name and says so,
rater parameters whose arithmetic overflows are refused, and duplicate policies and scheduler
addresses without a port are one line each. Bad input: one line naming the field and the value,
exit status 2, no traceback, nothing written."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from lobbysim.cli.main import main
from lobbysim.raters import RATERS
from lobbysim.registry import PluginError
from lobbysim.scenario import PluginSpec, ScenarioError, bundled_scenarios, find_scenario
from lobbysim.scenario.specs import resolve_policies
from tests.hardening.helpers import TINY, lobbysim_under_limit, one_line_error

#: A plug-in whose import leaves a marker file: importing it runs its code.
MARKING_PLUGIN = """\
from pathlib import Path

Path({marker!r}).write_text("imported")

from lobbysim.players.arrivals import Poisson as Marked
"""

@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tiny.yaml").write_text(TINY)
    (tmp_path / "big.yaml").write_text(TINY + "base: {size: 1000000000}\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- 1. validate runs no code ---------------------------------------------------------------


def test_validate_imports_no_plugin_unless_asked(
    work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    file_marker, module_marker = work / "file-imported", work / "module-imported"
    (work / "marking.py").write_text(MARKING_PLUGIN.format(marker=str(file_marker)))
    package = work / "markingpkg"
    package.mkdir()
    (package / "__init__.py").write_text(MARKING_PLUGIN.format(marker=str(module_marker)))
    (package / "sub.py").write_text("from markingpkg import Marked\n")
    monkeypatch.syspath_prepend(str(work))
    (work / "by_file.yaml").write_text(
        TINY.replace("{name: poisson, rate: 1.5}", "{name: marking.py:Marked, rate: 1.5}")
    )
    (work / "by_module.yaml").write_text(
        TINY.replace("{name: poisson, rate: 1.5}", "{name: markingpkg.sub:Marked, rate: 1.5}")
    )
    assert main(["validate", "by_file.yaml", "by_module.yaml"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert not file_marker.exists() and not module_marker.exists()
    assert "markingpkg" not in sys.modules
    assert out[0].startswith("by_file.yaml: ok (plug-ins not imported, so not run: ")
    assert "arrivals 'marking.py:Marked'" in out[0] and "--import-plugins" in out[0]
    assert "arrivals 'markingpkg.sub:Marked'" in out[1]
    assert main(["validate", "--import-plugins", "by_file.yaml", "by_module.yaml"]) == 0
    assert capsys.readouterr().out.splitlines() == ["by_file.yaml: ok", "by_module.yaml: ok"]
    assert file_marker.read_text() == "imported" and module_marker.read_text() == "imported"
    for name in ("markingpkg", "markingpkg.sub"):
        sys.modules.pop(name, None)


def test_validate_checks_plugin_references_without_importing(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "refs.yaml").write_text(
        TINY.replace("{name: poisson, rate: 1.5}", "{name: missing.py:Evenings, rate: 1.5}")
        .replace("policy: draw_chance", "policy: 'no_such_package_xyz.policies:Mine'")
        .replace("records:", "raters: {driver: bayesian, shadows: ['json:not-a-class']}\nrecords:")
    )
    assert main(["validate", "refs.yaml"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"lobbysim: error: refs.yaml: arrivals: no file 'missing.py' for 'missing.py:Evenings' "
        f"(relative to {work})",
        "lobbysim: error: refs.yaml: matchmaker.policy: no module 'no_such_package_xyz' for "
        "'no_such_package_xyz.policies:Mine' (not installed, or not on the path)",
        "lobbysim: error: refs.yaml: raters.shadows[0]: 'not-a-class' in 'json:not-a-class' is "
        "not a class name (a Python identifier)",
    ]
    from lobbysim.scenario.references import reference_problem

    os.mkfifo(work / "pipe.py")
    assert reference_problem("pipe.py:Thing") == (
        "'pipe.py' for 'pipe.py:Thing': is a pipe, not a regular file; give a file"
    )
    assert reference_problem("lobbysim.players.arrivals:Poisson") is None
    assert reference_problem("no colon") is not None


# --- 2. sizes and input files, before anything is allocated or read --------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["validate", "big.yaml"],
            "base.size: 1,000,000,000 members would need about ",
        ),
        (
            ["run", "tiny.yaml", "--set", "base.size=1000000000000"],
            "base.size: 1,000,000,000,000 members would need about ",
        ),
        (
            ["run", "tiny.yaml", "--set", "base.newcomers_per_day=1e9"],
            "base.newcomers_per_day: 1,000,000,000 newcomers a day",
        ),
        (
            ["run", "tiny.yaml", "--set", "arrivals={name: cohort, size: 1000000000}"],
            "arrivals.size: 1,000,000,000 players would need about ",
        ),
        (
            ["run", "tiny.yaml", "--set", "arrivals.rate=100000", "--set", "horizon=100000"],
            "arrivals.rate: 100,000 players a minute over 100000 minutes",
        ),
        (["paper", "--case", "top", "--paths", "1e12"], "--paths 1000000000000 would need about"),
        (["paper", "--case", "top", "--games", "1e8"], "--games 100000000 would need about"),
        (["run", "/dev/zero"], "/dev/zero: is a device, not a regular file"),
    ],
)
def test_sizes_beyond_memory_are_one_line_before_anything_is_allocated(
    work: Path, args: list[str], expected: str
) -> None:
    start = time.perf_counter()
    extra = [] if args[0] == "validate" else ["--quiet", "--out", "never"]
    result = lobbysim_under_limit([*args, *extra], work)
    line = one_line_error(result)
    assert expected in line, line
    if "would need" in line:
        assert " of memory" in line and ", more than the limit of " in line, line
    assert time.perf_counter() - start < 30
    assert not (work / "never").exists() and not (work / "outputs").exists()


def test_input_files_that_are_pipes_devices_or_too_large_are_not_read(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(work / "pipe.yaml")  # opening it for reading would block forever
    assert main(["validate", "pipe.yaml"]) == 2
    assert capsys.readouterr().err == (
        "lobbysim: error: pipe.yaml: is a pipe, not a regular file; give a file\n"
    )
    os.mkfifo(work / "trace.csv")
    for path, problem in [
        ("trace.csv", "is a pipe, not a regular file"),
        ("/dev/zero", "is a device, not a regular file"),
    ]:
        (work / "trace.yaml").write_text(
            TINY.replace("{name: poisson, rate: 1.5}", f"{{name: trace, path: {path}}}")
        )
        assert main(["validate", "trace.yaml"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"trace file '{path}': {problem}" in err, err
    big = work / "big.csv"
    with big.open("wb") as file:  # sparse: 200 MB that take no disk
        file.truncate(200_000_000)
    (work / "trace.yaml").write_text(
        TINY.replace("{name: poisson, rate: 1.5}", "{name: trace, path: big.csv}")
    )
    assert main(["validate", "trace.yaml"]) == 2
    assert "trace file 'big.csv': longer than 100,000,000 bytes (200,000,000)" in (
        capsys.readouterr().err
    )


# --- 3. a local file wins over a bundled scenario of its name, and says so --------------------


def test_an_edited_local_copy_wins_over_the_bundled_scenario_and_says_so(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "one_visit"]) == 0
    local = work / "one_visit.yaml"
    local.write_text(TINY.replace("name: tiny", "name: edited"))
    capsys.readouterr()
    assert find_scenario("one_visit") == Path("one_visit.yaml")
    bundled = bundled_scenarios()["one_visit"]
    note = (
        "scenario: one_visit.yaml, the file in this folder (not the bundled scenario "
        f"one_visit, {bundled})"
    )
    assert main(["run", "one_visit", "--out", "out", "-q", "--jobs", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == note
    assert "name: edited" in (work / "out" / "scenario.yaml").read_text()
    assert main(["validate", "one_visit.yaml"]) == 0  # the name as given: the same note
    assert capsys.readouterr().out.splitlines() == [note, "one_visit.yaml: ok"]
    local.unlink()
    assert find_scenario("one_visit") == bundled  # no local file: the bundled one, silently
    assert main(["validate", "one_visit"]) == 0
    assert capsys.readouterr().out.splitlines() == ["one_visit: ok"]


# --- 4. rater parameters whose arithmetic overflows -------------------------------------------


@pytest.mark.parametrize(
    ("rater", "field"),
    [
        ("{name: glicko2, initial_deviation: 1e200}", "initial_deviation"),
        ("{name: glicko2, initial_rating: 1e308}", "initial_rating"),
        ("{name: glicko2, initial_volatility: 1e-300}", "initial_volatility"),
        ("{name: glicko2, tau: 1e-30}", "tau"),
        ("{name: glicko2, period: 1e-300}", "period"),
        ("{name: openskill, beta2: 1e308}", "beta2"),
        ("{name: openskill, tau2: 1e308}", "tau2"),
        ("{name: bayesian, beta2: 1e308}", "beta2"),
        ("{name: bayesian, tau2: 1e308}", "tau2"),
        ("{name: sph_elo, initial_rating: 1e308}", "initial_rating"),
        ("{name: sph_elo, game_mult: 1e308}", "game_mult"),
        ("{name: sph_elo, t: 1e200}", "t"),
    ],
)
def test_rater_parameters_that_overflow_are_one_line(
    work: Path, capsys: pytest.CaptureFixture[str], rater: str, field: str
) -> None:
    (work / "rater.yaml").write_text(
        TINY.replace("records:", f"raters: {{driver: bayesian, shadows: [{rater}]}}\nrecords:")
    )
    assert main(["validate", "rater.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("lobbysim: error: rater.yaml: raters.shadows[0]: rater '"), err
    assert f": {field} must be " in err, err


def test_game_beta2_is_bounded_too(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "noisy.yaml").write_text(TINY.replace("game: {length: 5}", "game: {beta2: 1e308}"))
    assert main(["validate", "noisy.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "game.beta2: at most 1e+08" in err, err


def test_rater_bounds_admit_their_edges() -> None:
    edges = [
        ("glicko2", {"tau": 10.0, "initial_rating": -1e6, "initial_deviation": 1e4}),
        ("glicko2", {"tau": 0.001, "initial_volatility": 1e-6, "period": 0.001}),
        ("glicko2", {"initial_volatility": 10.0, "initial_rating": 1e6}),
        ("bayesian", {"beta2": 1e8, "tau2": 1e8}),
        ("openskill", {"beta2": 1e8, "tau2": 1e8}),
        ("sph_elo", {"t": 1e6, "game_mult": 1e6, "initial_rating": 1e6, "max_game_length": 1e-3}),
        ("sph_elo", {"game_mult": 1e-6, "initial_rating": -1e6, "max_game_length": float("inf")}),
    ]
    for name, params in edges:
        RATERS.create(name, params)
    with pytest.raises(PluginError, match=r"rater 'glicko2': initial_deviation must be <= 10000"):
        RATERS.create("glicko2", {"initial_deviation": 10_001.0})


# --- 5. duplicate policies, scheduler addresses -----------------------------------------------


@pytest.mark.parametrize("command", ["compare", "sweep"])
def test_a_policy_given_twice_is_one_line(
    work: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    grid = ["--grid", "matchmaker.tick=0.25,1"] if command == "sweep" else []
    args = [command, "tiny.yaml", *grid, "--policies", "draw_chance,fifo,draw_chance"]
    assert main([*args, "--out", "never", "-q", "--jobs", "1"]) == 2
    assert capsys.readouterr().err == (
        "lobbysim: error: --policies: the policy 'draw_chance' is given twice; give each policy "
        "once\n"
    )
    assert not (work / "never").exists()


def test_a_policy_given_twice_in_the_compare_section_is_one_line(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "twice.yaml").write_text(
        TINY.replace("name: tiny", "name: twice")
        + "compare: {policies: [fifo, 'knowledge_gradient(gamma=0.9, rule=discounted)', "
        "{name: knowledge_gradient, rule: discounted, gamma: 0.9}]}\n"
    )
    assert main(["compare", "twice.yaml", "--out", "never", "-q", "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(
        "lobbysim: error: twice.yaml: compare.policies: the policy "
        "'knowledge_gradient(gamma=0.9, rule=discounted)' (as "
    ), err
    assert "is given twice; give each policy once" in err
    assert not (work / "never").exists()


def test_the_scenarios_own_policy_by_name_and_by_spec_is_one_policy() -> None:
    own = PluginSpec("knowledge_gradient", {"gamma": 0.9})
    with pytest.raises(ScenarioError, match=r"'knowledge_gradient\(gamma=0\.9\)' \(as "):
        resolve_policies(own, ["knowledge_gradient", "knowledge_gradient(gamma=0.9)"], "x")
    specs = resolve_policies(own, ["knowledge_gradient", "draw_chance"], "x")
    assert specs == [own, PluginSpec("draw_chance")]


def test_a_scheduler_without_a_port_is_one_line_before_connecting(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["sweep", "tiny.yaml", "--grid", "matchmaker.tick=0.25,1", "--executor", "dask"]
    start = time.perf_counter()
    assert main([*args, "--scheduler", "localhost", "--out", "never", "-q"]) == 2
    assert capsys.readouterr().err == (
        "lobbysim: error: --scheduler: 'localhost' has no port; expected tcp://host:port, e.g. "
        "tcp://localhost:8786\n"
    )
    assert time.perf_counter() - start < 5 and not (work / "never").exists()
    from lobbysim.commands.sweep import scheduler_problem

    assert scheduler_problem("tcp://scheduler-host:8786") is None
    assert scheduler_problem("[::1]:8786") is None
    for address, problem in [
        ("tcp://localhost", "has no port"),
        ("tcp://:8786", "has no host"),
        ("tcp://h:99999", "has no valid port"),
        ("http://h:80", "has the protocol 'http'"),
    ]:
        assert problem in (scheduler_problem(address) or ""), address
