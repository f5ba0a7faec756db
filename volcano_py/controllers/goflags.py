"""Go's ``flag`` package, as job plugins parse their ``spec.plugins[name]`` arguments."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

_TRUE: Final = frozenset({"1", "t", "T", "true", "TRUE", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "false", "FALSE", "False"})

FlagValue = str | int | bool


def parse_go_flags(
    arguments: Sequence[str], defaults: Mapping[str, FlagValue]
) -> tuple[dict[str, FlagValue], str]:
    """The flag values after parsing ``arguments`` (``-x=v``, ``--x v``, bare ``--bool``), and
    the parse error ('' when none). Like ``flag.ContinueOnError``, parsing stops at the first
    problem or non-flag argument, keeping what was set before it."""
    values = dict(defaults)
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        if len(argument) < 2 or not argument.startswith("-"):
            break
        body = argument[2:] if argument.startswith("--") else argument[1:]
        if argument == "--":
            break
        if not body or body.startswith(("-", "=")):
            return values, f"bad flag syntax: {argument}"
        flag, has_value, value = body.partition("=")
        if flag not in defaults:
            return values, f"flag provided but not defined: -{flag}"
        default = defaults[flag]
        index += 1
        if isinstance(default, bool):
            if not has_value:
                values[flag] = True
            elif value in _TRUE or value in _FALSE:
                values[flag] = value in _TRUE
            else:
                return values, f"invalid boolean value {value!r} for -{flag}"
            continue
        if not has_value:
            if index >= len(arguments):
                return values, f"flag needs an argument: -{flag}"
            value = arguments[index]
            index += 1
        if isinstance(default, int):
            try:
                values[flag] = int(value, 0)
            except ValueError:
                return values, f"invalid value {value!r} for flag -{flag}: parse error"
        else:
            values[flag] = value
    return values, ""
