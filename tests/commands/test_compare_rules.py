"""A comparison of FlexMatch rule sets (``lobbysim compare SCENARIO --rules a.json,b.json``,
lobbysim/commands/run.py and lobbysim/commands/run_scenario.py): each rule set runs on the same
seeds, each run is the one ``--set matchmaker.rules.flexmatch=FILE`` gives, the differences are
the second minus the first, the report and headline name rule sets, the folder repeats the
comparison, and bad input is one line with nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

import lobbysim
from lobbysim.cli.main import main
from lobbysim.commands.run import run, run_summary
from lobbysim.commands.run_scenario import rule_labels
from lobbysim.experiments.replications import metric_columns
from lobbysim.scenario import load_scenario

BUNDLED = Path(lobbysim.__file__).parent / "scenarios" / "flexmatch" / "fair_teams_low_ping.json"
#: flexmatch_5v5 shrunk: two hours of a base of 1,500 (a few seconds a run).
SETS = ["horizon=120", "warmup=20", "base.size=1500", "records.ratings_every=60"]
SET_OPTIONS = [part for item in SETS for part in ("--set", item)]


def write_rule_sets(folder: Path) -> tuple[Path, Path]:
    """Write the bundled rule set as ``fair.json`` and a variant whose skill rule is tighter
    (within 50, 100 after two minutes, instead of 200, 300 and 500) as ``tight.json``."""
    fair, tight = folder / "fair.json", folder / "tight.json"
    shutil.copy(BUNDLED, fair)
    data = json.loads(BUNDLED.read_text(encoding="utf-8"))
    data["rules"][0]["maxDistance"] = 50
    data["expansions"][0]["steps"] = [{"waitTimeSeconds": 120, "value": 100}]
    tight.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return fair, tight


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path, Path]:
    """What ``lobbysim compare flexmatch_5v5 --rules fair.json,tight.json`` (2 replications,
    shrunk) runs, without its report (the slow test below runs the command itself): its
    folder, what it prints and the two files."""
    folder = tmp_path_factory.mktemp("rules")
    fair, tight = write_rule_sets(folder)
    out = folder / "cmp"
    _, result = run(
        "flexmatch_5v5", rules=[fair, tight], replications=2, sets=SETS, out=out, report=False
    )
    return out, run_summary(result, out), fair, tight


def test_each_rule_set_runs_on_the_same_seeds_with_paired_differences(
    compared: tuple[Path, str, Path, Path],
) -> None:
    out, _, _, _ = compared
    runs = pd.read_csv(out / "replications.csv")
    assert list(dict.fromkeys(runs["policy"])) == ["fair", "tight"]
    seeds = {label: list(group["seed"]) for label, group in runs.groupby("policy")}
    assert seeds["fair"] == seeds["tight"] and len(seeds["fair"]) == 2
    differences = pd.read_csv(out / "differences.csv")
    metrics = metric_columns(runs)
    assert list(differences["metric"]) == metrics  # one row per metric
    assert set(differences["policy"]) == {"tight"} and set(differences["baseline"]) == {"fair"}
    by_label = {label: group.set_index("replication") for label, group in runs.groupby("policy")}
    row = differences.set_index("metric").loc["queue_time_mean"]
    paired = by_label["tight"]["queue_time_mean"] - by_label["fair"]["queue_time_mean"]
    assert row["mean"] == pytest.approx(paired.mean())
    assert (
        not runs[runs.policy == "fair"][metrics]
        .reset_index(drop=True)
        .equals(runs[runs.policy == "tight"][metrics].reset_index(drop=True))
    )  # the tighter skill rule changes the games


def test_each_rule_set_run_is_the_run_set_gives(
    compared: tuple[Path, str, Path, Path], tmp_path: Path
) -> None:
    out, _, fair, tight = compared
    runs = pd.read_csv(out / "replications.csv")
    for label, file in (("fair", fair), ("tight", tight)):
        sets = [*SETS, f"matchmaker.rules.flexmatch={file}"]
        _, alone = run(
            "flexmatch_5v5", replications=2, sets=sets, out=tmp_path / label, report=False
        )
        mine = runs[runs.policy == label].drop(columns="policy").reset_index(drop=True)
        theirs = alone.metrics.drop(columns="policy").reset_index(drop=True)
        pd.testing.assert_frame_equal(mine[theirs.columns], theirs, check_dtype=False)
        # a metric only the other rule set has (a rule's later expansion step) is empty here
        assert mine.drop(columns=theirs.columns).isna().all().all()


def test_the_headline_names_rule_sets(compared: tuple[Path, str, Path, Path]) -> None:
    out, printed, _, _ = compared
    assert "Headline: each rule set minus fair, paired over 2 replications per rule set" in printed
    assert "policy" not in printed.split("Headline:")[1].split("Metrics")[0]
    folder = lobbysim.load_run(out)
    assert folder.kind == "rule set" and folder.policies == ["fair", "tight"]
    assert folder.headline.startswith("Headline: each rule set minus fair")
    assert repr(folder).startswith(f"RunFolder {out}: flexmatch_5v5: 2 rule sets x 2 replications")


@pytest.mark.slow
def test_the_command_prints_and_reports_rule_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fair, tight = write_rule_sets(tmp_path)
    out = tmp_path / "cmp"
    argv = ["compare", "flexmatch_5v5", "--rules", f"{fair},{tight}", "--replications", "2"]
    assert main([*argv, *SET_OPTIONS, "--out", str(out), "--jobs", "1", "-q"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("compare: the FlexMatch rule sets fair")
    assert "Headline: each rule set minus fair, paired over 2 replications per rule set" in printed
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "A comparison of 2 FlexMatch rule sets (fair, tight) against the baseline fair" in report
    assert "## Which rule set is better" in report
    assert "| rule set vs baseline |" in report
    assert f"fair: {fair} (baseline), tight: {tight}" in report
    assert "Which policy is better" not in report
    assert sorted(p.name for p in (out / "rules").iterdir()) == ["fair.json", "tight.json"]


@pytest.mark.slow
def test_the_folder_repeats_the_comparison(
    compared: tuple[Path, str, Path, Path], tmp_path: Path
) -> None:
    out, _, fair, tight = compared
    assert (out / "rules" / "fair.json").read_bytes() == fair.read_bytes()
    assert (out / "rules" / "tight.json").read_bytes() == tight.read_bytes()
    data = yaml.safe_load((out / "scenario.yaml").read_text(encoding="utf-8"))
    assert data["compare"] == {"rules": ["rules/fair.json", "rules/tight.json"]}
    assert data["matchmaker"]["rules"]["flexmatch"] == "rules/fair.json"
    # the file reads back into the scenario fair ran (its rules from the copy)
    ran = pd.read_csv(out / "replications.csv")
    first = run(
        "flexmatch_5v5",
        replications=2,
        sets=[*SETS, f"matchmaker.rules.flexmatch={fair}"],
        out=tmp_path / "first",
        report=False,
    )[1].scenario
    again = load_scenario(out / "scenario.yaml")
    assert again.replace(compare=None) == first.replace(compare=None, replications=2)
    # moved elsewhere, the folder still repeats it: the same tables
    moved = tmp_path / "moved"
    shutil.copytree(out, moved)
    _, repeated = run(moved / "scenario.yaml", compare=True, out=tmp_path / "again", report=False)
    assert repeated.kind == "rule set" and repeated.policies == ["fair", "tight"]
    pd.testing.assert_frame_equal(repeated.metrics, ran, check_dtype=False)


@pytest.mark.slow
def test_auto_replications_compare_rule_sets(tmp_path: Path) -> None:
    fair, tight = write_rule_sets(tmp_path)
    lines: list[str] = []
    _, result = run(
        "flexmatch_5v5",
        rules=[fair, tight],
        sets=[*SETS, "horizon=80"],  # the first batch is 5 replications of each
        replications="auto",
        max_replications=5,
        out=tmp_path / "auto",
        report=False,
        note=lines.append,
    )
    assert result.kind == "rule set" and result.policies == ["fair", "tight"]
    assert len(result.seeds) == 5 and result.precision is not None
    assert lines[0].startswith("compare: the FlexMatch rule sets fair")
    assert "5 per rule set first" in lines[1]
    assert any("per rule set" in line and "stopped" in line for line in lines)
    assert (tmp_path / "auto" / "precision.csv").is_file()


def test_the_python_api_compares_rule_sets(tmp_path: Path) -> None:
    fair, tight = write_rule_sets(tmp_path)
    overrides = {key: yaml.safe_load(value) for key, value in (s.split("=") for s in SETS)}
    result = lobbysim.compare(
        "flexmatch_5v5", rules=[fair, tight], replications=2, overrides=overrides, progress=False
    )
    assert result.kind == "rule set" and result.policies == ["fair", "tight"]
    assert "each rule set minus fair" in result.headline
    with pytest.raises(ValueError, match="rules, policies"):
        lobbysim.compare("flexmatch_5v5", ["fifo"], rules=[fair], progress=False)


# --- bad input: one line, exit 2, nothing written -----------------------------------------------


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], out: Path) -> list[str]:
    assert main([*argv, "--out", str(out), "-q"]) == 2
    captured = capsys.readouterr()
    assert not out.exists()
    return captured.err.splitlines()


def test_rules_with_policies_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fair, tight = write_rule_sets(tmp_path)
    argv = ["compare", "flexmatch_5v5", "--rules", f"{fair},{tight}", "--policies", "fifo"]
    (line,) = _refused(argv, capsys, tmp_path / "out")
    assert line.startswith("lobbysim: error: --rules and --policies together")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "cannot read the file"),
        ('{"name": ', "not JSON"),
        ("folder", "is a folder"),
    ],
)
def test_a_file_that_cannot_be_read_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, problem: str
) -> None:
    fair, _ = write_rule_sets(tmp_path)
    bad = tmp_path / "bad.json"
    if content == "folder":
        bad.mkdir()
    elif content is not None:
        bad.write_text(content, encoding="utf-8")
    argv = ["compare", "flexmatch_5v5", "--rules", f"{fair},{bad}", *SET_OPTIONS]
    (line,) = _refused(argv, capsys, tmp_path / "out")
    assert line.startswith(f"lobbysim: error: --rules: {bad}")
    assert problem in line


def test_a_refused_rule_set_names_the_file_and_its_json_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fair, tight = write_rule_sets(tmp_path)
    data = json.loads(tight.read_text(encoding="utf-8"))
    data["rules"][0]["type"] = "noSuchType"
    tight.write_text(json.dumps(data), encoding="utf-8")
    argv = ["compare", "flexmatch_5v5", "--rules", f"{fair},{tight}", *SET_OPTIONS]
    lines = _refused(argv, capsys, tmp_path / "out")
    assert lines and all(line.startswith(f"lobbysim: error: --rules: {tight}: ") for line in lines)
    assert any("rules[0].type" in line for line in lines)


#: A 5v5 lobby with no rule set of its own and no world.
PLAIN = """\
name: plain
horizon: 60
warmup: 10
arrivals: {name: poisson, rate: 10.0}
game: {mode: team, team_size: 5, length: 10.0}
matchmaker: {policy: fifo}
"""


def test_a_scenario_without_a_rule_set_gets_the_file_as_set_gives_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("plain.yaml").write_text(PLAIN, encoding="utf-8")
    data = json.loads(BUNDLED.read_text(encoding="utf-8"))
    data["rules"] = data["rules"][:2]  # no latency rule: the lobby has no world
    data["expansions"] = data["expansions"][:2]
    Path("skill.json").write_text(json.dumps(data), encoding="utf-8")
    # its attributes need a binding, with --set as with --rules: the same line
    assert main(["run", "plain.yaml", "--set", "matchmaker.rules.flexmatch=skill.json"]) == 2
    by_set = capsys.readouterr().err.splitlines()
    lines = _refused(["compare", "plain.yaml", "--rules", "skill.json"], capsys, tmp_path / "o")
    assert len(lines) == len(by_set) == 1
    assert lines[0].startswith("lobbysim: error: --rules: skill.json: ")
    assert lines[0].split(": skill.json: ", 1)[1] == by_set[0].split(": skill.json: ", 1)[1]
    # with the binding it runs, under the file's rules in place of none, the scenario's policy
    binding = "matchmaker.rules.attributes.skill={source: rating, scale: 100, offset: 1500}"
    _, result = run(
        "plain.yaml", rules=["skill.json"], sets=[binding], out=tmp_path / "bound", report=False
    )
    assert result.kind == "rule set" and result.policies == ["skill"]
    rules = result.scenario.matchmaker.rules or ()
    assert [rule.name for rule in rules] == ["SimilarSkill", "FairTeams"]
    assert result.scenario.matchmaker.policy.name == "fifo"


def test_a_rule_file_given_twice_or_by_set_too_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fair, _ = write_rule_sets(tmp_path)
    (line,) = _refused(
        ["compare", "flexmatch_5v5", "--rules", f"{fair},{fair}"], capsys, tmp_path / "o"
    )
    assert line == f"lobbysim: error: --rules: {fair} is given twice (as {fair} too)"
    argv = [
        "compare",
        "flexmatch_5v5",
        "--rules",
        str(fair),
        "--set",
        f"matchmaker.rules.flexmatch={fair}",
    ]
    (line,) = _refused(argv, capsys, tmp_path / "o")
    assert "--rules and --set matchmaker.rules.flexmatch both name the rule set" in line


def test_labels_are_stems_or_enough_of_the_path_to_tell_them_apart() -> None:
    assert rule_labels(["a/fair.json", "b/tight.json"]) == ["fair", "tight"]
    assert rule_labels(["/x/a/rules.json", "/x/b/rules.json", "/y/c.json"]) == [
        "a/rules",
        "b/rules",
        "c",
    ]
    assert rule_labels(["/p/a/r.json", "/q/a/r.json"]) == ["p/a/r", "q/a/r"]
