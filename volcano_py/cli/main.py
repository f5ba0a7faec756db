"""`volcano-py`: the scheduler, the offline simulator and vcctl-like commands.

Each subcommand lives in its own module and registers itself in ``SUBCOMMANDS``; the entry
point only parses the command line and turns user errors into a message and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from volcano_py import __version__

# name -> (help, add_arguments, run). Filled by the subcommand modules imported below.
Subcommand = tuple[
    str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]
]
SUBCOMMANDS: dict[str, Subcommand] = {}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="volcano-py",
        description="A Volcano-compatible batch scheduler for Kubernetes.",
    )
    parser.add_argument("--version", action="version", version=f"volcano-py {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, add_arguments, _run) in sorted(SUBCOMMANDS.items()):
        add_arguments(commands.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    return SUBCOMMANDS[args.command][2](args)


def _register_builtin_subcommands() -> None:
    # Imported here, not at the top: each subcommand pulls in its own (heavier) dependencies.
    from volcano_py.cli import controllers, scheduler, simulate, webhooks

    SUBCOMMANDS["simulate"] = (simulate.HELP, simulate.add_arguments, simulate.run)
    SUBCOMMANDS["scheduler"] = (scheduler.HELP, scheduler.add_arguments, scheduler.run)
    SUBCOMMANDS["controllers"] = (controllers.HELP, controllers.add_arguments, controllers.run)
    SUBCOMMANDS["webhooks"] = (webhooks.HELP, webhooks.add_arguments, webhooks.run)


_register_builtin_subcommands()
