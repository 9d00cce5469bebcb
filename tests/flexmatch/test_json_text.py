"""lobbysim/flexmatch/json_text.py: comments skipped with lines and columns kept, a key given twice
refused by its JSON path, and the file reader (``load_json``, ``lobbysim rules show``) using it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lobbysim.cli.main import main
from lobbysim.flexmatch.json_text import comment_lines, parse_json_text, strip_comments
from lobbysim.flexmatch.read import load_json
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
