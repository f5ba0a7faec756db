"""vcctl's flags in pflag's syntax, on argparse.

Upstream's commands are cobra commands whose flags are pflag flags; every command declares its
own (there are no persistent flags), with a long name, often a one-letter shorthand, a default
and a help text. `Flag` declares one the same way and `build_parser` turns a list of them into
an argparse parser that accepts what pflag accepts:

* ``--name value``, ``--name=value``, ``-N value``, ``-N=value``, ``-Nvalue``;
* a boolean flag is true when named alone and takes a value only after ``=``
  (``--all-namespaces``, ``--all-namespaces=false``);
* no prefix matching of long names (``--all`` is not ``--all-namespaces``);
* integers as Go's ``strconv.ParseInt`` reads them (``0x10``, ``-3``), in the flag's range.

Where pflag would silently keep a stray positional argument (``vcctl job view myjob``), argparse
refuses it: see docs/vcctl.md. A usage error raises `UsageError` rather than exiting, so the
entry point prints it as cobra does and exits with cobra's status 1.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NoReturn

FlagKind = Literal["string", "int", "int32", "bool"]
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})
_INT_BITS = {"int": 64, "int32": 32}


class UsageError(Exception):
    """A command line the command does not accept; the message says why."""


@dataclass(frozen=True)
class Flag:
    """One pflag flag: ``StringVarP(&dest, long, short, default, help)`` and friends."""

    long: str
    short: str
    kind: FlagKind
    default: str | int | bool
    help: str

    @property
    def dest(self) -> str:
        return self.long.replace("-", "_")


def master_and_kubeconfig() -> list[Flag]:
    """``util.InitFlags``: every upstream command has these two."""
    return [
        Flag("master", "s", "string", "", "the address of apiserver"),
        Flag("kubeconfig", "k", "string", "", "(optional) absolute path to the kubeconfig file"),
    ]


def _go_bool(text: str) -> bool:
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f'strconv.ParseBool: parsing "{text}": invalid syntax')


def _go_int(bits: int) -> argparse._ActionType:
    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f'strconv.ParseInt: parsing "{text}": invalid syntax'
            ) from None
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            raise argparse.ArgumentTypeError(
                f'strconv.ParseInt: parsing "{text}": value out of range'
            )
        return value

    return parse


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _help_text(flag: Flag) -> str:
    # pflag's usage line: the default is shown unless it is the type's zero value.
    zero = {"string": "", "int": 0, "int32": 0, "bool": False}[flag.kind]
    if flag.default == zero:
        return flag.help.replace("%", "%%")
    shown = f'"{flag.default}"' if flag.kind == "string" else str(flag.default).lower()
    return f"{flag.help} (default {shown})".replace("%", "%%")


def build_parser(prog: str, description: str, flags: Sequence[Flag]) -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description=description, allow_abbrev=False)
    for flag in flags:
        names = ([f"-{flag.short}"] if flag.short else []) + [f"--{flag.long}"]
        if flag.kind == "bool":
            parser.add_argument(
                *names,
                dest=flag.dest,
                nargs="?",
                const=True,
                default=flag.default,
                type=_go_bool,
                metavar="BOOL",
                help=_help_text(flag),
            )
        elif flag.kind == "string":
            parser.add_argument(
                *names,
                dest=flag.dest,
                default=flag.default,
                metavar="string",
                help=_help_text(flag),
            )
        else:
            parser.add_argument(
                *names,
                dest=flag.dest,
                default=flag.default,
                type=_go_int(_INT_BITS[flag.kind]),
                metavar=flag.kind,
                help=_help_text(flag),
            )
    return parser


def parse(
    parser: argparse.ArgumentParser, flags: Sequence[Flag], argv: Sequence[str]
) -> dict[str, str | int | bool]:
    """``argv`` parsed as pflag would; raises `UsageError`."""
    booleans = {f"--{f.long}" for f in flags if f.kind == "bool"}
    booleans |= {f"-{f.short}" for f in flags if f.kind == "bool" and f.short}
    arguments: list[str] = []
    for index, argument in enumerate(argv):
        if argument == "--":
            arguments.extend(argv[index:])
            break
        # pflag: a boolean named alone is true and never takes the next argument as its value.
        arguments.append(f"{argument}=true" if argument in booleans else argument)
    namespace, extra = parser.parse_known_args(arguments)
    if extra:
        stray = [a for a in extra if a != "--"]
        if any(a.startswith("-") and a != "-" for a in stray):
            unknown = next(a for a in stray if a.startswith("-"))
            raise UsageError(f"unknown flag: {unknown.split('=', 1)[0]}")
        if stray:
            raise UsageError(
                f"unexpected argument {stray[0]!r}: {parser.prog} takes flags only"
                " (names are given with their flag, e.g. -N NAME)"
            )
    return dict(vars(namespace))
