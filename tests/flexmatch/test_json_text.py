"""lobbysim/flexmatch/json_text.py: comments skipped with lines and columns kept, a key given twice
refused by its JSON path, and the file reader (``load_json``, ``lobbysim rules show``) using it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lobbysim.cli.main import main
from lobbysim.flexmatch.json_text import (
    SplitExpansion,
    comment_lines,
    load_json,
    parse_json_text,
    strip_comments,
)
from lobbysim.flexmatch.read import read_flexmatch
from lobbysim.scenario import ScenarioError

COMMENTED = """{
  // a line comment on its own line
  "name": "with // inside a string", /* a block */ "ruleLanguageVersion": "1.0",
  "url": "http://example.org/a/*b*/c",
  /* a block comment
     over two lines */
  "quote": "a \\" // still the string",
  "n": 3 // after a value
}
"""


def test_comments_are_blanked_and_every_other_character_kept_in_place() -> None:
    stripped = strip_comments(COMMENTED)
    assert len(stripped) == len(COMMENTED)
    assert stripped.count("\n") == COMMENTED.count("\n")
    for a, b in zip(stripped, COMMENTED, strict=True):
        assert a == b or a == " "  # a comment's characters become spaces, nothing moves
    assert "a line comment" not in stripped and "a block" not in stripped
    assert "after a value" not in stripped and "over two lines" not in stripped
    assert json.loads(stripped) == {
        "name": "with // inside a string",
        "ruleLanguageVersion": "1.0",
        "url": "http://example.org/a/*b*/c",
        "quote": 'a " // still the string',
        "n": 3,
    }


def test_comment_lines_counts_each_line_holding_a_comment() -> None:
    # line 2, line 3 (the block), lines 5 and 6 (a block over two), line 8
    assert comment_lines(COMMENTED) == 5
    assert comment_lines('{"a": "// no comment", "b": "/* none */"}') == 0
    assert comment_lines("{} // one\n// two\n") == 2
    assert comment_lines("/* a */ {} /* b */") == 1  # two comments on one line: one line


def test_text_without_comments_parses_as_json_does() -> None:
    text = '{"a": [1, 2.5, {"b": null}], "c": "x/y", "d": true}'
    assert parse_json_text(text) == json.loads(text)
    assert strip_comments(text) == text


def test_a_json_error_after_a_comment_keeps_the_original_line_and_column() -> None:
    text = '{\n  // a comment\n  "a": 1,\n  /* x */ "b" 2\n}'
    with pytest.raises(json.JSONDecodeError) as caught:
        parse_json_text(text)
    assert (caught.value.lineno, caught.value.colno) == (4, 15)  # where the ':' is missing


def test_an_unclosed_block_comment_is_an_error_at_its_opening() -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        parse_json_text('{"a": 1,\n  /* never closed\n}')
    assert caught.value.msg == "a /* comment is never closed"
    assert (caught.value.lineno, caught.value.colno) == (2, 3)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            '{"expansions": [{"target": "a", "steps": [], "target": "b"}]}',
            "expansions[0]: the key 'target' is given twice; remove one",
        ),
        ('{"name": "a", "name": "b"}', "the top-level object: the key 'name' is given twice"),
        (
            '{"rules": [{"name": "x"}, {"name": "y", "steps": [{"v": 1, "v": 2}]}]}',
            "rules[1].steps[0]: the key 'v' is given twice",
        ),
        (  # the first object in the text's order is named, not the first found by depth
            '{"a": {"b": {"k": 1, "k": 2}}, "c": {"k": 1, "k": 2}}',
            "a.b: the key 'k' is given twice",
        ),
        (  # the first key given twice in the object
            '{"x": 1, "y": 1, "y": 2, "x": 2}',
            "the top-level object: the key 'y' is given twice",
        ),
    ],
)
def test_a_key_given_twice_is_refused_naming_the_objects_path(text: str, line: str) -> None:
    with pytest.raises(ValueError, match=r"given twice") as caught:
        parse_json_text(text)
    assert str(caught.value).startswith(line)
    assert str(caught.value).endswith("; remove one")
    assert "\n" not in str(caught.value)


def _refuse(name: str) -> None:
    raise ValueError(f"{name} is not a number here")


def test_the_number_hooks_are_passed_to_json() -> None:
    data = parse_json_text(
        '{"a": 1, "b": 2.5}', parse_int=lambda s: ("int", s), parse_float=lambda s: ("float", s)
    )
    assert data == {"a": ("int", "1"), "b": ("float", "2.5")}
    with pytest.raises(ValueError, match="NaN is not a number here"):
        parse_json_text('{"a": NaN}', parse_constant=_refuse)


# --- the rule-set reader --------------------------------------------------------------------------


def test_load_json_reads_comments_and_names_a_key_given_twice(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text('{\n  // ours\n  "name": "x", /* and */ "rules": []\n}\n', encoding="utf-8")
    assert load_json(path) == {"name": "x", "rules": []}
    path.write_text('{"expansions": [{"target": "a", "target": "b"}]}', encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_json(path)
    assert caught.value.problems == [
        f"{path}: expansions[0]: the key 'target' is given twice; remove one"
    ]
    path.write_text('{\n  // ours\n  "name" "x"\n}', encoding="utf-8")
    with pytest.raises(
        ScenarioError, match=r"not JSON: Expecting ':' delimiter at line 3, column 10"
    ):
        load_json(path)


_RULE_SET = """{
  // a duel on one rating
  "name": "duel",
  "ruleLanguageVersion": "1.0",
  "playerAttributes": [{"name": "elo", "type": "number"}],
  /* two sides
     of one player */
  "teams": [{"name": "one", "minPlayers": 1, "maxPlayers": 1, "quantity": 2}],
  "rules": [{"name": "Near", "type": "distance",
    "measurements": ["avg(teams[*].players.attributes[elo])"],
    "referenceValue": "avg(flatten(teams[*].players.attributes[elo]))",
    "maxDistance": 100}]
}
"""


def test_rules_show_notes_the_comment_lines_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "duel.json"
    path.write_text(_RULE_SET, encoding="utf-8")
    assert main(["rules", "show", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"FlexMatch rule set 'duel' ({path}), as lobbysim reads it:"
    assert out[-1] == "3 comment lines skipped (FlexMatch's service takes plain JSON)"
    path.write_text(strip_comments(_RULE_SET), encoding="utf-8")
    assert main(["rules", "show", str(path)]) == 0
    assert "comment lines" not in capsys.readouterr().out  # plain JSON: no note


def test_rules_show_refuses_a_key_given_twice_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "twice.json"
    path.write_text(_RULE_SET.replace('"maxDistance": 100', '"maxDistance": 100, "type": "x"'))
    assert main(["rules", "show", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"lobbysim: error: {path}: rules[0]: the key 'type' is given twice; remove one\n"
    )


# --- several expansions written into one object ---------------------------------------------------

_A = '"target": "rules[Near].maxDistance", "steps": [{"waitTimeSeconds": 10, "value": 150}]'
_B = '"target": "rules[Ping].maxLatency", "steps": [{"waitTimeSeconds": 20, "value": 200}]'
_C = '"target": "rules[Near].minDistance", "steps": [{"waitTimeSeconds": 30, "value": 1}]'


def _expansions(text: str) -> list[dict[str, object]]:
    return list(parse_json_text(text)["expansions"])


def test_an_expansion_object_giving_target_and_steps_k_times_is_k_expansions() -> None:
    near = {"target": "rules[Near].maxDistance", "steps": [{"waitTimeSeconds": 10, "value": 150}]}
    ping = {"target": "rules[Ping].maxLatency", "steps": [{"waitTimeSeconds": 20, "value": 200}]}
    third = {"target": "rules[Near].minDistance", "steps": [{"waitTimeSeconds": 30, "value": 1}]}
    got = _expansions(f'{{"expansions": [{{{_A}, {_B}}}, {{{_C}}}]}}')
    assert got == [near, ping, third]  # in the order written, the next object after them
    split = [e for e in got if isinstance(e, SplitExpansion)]
    assert [(e.origin, e.part, e.of) for e in split] == [(0, 1, 2), (0, 2, 2)]
    assert type(got[2]) is dict  # an object written once is left as it is
    assert _expansions(f'{{"expansions": [{{{_A}, {_B}, {_C}}}]}}') == [near, ping, third]
    # steps first, then target, alternately: each steps goes with the target after it
    steps_first = (
        '{"expansions": [{"steps": [{"waitTimeSeconds": 10, "value": 150}], '
        '"target": "rules[Near].maxDistance", "steps": [{"waitTimeSeconds": 20, "value": 200}], '
        '"target": "rules[Ping].maxLatency"}]}'
    )
    assert _expansions(steps_first) == [near, ping]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (  # target twice, steps once
            '{"expansions": [{"target": "a", "steps": [], "target": "b"}]}',
            "expansions[0]: the key 'target' is given twice",
        ),
        (  # target twice, no steps
            '{"expansions": [{"target": "a", "target": "b"}]}',
            "expansions[0]: the key 'target' is given twice",
        ),
        (  # not alternately: the two targets side by side
            '{"expansions": [{"target": "a", "target": "b", "steps": [], "steps": []}]}',
            "expansions[0]: the key 'target' is given twice",
        ),
        (  # a key besides target and steps
            '{"expansions": [{"target": "a", "steps": [], "target": "b", "steps": [], "x": 1}]}',
            "expansions[0]: the key 'target' is given twice",
        ),
        (  # the same object outside the rule set's expansions
            '{"rules": [{"target": "a", "steps": [], "target": "b", "steps": []}]}',
            "rules[0]: the key 'target' is given twice",
        ),
        (
            '{"a": {"expansions": [{"target": "a", "steps": [], "target": "b", "steps": []}]}}',
            "a.expansions[0]: the key 'target' is given twice",
        ),
        (  # a key twice inside a split expansion: named by the file's object
            '{"expansions": [{}, {"target": "a", "steps": [], "target": "b", '
            '"steps": [{"value": 1, "value": 2}]}]}',
            "expansions[1].steps[0]: the key 'value' is given twice",
        ),
    ],
)
def test_every_other_key_given_twice_is_still_refused(text: str, line: str) -> None:
    with pytest.raises(ValueError, match=r"given twice") as caught:
        parse_json_text(text)
    assert str(caught.value) == f"{line}; remove one"


_TWO_RULES = """{
  "name": "duel",
  "ruleLanguageVersion": "1.0",
  "playerAttributes": [{"name": "elo", "type": "number"}],
  "teams": [{"name": "one", "minPlayers": 1, "maxPlayers": 1, "quantity": 2}],
  "rules": [
    {"name": "Near", "type": "batchDistance", "batchAttribute": "elo", "maxDistance": 100},
    {"name": "Ping", "type": "latency", "maxLatency": 150}
  ],
  "expansions": [
    {"target": "rules[Near].maxDistance", "steps": [{"waitTimeSeconds": 10, "value": 150}],
     "target": "rules[Ping].maxLatency", "steps": [{"waitTimeSeconds": 20, "value": 200},
                                                   {"waitTimeSeconds": 40, "value": 300}]}
  ]
}
"""


def test_rules_show_reads_the_expansions_of_one_object_and_notes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "duel.json"
    path.write_text(_TWO_RULES, encoding="utf-8")
    imported = read_flexmatch(path)
    near, ping = imported.rules
    assert near["expansions"] == [[10 / 60, 150]]
    assert ping["expansions"] == [[20 / 60, 200], [40 / 60, 300]]
    assert imported.split_expansions == ((0, 2),)
    assert main(["rules", "show", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == (
        "expansions[0]: 2 expansions written in one object (target and steps given 2 times), "
        "read in the order written; a JSON reader keeping a key's last value would read only "
        "the last"
    )
    # written as two objects: the same rules, and no note
    plain = json.loads(_TWO_RULES)  # (json keeps each key's last value)
    plain["expansions"] = [
        {"target": "rules[Near].maxDistance", "steps": [{"waitTimeSeconds": 10, "value": 150}]},
        {
            "target": "rules[Ping].maxLatency",
            "steps": [{"waitTimeSeconds": 20, "value": 200}, {"waitTimeSeconds": 40, "value": 300}],
        },
    ]
    path.write_text(json.dumps(plain), encoding="utf-8")
    again = read_flexmatch(path)
    assert again.rules == imported.rules and again.split_expansions == ()
    assert main(["rules", "show", str(path)]) == 0
    assert "written in one object" not in capsys.readouterr().out


def test_a_split_expansions_problem_names_the_files_object(tmp_path: Path) -> None:
    """Each problem of an expansion read from a shared object names that object's index in the
    file (its target says which), and the objects after it keep their own indices."""
    path = tmp_path / "duel.json"
    text = _TWO_RULES.replace("rules[Ping].maxLatency", "rules[Pong].maxLatency").replace(
        "300}]}\n  ]", '300}]},\n    {"target": "teams[one].minPlayers", "steps": []}\n  ]'
    )
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        read_flexmatch(path)
    lines = [p.removeprefix(f"{path}: ") for p in caught.value.problems]
    assert lines[0].startswith("expansions[0].target: 'rules[Pong].maxLatency' names no rule")
    assert lines[1] == "expansions[1].steps: expected a non-empty list of steps, got []"
    assert len(lines) == 2
