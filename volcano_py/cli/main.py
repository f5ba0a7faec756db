"""`volcano-py`: the scheduler, the controllers, the webhooks and the offline simulator.

Volcano's command-line tools (vcctl, vsub, ...) are entry points of their own: cli/vcctl.

Each subcommand lives in its own module and registers itself in ``SUBCOMMANDS``; the entry
point only parses the command line and turns user errors into a message and exit status 2.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence

from volcano_py import __version__
from volcano_py.cli import goflags

# name -> (help, add_arguments, run). Filled by the subcommand modules imported below.
Subcommand = tuple[
    str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]
]
SUBCOMMANDS: dict[str, Subcommand] = {}
# The replacements of Volcano's Go binaries: their flags follow Go's syntax (see goflags).
GO_FLAG_COMMANDS = frozenset({"scheduler", "controllers", "webhooks"})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="volcano-py",
        description="A Volcano-compatible batch scheduler for Kubernetes.",
    )
    parser.add_argument("--version", action="version", version=f"volcano-py {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, add_arguments, _run) in sorted(SUBCOMMANDS.items()):
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
    parser = build_parser()
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in GO_FLAG_COMMANDS:
        subparser = _subparsers(parser)[arguments[0]]
        arguments = [arguments[0], *goflags.to_argparse(arguments[1:], subparser)]
    return parser.parse_args(arguments)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    return SUBCOMMANDS[args.command][2](args)


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


def _register_builtin_subcommands() -> None:
    # Imported here, not at the top: each subcommand pulls in its own (heavier) dependencies.
    from volcano_py.cli import controllers, gen_admission_secret, scheduler, simulate, webhooks

    SUBCOMMANDS["simulate"] = (simulate.HELP, simulate.add_arguments, simulate.run)
    SUBCOMMANDS["scheduler"] = (scheduler.HELP, scheduler.add_arguments, scheduler.run)
    SUBCOMMANDS["controllers"] = (controllers.HELP, controllers.add_arguments, controllers.run)
    SUBCOMMANDS["webhooks"] = (webhooks.HELP, webhooks.add_arguments, webhooks.run)
    SUBCOMMANDS["gen-admission-secret"] = (
        gen_admission_secret.HELP,
        gen_admission_secret.add_arguments,
        gen_admission_secret.run,
    )


_register_builtin_subcommands()
