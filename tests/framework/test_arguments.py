"""Plugin/action arguments with Volcano's type rules (``framework/arguments.go``).

Transcribes upstream ``framework/arguments_test.go``: ``TestArgumentsGetInt``,
``TestArgumentsGetFloat64``, ``TestArgumentsGetBool``, ``TestArgumentsGetString`` (every
case, by name or index). ``TestGetArgOfActionFromConf`` is in ``test_conf.py``.
A wrong type keeps the default and logs a warning, as upstream does.
"""

from __future__ import annotations

import logging

import pytest

from volcano_py.framework.arguments import Arguments

KEY_INT = "intkey"
KEY_FLOAT = "float64key"
KEY_BOOL = "boolkey"
KEY_STR = "stringkey"


@pytest.mark.parametrize(
    ("values", "default", "expected"),
    [
        ({KEY_INT: 15}, 10, 15),
        ({KEY_INT: "errorvalue"}, 11, 11),
        ({KEY_INT: ""}, 0, 0),
    ],
    ids=["index 0: int", "index 1: string", "index 2: empty string"],
)
def test_get_int_upstream(values, default, expected):
    assert Arguments(values).get_int(KEY_INT, default) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1.0, 7), (True, 7), ("15", 7), (None, 7), (-3, -3), (0, 0)],
    ids=["float", "bool", "numeric-string", "null", "negative", "zero"],
)
def test_get_int_only_accepts_yaml_integers(value, expected):
    """``argv.(int)``: a float, a bool, a numeric string or null keep the default."""
    assert Arguments({KEY_INT: value}).get_int(KEY_INT, 7) == expected


@pytest.mark.parametrize(
    ("values", "default", "expected"),
    [
        ({"anotherKey": "12"}, 1.2, 1.2),
        ({KEY_FLOAT: 1.5}, 1.2, 1.5),
        ({KEY_FLOAT: "errorValue"}, 1.2, 1.2),
        ({KEY_FLOAT: ""}, 1.2, 1.2),
        ({KEY_FLOAT: 15}, 1.2, 15.0),
    ],
    ids=[
        "key not exist",
        "key exist",
        "value of key invalid",
        "value of key null",
        "int value",
    ],
)
def test_get_float_upstream(values, default, expected):
    result = Arguments(values).get_float(KEY_FLOAT, default)
    assert result == expected
    assert isinstance(result, float)


@pytest.mark.parametrize("value", [True, "1.5", None], ids=["bool", "numeric-string", "null"])
def test_get_float_rejects_non_numbers(value):
    assert Arguments({KEY_FLOAT: value}).get_float(KEY_FLOAT, 2.5) == 2.5


@pytest.mark.parametrize(
    ("values", "default", "expected"),
    [
        ({"anotherKey": True}, False, False),
        ({KEY_BOOL: True}, False, True),
        ({KEY_BOOL: "true"}, False, True),
        ({KEY_BOOL: "false"}, True, False),
        ({KEY_BOOL: "not-a-bool"}, True, True),
    ],
    ids=["key not exist", "bool value", "string true value", "string false value", "invalid"],
)
def test_get_bool_upstream(values, default, expected):
    assert Arguments(values).get_bool(KEY_BOOL, default) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1", True),
        ("t", True),
        ("T", True),
        ("TRUE", True),
        ("True", True),
        ("0", False),
        ("f", False),
        ("F", False),
        ("FALSE", False),
        ("False", False),
        # strconv.ParseBool refuses these
        ("yes", None),
        ("tRUE", None),
        (" true", None),
        ("", None),
        (1, None),
        (0, None),
        (None, None),
    ],
)
def test_get_bool_strconv_parse_bool_spellings(value, expected):
    for default in (True, False):
        result = Arguments({KEY_BOOL: value}).get_bool(KEY_BOOL, default)
        assert result is (default if expected is None else expected)


@pytest.mark.parametrize(
    ("values", "default", "expected"),
    [
        ({"anotherKey": "test"}, "test1", "test1"),
        ({KEY_STR: "test1"}, "test", "test1"),
        ({KEY_STR: 0}, "test", "test"),
        ({KEY_STR: None}, "test", "test"),
    ],
    ids=["key not exist", "key exist", "value of key invalid", "value of key null"],
)
def test_get_string_upstream(values, default, expected):
    assert Arguments(values).get_str(KEY_STR, default) == expected


def test_empty_string_is_a_string():
    assert Arguments({KEY_STR: ""}).get_str(KEY_STR, "default") == ""


def test_wrong_type_is_logged_with_owner_and_key(caplog):
    arguments = Arguments({KEY_INT: "x"}, owner="binpack")
    with caplog.at_level(logging.WARNING, logger="volcano_py.framework.arguments"):
        assert arguments.get_int(KEY_INT, 3) == 3
    assert len(caplog.records) == 1
    message = caplog.records[0].getMessage()
    assert "binpack" in message and KEY_INT in message and "int" in message


def test_missing_key_is_not_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="volcano_py.framework.arguments"):
        arguments = Arguments({}, owner="binpack")
        arguments.get_int("a", 1)
        arguments.get_float("b", 1.0)
        arguments.get_bool("c", True)
        arguments.get_str("d", "")
    assert caplog.records == []


def test_arguments_is_a_copy_of_its_mapping():
    source = {"a": 1}
    arguments = Arguments(source, owner="x")
    source["a"] = 2
    assert arguments["a"] == 1
    assert arguments.owner == "x"
    assert Arguments(None) == {}
