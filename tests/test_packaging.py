"""lobbysim as a user gets it: a wheel that runs its own quickstart, bundled scenarios found by
name, ``lobbysim init``, ``python -m lobbysim`` and types that mypy sees.

The wheel test builds the wheel with ``pip wheel`` (no build isolation, so no network: hatchling
comes with the ``test`` extra), installs it into a fresh virtual environment without network
(the dependencies come from this environment's site-packages through a ``.pth`` file, which
does not run this environment's own ``.pth`` files, so an editable lobbysim does not leak in)
and runs ``lobbysim compare quickstart`` in an empty folder.
"""

from __future__ import annotations

import importlib.util
import os
import site
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from lobbysim.cli.main import main
from lobbysim.scenario import ScenarioError, bundled_scenarios, find_scenario, load_scenario

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "lobbysim" / "scenarios"
EXAMPLE = "examples/custom_arrivals.py"
SHORT = ["--replications", "2", "--set", "horizon=90", "--set", "warmup=15", "--jobs", "2"]


def _env() -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH pointing into the repository."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONNOUSERSITE"] = "1"
    env["MPLBACKEND"] = "Agg"
    return env


def _run(args: list[str | Path], cwd: Path, *more: str | Path) -> subprocess.CompletedProcess[str]:
    """Run ``args`` and then ``more`` in ``cwd``, capturing the output."""
    return subprocess.run(
        [str(a) for a in (*args, *more)],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


# --- the wheel, installed in a fresh environment ----------------------------------------------


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("hatchling") is None:
        pytest.skip(
            "hatchling is not installed (it comes with the test extra): cannot build offline"
        )
    out = tmp_path_factory.mktemp("wheel")
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"],
        out,
        *("-w", out, ROOT),
    )
    assert built.returncode == 0, built.stderr
    (path,) = out.glob("lobbysim-*.whl")
    return path


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the wheel; its dependencies seen through a .pth."""
    env = tmp_path_factory.mktemp("venv") / "env"
    made = _run([sys.executable, "-m", "venv", "--without-pip", env], cwd=env.parent)
    assert made.returncode == 0, made.stderr
    python = env / "bin" / "python"
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], env)
    ours = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(purelib.stdout.strip()) / "_dependencies.pth").write_text("\n".join(ours) + "\n")
    installed = _run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed"],
        env.parent,
        wheel,
    )
    assert installed.returncode == 0, installed.stderr
    return env


@pytest.mark.slow
def test_the_wheel_ships_the_scenarios_their_plugin_py_typed_and_the_licence(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in sorted(BUNDLED.glob("*.yaml")):
        assert f"lobbysim/scenarios/{path.name}" in names
    assert f"lobbysim/scenarios/{EXAMPLE}" in names
    assert {"lobbysim/py.typed", "lobbysim/__main__.py"} <= names
    assert "lobbysim-0.1.0.dist-info/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read("lobbysim-0.1.0.dist-info/METADATA").decode()
    assert "Project-URL: Issues, https://github.com/lobbysim/lobbysim/issues" in metadata


@pytest.mark.slow
def test_the_sdist_keeps_the_packages_copy_of_linked_folders(tmp_path: Path) -> None:
    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("hatchling is not installed (it comes with the test extra)")
    built = _run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", tmp_path], ROOT)
    assert built.returncode == 0, built.stderr
    (sdist,) = tmp_path.glob("lobbysim-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    assert f"lobbysim/scenarios/{EXAMPLE}" in names
    assert {f"lobbysim/scenarios/{p.name}" for p in BUNDLED.glob("*.yaml")} <= names
    assert "LICENSE" in names


@pytest.mark.slow
def test_an_installed_wheel_compares_the_quickstart_in_an_empty_folder(
    venv: Path, tmp_path: Path
) -> None:
    where = _run(
        [venv / "bin" / "python", "-c", "import lobbysim; print(lobbysim.__file__)"], tmp_path
    )
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout  # not the editable one
    done = _run(
        [venv / "bin" / "lobbysim", "compare", "quickstart"],
        tmp_path,
        *("--policies", "point_estimate,draw_chance", *SHORT),
    )
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "outputs").iterdir()
    assert folder.name.startswith("quickstart-")
    for name in ("report.html", "report.md", "differences.csv", "scenario.yaml"):
        assert (folder / name).stat().st_size > 0, name
    assert "draw_chance" in (folder / "differences.csv").read_text()


@pytest.mark.slow
def test_an_installed_wheel_runs_a_bundled_scenario_with_its_plugin_file(
    venv: Path, tmp_path: Path
) -> None:
    done = _run(
        [venv / "bin" / "lobbysim", "run", "custom_arrivals", "--out", "run", *SHORT], tmp_path
    )
    assert done.returncode == 0, done.stderr
    resolved = (tmp_path / "run" / "scenario.yaml").read_text()
    assert f"{venv}/" in resolved and f"/lobbysim/scenarios/{EXAMPLE}:Evenings" in resolved


@pytest.mark.slow
def test_python_dash_m_lobbysim_is_the_command(venv: Path, tmp_path: Path) -> None:
    helped = _run([venv / "bin" / "python", "-m", "lobbysim", "--help"], tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("usage: lobbysim ")
    assert "init" in helped.stdout and "compare" in helped.stdout
    listed = _run([venv / "bin" / "python", "-m", "lobbysim", "init"], tmp_path)
    assert listed.returncode == 0 and "quickstart" in listed.stdout


# --- in this environment ----------------------------------------------------------------------


def test_the_bundled_scenarios_are_the_packages_yaml_files() -> None:
    bundled = bundled_scenarios()
    assert list(bundled) == sorted(p.stem for p in BUNDLED.glob("*.yaml"))
    assert {"quickstart", "custom_arrivals", "live_game"} <= set(bundled)
    assert (
        bundled["quickstart"].read_bytes() == (ROOT / "scenarios" / "quickstart.yaml").read_bytes()
    )


def test_a_name_finds_a_bundled_scenario_and_an_existing_path_beats_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    bundled = bundled_scenarios()["quickstart"]
    assert find_scenario("quickstart") == bundled
    assert find_scenario("quickstart.yaml") == bundled
    assert load_scenario("quickstart").name == "quickstart"
    Path("quickstart.yaml").write_text("name: mine\nhorizon: 100\n")
    assert find_scenario("quickstart.yaml") == Path("quickstart.yaml")
    assert load_scenario("quickstart.yaml").name == "mine"
    assert find_scenario("quickstart") == Path("quickstart.yaml")  # ./NAME.yaml wins too
    Path("quickstart").write_text("name: bare\n")
    assert load_scenario("quickstart").name == "bare"
    Path("live_game").mkdir()  # a folder is not a scenario file: the name is meant
    assert find_scenario("live_game") == bundled_scenarios()["live_game"]
    # a path with a folder is a path, reported by the reader when missing
    assert find_scenario("sub/quickstart.yaml") == Path("sub/quickstart.yaml")
    with pytest.raises(ScenarioError, match="cannot read the file"):
        load_scenario("sub/quickstart.yaml")


def test_an_unknown_name_is_one_line_listing_the_bundled_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for command in (["run", "quickstrat"], ["validate", "quickstrat"], ["sweep", "quickstrat"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert err.startswith("lobbysim: error: quickstrat: no such file, and no bundled scenario")
        assert "(did you mean 'quickstart'?)" in err
        assert "bundled scenarios: custom_arrivals, " in err
    assert not (tmp_path / "outputs").exists()


def test_validate_takes_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "quickstart", "team_4v4.yaml"]) == 0
    assert capsys.readouterr().out.splitlines() == ["quickstart: ok", "team_4v4.yaml: ok"]


def test_a_plugin_file_is_found_from_the_scenario_file_when_not_from_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # from the repository's folder: as written, so run keys stay equal
    assert load_scenario("scenarios/custom_arrivals.yaml").arrivals.name == f"{EXAMPLE}:Evenings"
    monkeypatch.chdir(tmp_path)  # elsewhere: the scenario file's own folder
    name = load_scenario("custom_arrivals").arrivals.name
    assert name == f"{(BUNDLED / EXAMPLE).absolute()}:Evenings"
    (tmp_path / "nowhere.yaml").write_text("arrivals: {name: 'examples/none.py:Evenings'}\n")
    assert load_scenario("nowhere.yaml").arrivals.name == "examples/none.py:Evenings"


def test_init_copies_a_scenario_once_and_prints_how_to_run_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "quickstart"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == ["wrote quickstart.yaml", "run it: lobbysim run quickstart.yaml"]
    copied = tmp_path / "quickstart.yaml"
    assert copied.read_bytes() == (BUNDLED / "quickstart.yaml").read_bytes()
    copied.write_text(copied.read_text().replace("name: quickstart", "name: edited"))
    assert main(["init", "quickstart"]) == 2  # never overwrites
    err = capsys.readouterr().err
    assert err == (
        "lobbysim: error: init: quickstart.yaml exists already: not overwritten "
        "(choose another file with --to)\n"
    )
    assert load_scenario("quickstart.yaml").name == "edited"  # the user's file is untouched
    assert main(["init", "team_4v4.yaml", "--to", "my/lobby.yaml"]) == 0
    assert (tmp_path / "my" / "lobby.yaml").read_bytes() == (BUNDLED / "team_4v4.yaml").read_bytes()
    assert main(["init", "team_4v4", "--to", "my"]) == 0  # a folder: NAME.yaml in it
    assert (tmp_path / "my" / "team_4v4.yaml").is_file()
    assert main(["init", "quickstrat"]) == 2
    assert "(did you mean 'quickstart'?); bundled scenarios: " in capsys.readouterr().err


def test_init_copies_the_plugin_file_a_scenario_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "custom_arrivals", "--to", "mine/ca.yaml"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        "wrote mine/ca.yaml",
        f"wrote mine/{EXAMPLE}",
    ]
    assert (tmp_path / "mine" / EXAMPLE).read_bytes() == (BUNDLED / EXAMPLE).read_bytes()
    # found next to the copy, not in the package
    name = load_scenario("mine/ca.yaml").arrivals.name
    assert name == f"{(tmp_path / 'mine' / EXAMPLE).absolute()}:Evenings"
    assert main(["validate", "mine/ca.yaml"]) == 0
    # a different plug-in file of the same name is refused, before anything is written
    (tmp_path / "other" / "examples").mkdir(parents=True)
    (tmp_path / "other" / EXAMPLE).write_text("# mine\n")
    assert main(["init", "custom_arrivals", "--to", "other"]) == 2
    assert "other/examples/custom_arrivals.py exists already with other content" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "other" / "custom_arrivals.yaml").exists()


def test_init_without_a_name_lists_the_bundled_scenarios(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["init"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert main(["init", "--list"]) == 0
    assert capsys.readouterr().out.splitlines() == listed
    rows = {line.split()[0]: line.split(None, 1)[1] for line in listed[1:]}
    assert list(rows) == list(bundled_scenarios())
    assert rows["quickstart"] == (
        "a small 1v1 game with a persistent player base, two simulated days, ten replications."
    )
    assert rows["one_visit"] == (
        "a small 1v1 lobby of one-visit players, eight simulated hours, five replications."
    )


@pytest.mark.slow
def test_mypy_sees_the_types_of_an_installed_lobbysim(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it comes with the test extra)")
    user = tmp_path / "user.py"
    user.write_text(
        "from lobbysim.scenario import Scenario, load_scenario\n\n"
        'scenario: Scenario = load_scenario("quickstart")\n'
        "horizon: str = scenario.horizon\n"
    )
    checked = _run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull],
        tmp_path,  # not the repository: lobbysim is found installed, as a user has it
        *("--follow-imports", "silent", "--no-error-summary", user.name),
    )
    assert checked.stdout.splitlines() == [
        'user.py:4: error: Incompatible types in assignment (expression has type "float", '
        'variable has type "str")  [assignment]'
    ], checked.stdout + checked.stderr
