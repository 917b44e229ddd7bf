"""`bounded_json.loads`: json.loads, except that nesting past MAX_DEPTH is a JSONDecodeError
naming the field where it went too deep (never a RecursionError)."""

from __future__ import annotations

import json
import pickle

import pytest

from warehouse import bounded_json
from warehouse.bounded_json import MAX_DEPTH, JsonTooDeep


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_the_bound_is_64_levels():
    assert MAX_DEPTH == 64


def test_a_value_64_levels_deep_parses_like_json_loads():
    text = '{"a": ' + nested(63) + "}"
    assert bounded_json.loads(text) == json.loads(text)
    assert bounded_json.loads(nested(64)) == json.loads(nested(64))


def test_65_levels_are_refused_with_the_field_path():
    text = '{"answer": {"sections": [{"id": "s"}, {"criteria": ' + nested(61) + "}]}}"
    # depth: object 1, answer 2, sections 3, [1] 4, criteria 5..65
    with pytest.raises(JsonTooDeep) as refused:
        bounded_json.loads(text)
    error = refused.value
    assert isinstance(error, json.JSONDecodeError)  # loaders' existing handlers report it
    assert error.field == "'answer.sections[1].criteria[0][0]'… (64 levels down)"
    assert "nested deeper than 64 levels at field 'answer.sections[1].criteria" in error.msg
    assert text[error.pos] == "[" and (error.lineno, error.colno) == (1, error.pos + 1)
    before = text[: error.pos]
    open_before = sum(map(before.count, "[{")) - sum(map(before.count, "]}"))
    assert open_before == 64  # pos is where the 65th level opens


def test_100000_levels_give_json_too_deep_not_recursion_error():
    text = '{"notes": ' + nested(100_000) + "}"
    with pytest.raises(JsonTooDeep, match=r"deeper than 64 levels at field 'notes\[0\]"):
        bounded_json.loads(text)
    with pytest.raises(JsonTooDeep):
        bounded_json.loads(text.encode("utf-8"))  # bytes, as json.loads takes them


def test_the_bound_can_be_set_and_scalars_have_no_depth():
    assert bounded_json.loads('"text"', max_depth=0) == "text"
    assert bounded_json.loads('{"a": [1]}', max_depth=2) == {"a": [1]}
    with pytest.raises(JsonTooDeep, match=r"at field 'a'"):
        bounded_json.loads('{"a": [1]}', max_depth=1)


def test_keys_that_read_as_path_syntax_are_quoted():
    text = '{"a.b": {"": ' + nested(70) + "}}"
    with pytest.raises(JsonTooDeep, match=r"""at field '\["a.b"\]\[""\]\[0\]"""):
        bounded_json.loads(text)


def test_a_syntax_error_is_still_json_decode_error():
    with pytest.raises(json.JSONDecodeError) as refused:
        bounded_json.loads('{"a": [1, 2}')
    assert not isinstance(refused.value, JsonTooDeep)


def test_the_error_pickles_with_its_field():
    with pytest.raises(JsonTooDeep) as refused:
        bounded_json.loads(nested(70))
    again = pickle.loads(pickle.dumps(refused.value))
    assert (again.msg, again.pos, again.field) == (
        refused.value.msg,
        refused.value.pos,
        refused.value.field,
    )
