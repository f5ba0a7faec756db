"""`volcano-py`: the scheduler, the controllers, the webhooks and the offline simulator.

Volcano's command-line tools (vcctl, vsub, ...) are entry points of their own: cli/vcctl.

Each subcommand lives in its own module and registers itself in ``SUBCOMMANDS``; the entry
point only parses the command line and turns user errors into a message and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Callable, Sequence

from volcano_py import __version__
from volcano_py.cli import goflags

# name -> (help, add_arguments, run), of the subcommands loaded so far (``subcommand``).
Subcommand = tuple[
    str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]
]
SUBCOMMANDS: dict[str, Subcommand] = {}
# name -> the module defining its ``HELP``, ``add_arguments`` and ``run``. Imported only when
# needed: each pulls in its own dependencies, and a process that runs one of them (a restart
# of the scheduler) should not pay for importing the others (a third of a second).
BUILTIN_SUBCOMMANDS: dict[str, str] = {
    "controllers": "volcano_py.cli.controllers",
    "gen-admission-secret": "volcano_py.cli.gen_admission_secret",
    "scheduler": "volcano_py.cli.scheduler",
    "simulate": "volcano_py.cli.simulate",
    "webhooks": "volcano_py.cli.webhooks",
}
# The replacements of Volcano's Go binaries: their flags follow Go's syntax (see goflags).
GO_FLAG_COMMANDS = frozenset({"scheduler", "controllers", "webhooks"})


def subcommand(name: str) -> Subcommand:
    """The built-in subcommand ``name``, its module imported on first use."""
    found = SUBCOMMANDS.get(name)
    if found is None:
        module = importlib.import_module(BUILTIN_SUBCOMMANDS[name])
        found = SUBCOMMANDS[name] = (module.HELP, module.add_arguments, module.run)
    return found


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every subcommand, or only ``only`` (what a process running
    that one needs, without importing the others)."""
    parser = argparse.ArgumentParser(
        prog="volcano-py",
        description="A Volcano-compatible batch scheduler for Kubernetes.",
    )
    parser.add_argument("--version", action="version", version=f"volcano-py {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = [only] if only is not None else sorted(BUILTIN_SUBCOMMANDS)
    for name in names:
        help_text, add_arguments, _run = subcommand(name)
        # Go has no prefix matching of flags: neither do the processes that replace Go's.
        add_arguments(
            commands.add_parser(
                name,
                help=help_text,
                description=help_text,
                allow_abbrev=name not in GO_FLAG_COMMANDS,
            )
        )
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line, in Go's flag syntax for the processes replacing Volcano's."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_named_subcommand(arguments))
    if arguments and arguments[0] in GO_FLAG_COMMANDS:
        subparser = _subparsers(parser)[arguments[0]]
        arguments = [arguments[0], *goflags.to_argparse(arguments[1:], subparser)]
    return parser.parse_args(arguments)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _named_subcommand(arguments: Sequence[str]) -> str | None:
    """The subcommand the command line names first, when it is a built-in one (None: the
    whole parser, for help and for the error that names the choices)."""
    first = arguments[0] if arguments else ""
    return first if first in BUILTIN_SUBCOMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.command is None:
        build_parser().print_help(sys.stderr)
        return 2
    return subcommand(args.command)[2](args)


# One-shot commands whose process ends holding a whole simulated cluster.
_EXIT_WITHOUT_TEARDOWN = frozenset({"simulate"})


def process_main() -> None:
    """The process's entry point (the ``volcano-py`` script, ``python -m volcano_py``).

    After ``simulate`` the interpreter would free the simulated cluster object by object
    before exiting: about a fifth of the whole run at 5k nodes / 60k pods (issue "Scale").
    Nothing is left to do by then, so the output is flushed and the process ends at once.
    In-process callers (tests, benchmarks) call ``main`` and keep the usual teardown."""
    code = main()
    command = next((a for a in sys.argv[1:2] if not a.startswith("-")), None)
    if command in _EXIT_WITHOUT_TEARDOWN:
        logging.shutdown()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:
            raise SystemExit(code) from None  # a closed pipe: the usual exit reports it
        os._exit(code)
    raise SystemExit(code)
