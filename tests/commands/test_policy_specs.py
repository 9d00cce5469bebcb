"""Policy specs with parameters (``knowledge_gradient(gamma=0.95)``), their labels and folders, the
``compare:`` section, and what ``lobbysim compare`` runs without ``--policies``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from lobbysim.cli.main import main
from lobbysim.commands import run as runs
from lobbysim.commands import run_scenario as checks
from lobbysim.scenario import PluginSpec, Scenario, ScenarioError, load_scenario
from lobbysim.scenario.specs import (
    policy_spec,
    record_folders,
    resolve_policies,
    spec_label,
    split_specs,
)

SMALL = """\
name: small
horizon: 60
warmup: 10
seed: 3
arrivals: {name: poisson, rate: 1.5}
population: {patience_mean: 3.0, session_games_mean: 4}
game: {length: 8}
matchmaker:
  policy: draw_chance
  threshold: [[0, 0.5], [1, 0.0]]
records: {ratings_every: 30}
"""


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    return path


@pytest.mark.parametrize(
    ("text", "name", "params", "label"),
    [
        ("draw_chance", "draw_chance", {}, "draw_chance"),
        (" draw_chance ", "draw_chance", {}, "draw_chance"),
        ("knowledge_gradient()", "knowledge_gradient", {}, "knowledge_gradient"),
        (
            "knowledge_gradient(gamma = 0.95)",
            "knowledge_gradient",
            {"gamma": 0.95},
            "knowledge_gradient(gamma=0.95)",
        ),
        (
            "knowledge_gradient(rule=finite_horizon, horizon=50)",
            "knowledge_gradient",
            {"rule": "finite_horizon", "horizon": 50},
            "knowledge_gradient(rule=finite_horizon, horizon=50)",
        ),
        (
            "x(a=true, b=null, c=5e-1)",
            "x",
            {"a": True, "b": None, "c": 0.5},
            "x(a=true, b=null, c=0.5)",
        ),
        ('x(s="a, b (c)")', "x", {"s": "a, b (c)"}, 'x(s="a, b (c)")'),
        ("x(s='yes')", "x", {"s": "yes"}, 'x(s="yes")'),  # quoted: plain yes is text in 1.2 too
        ("x(v=[1, 2])", "x", {"v": [1, 2]}, "x(v=[1, 2])"),
        ("pkg.mod:Class(k=1)", "pkg.mod:Class", {"k": 1}, "pkg.mod:Class(k=1)"),
    ],
)
def test_a_spec_is_read_and_its_label_reads_back_to_it(
    text: str, name: str, params: dict[str, object], label: str
) -> None:
    spec = policy_spec(text)
    assert spec == PluginSpec(name, params)
    assert spec_label(spec) == label
    assert policy_spec(spec_label(spec)) == spec


def test_a_mapping_is_a_spec_and_labels_like_its_text() -> None:
    spec = policy_spec({"name": "knowledge_gradient", "gamma": 0.95})
    assert spec_label(spec) == "knowledge_gradient(gamma=0.95)"
    assert policy_spec(spec) is spec


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("knowledge_gradient(gamma=0.9", "the parameters must end with ')'"),
        ("knowledge_gradient(gamma)", "expected key=value, got 'gamma'"),
        ("knowledge_gradient(gamma=)", "the parameter 'gamma' has no value"),
        ("knowledge_gradient(gamma=1, gamma=2)", "the parameter 'gamma' is given twice"),
        ("knowledge_gradient(1x=2)", "'1x' is not a parameter name"),
        ("knowledge_gradient(a=1))", "its brackets or quotes do not match"),
        ("(gamma=1)", "the name is missing"),
        ("", "it is empty"),
    ],
)
def test_a_bad_spec_is_one_line_naming_it(text: str, reason: str) -> None:
    with pytest.raises(ScenarioError) as info:
        policy_spec(text, "--policies")
    message = str(info.value)
    assert message.startswith(f"--policies: cannot read the policy {text!r}: {reason}")
    assert message.endswith("expected a policy name or name(key=value, ...)")
    assert "\n" not in message


def test_specs_split_on_top_level_commas_only() -> None:
    assert split_specs('a,knowledge_gradient(gamma=0.9, rule=discounted), b(s="x,y"),c') == [
        "a",
        "knowledge_gradient(gamma=0.9, rule=discounted)",
        'b(s="x,y")',
        "c",
    ]


def test_record_folders_are_safe_and_distinct() -> None:
    labels = [
        "draw_chance",
        "knowledge_gradient(gamma=0.95)",
        "knowledge_gradient(gamma=0.5)",
        '../up/file.py:Policy(s="a b")',
        "X(a=1)",
        "x(a=1)",
    ]
    folders = record_folders(labels)
    assert folders["draw_chance"] == "draw_chance"
    assert folders["knowledge_gradient(gamma=0.95)"] == "knowledge_gradient-gamma=0.95"
    assert len({f.lower() for f in folders.values()}) == len(labels)  # even ignoring case
    for folder in folders.values():
        assert "/" not in folder and not folder.startswith(".") and folder.strip()
        assert set(folder) <= set(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.=-"
        )


def test_a_bare_name_of_the_scenarios_own_policy_keeps_its_parameters() -> None:
    own = PluginSpec("knowledge_gradient", {"gamma": 0.9})
    specs = resolve_policies(own, ["knowledge_gradient", "draw_chance"], "--policies")
    assert [spec_label(s) for s in specs] == ["knowledge_gradient(gamma=0.9)", "draw_chance"]
    # the bare name and the spec are one policy: given twice
    # (tests/hardening/test_hardening_inputs.py)
    with pytest.raises(ScenarioError, match="is given twice"):
        resolve_policies(own, ["knowledge_gradient", "knowledge_gradient(gamma=0.9)"], "--policies")


def test_the_compare_section_takes_texts_and_mappings_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        SMALL
        + "compare:\n  policies:\n    - draw_chance\n    - knowledge_gradient(gamma=0.95)\n"
        + "    - {name: knowledge_gradient, gamma: 0.5}\n"
    )
    scenario = load_scenario(path)
    assert scenario.compare is not None
    assert [spec_label(s) for s in scenario.compare.policies] == [
        "draw_chance",
        "knowledge_gradient(gamma=0.95)",
        "knowledge_gradient(gamma=0.5)",
    ]
    assert Scenario.from_dict(scenario.to_dict()) == scenario
    assert "compare" not in load_scenario(tmp_path / "c.yaml").replace(compare=None).to_dict()


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("compare: {policies: []}", "compare.policies: expected a non-empty list of policies"),
        ("compare: {policies: draw_chance}", "compare.policies: expected a non-empty list"),
        (
            "compare: {policies: ['kg(gamma=']}",
            "compare.policies[0]: cannot read the policy 'kg(gamma='",
        ),
        ("compare: {polices: [draw_chance]}", "compare.polices: unknown field (did you mean"),
    ],
)
def test_a_bad_compare_section_is_reported(
    section: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(SMALL + section + "\n")
    assert main(["validate", str(path)]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("policies", "message"),
    [
        (
            "draw_chance,knowledge_gradient(gama=0.9)",
            "--policies: knowledge_gradient(gama=0.9): policy 'knowledge_gradient' has no "
            "parameter 'gama' (did you mean 'gamma'?)",
        ),
        (
            "draw_chance,knowledge_gradient(gamma=1.5)",
            "--policies: knowledge_gradient(gamma=1.5): policy 'knowledge_gradient': gamma must "
            "be in (0, 1), got 1.5",
        ),
        (
            "draw_chance,knowlege_gradient(gamma=0.9)",
            "unknown policy 'knowlege_gradient' (did you mean 'knowledge_gradient'?)",
        ),
        (
            "draw_chance,knowledge_gradient(gamma=0.9",
            "--policies: cannot read the policy 'knowledge_gradient(gamma=0.9'",
        ),
        ("draw_chance,,oracle", "--policies: expected comma-separated policies"),
    ],
)
def test_a_bad_policy_spec_is_one_line_exit_2_and_no_folder(
    policies: str,
    message: str,
    scenario_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "never"
    argv = ["compare", str(scenario_file), "--policies", policies, "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_the_sweep_takes_specs_too(scenario_file: Path, tmp_path: Path) -> None:
    from lobbysim.commands.sweep import build_sweep

    sweep = build_sweep(
        scenario_file,
        grid=["matchmaker.tick=0.5,1"],
        policies=["draw_chance", "knowledge_gradient(gamma=0.9)"],
    )
    assert sweep.policies == ("draw_chance", "knowledge_gradient(gamma=0.9)")
    kg = [run for run in sweep.runs if run.policy == "knowledge_gradient(gamma=0.9)"]
    expected = PluginSpec("knowledge_gradient", {"gamma": 0.9})
    assert all(run.scenario.matchmaker.policy == expected for run in kg)
    assert [run.scenario.matchmaker.tick for run in kg] == [0.5, 1.0]
    assert (
        main(["sweep", str(scenario_file), "--grid", "matchmaker.tick=1", "--policies", "kg(x=1)"])
        == 2
    )


@pytest.mark.slow
def test_two_variants_of_one_policy_run_side_by_side(scenario_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    policies = [
        "knowledge_gradient(gamma=0.5)",
        "knowledge_gradient",
        "knowledge_gradient(gamma=0.99)",
    ]
    _, result = runs.run(scenario_file, policies=policies, replications=2, out=out, jobs=2)
    assert result.policies == policies
    m = result.metrics.set_index(["policy", "replication"]).drop(columns="seed")
    # the parameters reach the policy: gamma = 0.99 is the default, 0.5 plays differently
    pd.testing.assert_frame_equal(
        m.loc["knowledge_gradient"], m.loc["knowledge_gradient(gamma=0.99)"]
    )
    assert not m.loc["knowledge_gradient"].equals(m.loc["knowledge_gradient(gamma=0.5)"])
    d = result.differences
    assert set(d.policy) == {"knowledge_gradient", "knowledge_gradient(gamma=0.99)"}
    assert set(d.baseline) == {"knowledge_gradient(gamma=0.5)"}
    assert {p.name for p in (out / "records").iterdir()} == {
        "knowledge_gradient-gamma=0.5",
        "knowledge_gradient",
        "knowledge_gradient-gamma=0.99",
    }
    assert list(pd.read_csv(out / "summary.csv").policy.unique()) == policies
    # the folder's scenario.yaml lists the compared policies: compare repeats them from it
    again = load_scenario(out / "scenario.yaml")
    assert again.compare is not None
    assert [spec_label(s) for s in again.compare.policies] == policies


@pytest.mark.slow
def test_compare_without_policies_runs_the_scenarios_policy_and_the_baselines(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    argv = ["compare", str(scenario_file), "--replications", "2", "--out", str(out), "-q"]
    assert main([*argv, "--jobs", "2"]) == 0
    printed = capsys.readouterr().out
    said = " ".join(printed[: printed.index("\nwrote ")].split())  # the note, wrapped at 100
    assert all(len(line) <= 100 for line in printed.splitlines()[:3])
    assert said.startswith(
        "compare: draw_chance (the scenario's policy, the reference of the differences) against "
        "the bounds uniform_random (no matchmaking) and oracle (matching on true skill)"
    )
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.policy.unique()) == ["draw_chance", "uniform_random", "oracle"]
    assert set(pd.read_csv(out / "differences.csv").baseline) == {"draw_chance"}


def test_a_compare_section_replaces_the_defaults(scenario_file: Path) -> None:
    scenario = load_scenario(scenario_file)
    with_section = Scenario.from_dict(
        {**scenario.to_dict(), "compare": {"policies": ["point_estimate", "draw_chance"]}}
    )
    specs, why = checks.compare_policies(with_section)
    assert [spec_label(s) for s in specs] == ["point_estimate", "draw_chance"]
    assert why == "compare: point_estimate, draw_chance, from the scenario's compare: section"
    specs, _ = checks.compare_policies(with_section, ["oracle"])  # --policies wins
    assert [spec_label(s) for s in specs] == ["oracle"]


def test_a_baseline_the_lobby_cannot_run_is_left_out_and_said(
    scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # engagement needs a player base with a retention model, which this lobby has not
    monkeypatch.setattr(checks, "BASELINES", ("uniform_random", "engagement"))
    specs, why = checks.compare_policies(load_scenario(scenario_file))
    assert [spec_label(s) for s in specs] == ["draw_chance", "uniform_random"]
    assert "engagement is left out: matchmaker.policy: 'engagement' predicts churn" in why
