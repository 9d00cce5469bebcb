"""The JSON Schema of scenario files (``lobbysim schema``, lobbysim/scenario/schema.py).

It accepts every bundled scenario and docs/scenarios.md's annotated tour, rejects the mistakes the
parser rejects (unknown fields, wrong types, values outside a fixed set), agrees with the
validation on its explicit tables (enums, non-empty lists, required fields), describes every
field, and its committed copy beside the bundled scenarios is the generated one.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lobbysim.cli.main import main
from lobbysim.players.population import Population
from lobbysim.registry import PluginError
from lobbysim.scenario import Scenario, ScenarioError, bundled_scenarios
from lobbysim.scenario.attributes import AttributeConfig
from lobbysim.scenario.bundled import scenario_headline
from lobbysim.scenario.file_limits import FileLimit
from lobbysim.scenario.files import read_scenario_data
from lobbysim.scenario.matchmaker import MatchmakerConfig
from lobbysim.scenario.model import (
    CompareConfig,
    GameRules,
    RecordsConfig,
)
from lobbysim.scenario.parties import PartiesConfig
from lobbysim.scenario.rules import RuleConfig
from lobbysim.scenario.schema import (
    ENUMS,
    FALLBACK_DESCRIPTIONS,
    MODELINE,
    NON_EMPTY,
    REQUIRED,
    SCHEMA_FILE,
    field_descriptions,
    scenario_schema,
    schema_text,
)
from lobbysim.scenario.teams import TeamConfig
from lobbysim.scenario.world import WorldConfig
from lobbysim.yaml_input import load_yaml, read_yaml_file

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "lobbysim" / "scenarios"
TOUR = ROOT / "docs" / "scenarios.md"  # the annotated tour, moved there from the README

SCHEMA = scenario_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
#: How an editor still on draft 7 (the YAML language server) reads it.
DRAFT7 = jsonschema.Draft7Validator({k: v for k, v in SCHEMA.items() if k != "$schema"})


def schema_errors(data: Any) -> list[str]:
    """The schema's complaints about ``data``, one line each (path: message)."""
    return [
        f"{'.'.join(str(p) for p in e.absolute_path)}: {e.message}"
        for e in VALIDATOR.iter_errors(data)
    ]


def model_problems(data: dict[str, Any]) -> list[str]:
    """The parser's and validation's complaints about ``data`` (none: it builds)."""
    try:
        Scenario.from_dict(data)
    except ScenarioError as exc:
        return exc.problems
    return []


# --- what it accepts ------------------------------------------------------------------------------


def test_the_schema_is_a_draft_2020_12_schema() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name", list(bundled_scenarios()))
def test_every_bundled_scenario_validates_as_written_and_as_plain_data(name: str) -> None:
    path = bundled_scenarios()[name]
    assert schema_errors(read_yaml_file(path)) == []
    scenario = Scenario.from_dict(read_scenario_data(path))
    assert schema_errors(scenario.to_dict()) == []


def _keywords(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _keywords(value)
    elif isinstance(node, list):
        for value in node:
            yield from _keywords(value)


def test_a_draft_7_editor_reads_it_the_same_way() -> None:
    for node in _keywords(SCHEMA):
        assert "prefixItems" not in node and node.get("items") is not False, node
        if "$ref" in node:
            assert set(node) <= {"$ref", "description", "default"}, node
    for path in bundled_scenarios().values():
        assert list(DRAFT7.iter_errors(read_yaml_file(path))) == []
    for _, data, _ in BROKEN:
        assert list(DRAFT7.iter_errors(data))


def test_the_readme_tour_validates() -> None:
    text = TOUR.read_text(encoding="utf-8")
    (tour,) = re.findall(r"```yaml\n(name: tour .*?)```", text, re.S)
    assert schema_errors(load_yaml(tour)) == []


def test_a_defaulted_scenario_and_nulls_for_optional_sections_validate() -> None:
    assert schema_errors({}) == []
    nulls = {name: None for name in ("sweep", "base", "compare", "world", "parties")}
    assert schema_errors({**nulls, "attributes": None, "matchmaker": {"rules": None}}) == []
    assert model_problems({**nulls, "attributes": None, "matchmaker": {"rules": None}}) == []


# --- what it rejects, as the parser does ----------------------------------------------------------

WORLD = {"data_centres": ["dc"], "regions": [{"name": "r", "share": 1.0}]}

BROKEN: list[tuple[str, dict[str, Any], str]] = [
    ("an unknown field", {"horizonn": 600}, "horizonn"),
    ("an unknown field of a section", {"game": {"lenght": 10}}, "game.lenght"),
    ("text for a number", {"horizon": "600"}, "horizon"),
    ("a fraction for a whole number", {"seed": 1.5}, "seed"),
    (
        "text for true or false",
        {"matchmaker": {"wake_on_arrival": "yes"}},
        "matchmaker.wake_on_arrival",
    ),
    ("a mode not 1v1, team or ffa", {"game": {"mode": "2v2"}}, "game.mode"),
    ("an unknown records format", {"records": {"format": "json"}}, "records.format"),
    (
        "a step of three numbers",
        {"matchmaker": {"threshold": [[0, 0.5, 1]]}},
        "matchmaker.threshold",
    ),
    ("an empty threshold", {"matchmaker": {"threshold": []}}, "matchmaker.threshold"),
    ("a plug-in without a name", {"matchmaker": {"policy": {"gamma": 0.9}}}, "matchmaker.policy"),
    ("a list for a plug-in", {"arrivals": ["poisson"]}, "arrivals"),
    ("an unknown host rule", {"world": {**WORLD, "host": "closest"}}, "world.host"),
    (
        "an unknown party skill rule",
        {"game": {"mode": "team"}, "parties": {"skill": "mean"}},
        "parties.skill",
    ),
    (
        "an unknown rule kind",
        {"matchmaker": {"rules": [{"name": "r", "kind": "skill_distanse", "limit": 1}]}},
        "matchmaker.rules[0].kind",
    ),
    (
        "an unknown field of a FlexMatch reference",
        {"matchmaker": {"rules": {"flexmatch": "rules.json", "bindings": {}}}},
        "matchmaker.rules.bindings",
    ),
    ("an unknown attribute type", {"attributes": {"p": {"type": "text"}}}, "attributes.p.type"),
    (
        "a region without its share",
        {"world": {**WORLD, "regions": [{"name": "r"}]}},
        "world.regions[0]",
    ),
]


@pytest.mark.parametrize(("data", "where"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN])
def test_the_schema_and_the_parser_reject_the_same_mistakes(
    data: dict[str, Any], where: str
) -> None:
    assert schema_errors(data), "the schema accepts it"
    problems = model_problems(data)
    assert problems, "the parser accepts it"
    assert any(problem.startswith(f"{where}:") for problem in problems), problems
    # an editor points at the same place (or the section holding an unknown key)
    best = jsonschema.exceptions.best_match(VALIDATOR.iter_errors(data))
    at = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in best.absolute_path)
    at = at.lstrip(".")
    assert where.startswith(at) or at.startswith(where), (at, best.message)


@pytest.mark.parametrize(
    "population",
    [{"skill_meen": 0.0}, {"skill_sd": "2"}, {"prior": "uniform"}, {"prior_seed": 1.5}],
)
def test_population_mistakes_are_the_schemas_and_validates(population: dict[str, Any]) -> None:
    # population is plain data to the parser, read by Population.from_params (lobbysim validate)
    assert schema_errors({"population": population})
    with pytest.raises(PluginError):
        Population.from_params(population)


# --- the explicit tables agree with the validation ------------------------------------------------

#: A scenario with every section the tables reach, valid as it is.
FULL: dict[str, Any] = {
    "game": {"mode": "team", "teams": [{"name": "a", "max_players": 2, "quantity": 2}]},
    "world": copy.deepcopy(WORLD),
    "parties": {"sizes": [[1, 0.5], [2, 0.5]]},
    "attributes": {"a": {"type": "number", "source": "drawn", "mean": 0.0, "sd": 1.0}},
    "matchmaker": {
        "rules": [
            {
                "name": "r0",
                "kind": "skill_distance",
                "limit": 1.0,
                "read_from": {"property": "maxDistance", "factor": 1.0},
            }
        ]
    },
    "compare": {"policies": ["draw_chance"]},
}
#: Where each section of the tables sits in FULL.
SECTIONS: dict[type, list[str]] = {
    GameRules: ["game"],
    MatchmakerConfig: ["matchmaker"],
    RecordsConfig: ["records"],
    WorldConfig: ["world"],
    PartiesConfig: ["parties"],
    CompareConfig: ["compare"],
    RuleConfig: ["matchmaker", "rules", 0],  # type: ignore[list-item]
    AttributeConfig: ["attributes", "a"],
    TeamConfig: ["game", "teams", 0],  # type: ignore[list-item]
    FileLimit: ["matchmaker", "rules", 0, "read_from"],  # type: ignore[list-item]
}


def _with(cls: type, name: str, value: Any, drop: bool = False) -> tuple[dict[str, Any], str]:
    """FULL with the field ``name`` of section ``cls`` set to ``value`` (or left out), and its
    field path as the parser names it."""
    data = copy.deepcopy(FULL)
    node: Any = data
    for key in SECTIONS[cls]:
        node = node.setdefault(key, {}) if isinstance(key, str) else node[key]
    if drop:
        node.pop(name, None)
    else:
        node[name] = value
    path = ".".join(str(k) for k in SECTIONS[cls]).replace(".0", "[0]")
    return data, f"{path}.{name}"


def test_the_full_scenario_is_valid() -> None:
    assert model_problems(FULL) == []
    assert schema_errors(FULL) == []


@pytest.mark.parametrize(("cls", "name"), list(ENUMS), ids=[f"{c.__name__}.{n}" for c, n in ENUMS])
def test_each_enum_is_what_the_validation_accepts(cls: type, name: str) -> None:
    def refused(value: str) -> bool:
        if cls is Population:
            try:
                Population.from_params({name: value})
            except PluginError as exc:
                return name in str(exc)
            return False
        data, path = _with(cls, name, value)
        return any(p.startswith(f"{path}: expected") for p in model_problems(data))

    for value in ENUMS[cls, name]:
        assert not refused(value), value
    assert refused("no_such_value")


@pytest.mark.parametrize(
    ("cls", "name"), NON_EMPTY, ids=[f"{c.__name__}.{n}" for c, n in NON_EMPTY]
)
def test_each_list_the_schema_needs_non_empty_the_validation_does(cls: type, name: str) -> None:
    data, path = _with(cls, name, [])
    assert any(p.startswith(path) for p in model_problems(data)), model_problems(data)
    assert schema_errors(data)


@pytest.mark.parametrize(("cls", "name"), REQUIRED, ids=[f"{c.__name__}.{n}" for c, n in REQUIRED])
def test_each_field_the_schema_requires_the_validation_does(cls: type, name: str) -> None:
    data, path = _with(cls, name, None, drop=True)
    assert any(p.startswith(path) for p in model_problems(data)), model_problems(data)
    assert schema_errors(data)


def _properties(node: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every property of every object in the schema, with where it is."""
    if isinstance(node, dict):
        for name, prop in node.get("properties", {}).items():
            yield f"{where}.{name}", prop
        for key, value in node.items():
            yield from _properties(value, f"{where}/{key}")
    elif isinstance(node, list):
        for value in node:
            yield from _properties(value, where)


def test_every_property_has_a_description() -> None:
    found = list(_properties(SCHEMA))
    assert len(found) > 100
    assert [where for where, prop in found if not prop.get("description", "").strip()] == []
    assert [n for n, d in SCHEMA["$defs"].items() if not d.get("description", "").strip()] == []


def test_the_fallback_descriptions_only_fill_gaps_of_the_docstrings() -> None:
    # once a class's docstring describes the field, its entry here goes
    for cls, name in FALLBACK_DESCRIPTIONS:
        assert name not in field_descriptions(cls), f"{cls.__name__}.{name}: remove the fallback"


def test_every_default_is_one_the_schema_accepts() -> None:
    for where, prop in _properties(SCHEMA):
        if "default" in prop:
            alone = {k: v for k, v in prop.items() if k != "default"}
            check = jsonschema.Draft202012Validator({**alone, "$defs": SCHEMA["$defs"]})
            assert list(check.iter_errors(prop["default"])) == [], where


def test_descriptions_come_from_the_docstring_entries() -> None:
    game = SCHEMA["$defs"]["GameRules"]["properties"]
    assert game["mode"]["enum"] == ["1v1", "team", "ffa"]
    assert game["mode"]["default"] == "1v1"
    assert game["team_size"]["description"].startswith("players per team, for mode `team` only")
    # "scale, offset: ..." describes both; continuation lines are joined
    attribute = SCHEMA["$defs"]["AttributeConfig"]["properties"]
    assert attribute["scale"]["description"] == attribute["offset"]["description"]
    assert "\n" not in attribute["values"]["description"]
    assert SCHEMA["properties"]["game"]["description"] == "How games are played."
    assert SCHEMA["properties"]["population"]["$ref"] == "#/$defs/Population"


# --- the committed copy, the bundled scenarios' modeline, the command -----------------------------


def test_the_committed_schema_is_the_generated_one() -> None:
    committed = (BUNDLED / SCHEMA_FILE).read_text(encoding="utf-8")
    assert committed == schema_text(), "regenerate it: lobbysim schema --force --out " + str(
        Path("lobbysim") / "scenarios" / SCHEMA_FILE
    )


@pytest.mark.parametrize("name", list(bundled_scenarios()))
def test_every_bundled_scenario_names_the_schema_in_its_first_comments(name: str) -> None:
    path = bundled_scenarios()[name]
    lines = path.read_text(encoding="utf-8").splitlines()
    leading = list(itertools.takewhile(lambda line: line.startswith("#"), lines))
    assert MODELINE in leading
    assert leading[0] != MODELINE
    assert re.match(rf"#\s*{name}:\s*\S", lines[0])  # the headline lobbysim init lists
    assert scenario_headline(path) == lines[0].split(":", 1)[1].strip()


def test_lobbysim_schema_prints_it_and_writes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == SCHEMA
    out = tmp_path / "scenario.schema.json"
    assert main(["schema", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}\n"
    assert out.read_text(encoding="utf-8") == schema_text()
    missing = tmp_path / "no" / "such" / "folder" / "s.json"
    assert main(["schema", "--out", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"lobbysim: error: --out: the folder {missing.parent} does not exist (make it first)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scenario.schema.json"]


def test_init_copies_the_schema_next_to_the_scenario_never_over_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "quickstart", "--to", "mine/quickstart.yaml"]) == 0
    assert (tmp_path / "mine" / SCHEMA_FILE).read_bytes() == (BUNDLED / SCHEMA_FILE).read_bytes()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / SCHEMA_FILE).write_text("{}\n")
    assert main(["init", "team_4v4", "--to", "other"]) == 0
    assert (tmp_path / "other" / SCHEMA_FILE).read_text() == "{}\n"  # left as it was
    assert main(["validate", "other/team_4v4.yaml"]) == 0
