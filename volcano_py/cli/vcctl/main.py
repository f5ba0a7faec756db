"""The entry points: ``vcctl`` and the standalone vsub, vjobs, vqueues, vcancel, vsuspend and
vresume (``[project.scripts]`` in pyproject.toml).

Exit statuses and messages follow cobra and upstream's ``util.CheckError``:

* help (``-h``, or a group without a verb): printed, status 0;
* a command line the command does not accept: ``Error: ...`` and a hint on stderr, status 1;
* a failure while running: ``Failed to <verb> <noun>: <reason>`` on stdout, status 255
  (upstream's ``os.Exit(-1)``). Never a traceback.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from volcano_py import __version__
from volcano_py.cli.vcctl.client import CommandError, run_with_client
from volcano_py.cli.vcctl.commands import GROUPS, Command, standalone_commands, vcctl_commands
from volcano_py.cli.vcctl.flags import UsageError, build_parser, parse
from volcano_py.cli.vcctl.flow import PartialFailure

EXIT_USAGE = 1
EXIT_FAILURE = 255
_HELP = frozenset({"-h", "--help", "help"})


def _usage_error(message: str, help_command: str, err: TextIO) -> int:
    err.write(f"Error: {message}\nRun '{help_command} --help' for usage.\n")
    return EXIT_USAGE


def run_command(command: Command, argv: Sequence[str], out: TextIO, err: TextIO) -> int:
    prog = " ".join(command.path)
    parser = build_parser(prog, command.long or command.short, command.flags)
    if any(a in ("-h", "--help") for a in argv if a != "--"):
        out.write(parser.format_help())
        return 0
    try:
        opts: dict[str, Any] = parse(parser, command.flags, argv)
    except UsageError as error:
        return _usage_error(str(error), prog, err)
    if command.prepare is not None:
        command.prepare(opts)
    try:
        # Warnings of a command (sys.stderr) go where this call's errors go.
        with contextlib.redirect_stderr(err):
            output = run_with_client(
                str(opts["master"]), str(opts["kubeconfig"]), lambda c: command.run(c, opts)
            )
    except PartialFailure as failure:
        out.write(failure.output)
        return EXIT_FAILURE
    except CommandError as error:
        out.write(f"{command.failure_prefix}: {error}\n")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a bug or an unforeseen answer: still a message, not a trace
        out.write(f"{command.failure_prefix}: {type(error).__name__}: {error}\n")
        return EXIT_FAILURE
    out.write(output)
    return 0


def _group_help(group: str, verbs: dict[str, Command]) -> str:
    lines = [GROUPS[group], "", "Usage:", f"  vcctl {group} [command]", "", "Available Commands:"]
    lines += [f"  {verb:<11} {command.short}" for verb, command in sorted(verbs.items())]
    lines += [
        "",
        "Flags:",
        f"  -h, --help   help for {group}",
        "",
        f'Use "vcctl {group} [command] --help" for more information about a command.',
        "",
    ]
    return "\n".join(lines)


def _root_help() -> str:
    lines = ["Usage:", "  vcctl [command]", "", "Available Commands:"]
    entries = {**GROUPS, "version": "Print the version information"}
    lines += [f"  {name:<12} {text}" for name, text in sorted(entries.items())]
    lines += [
        "",
        "Flags:",
        "  -h, --help   help for vcctl",
        "",
        'Use "vcctl [command] --help" for more information about a command.',
        "",
    ]
    return "\n".join(lines)


def version_text() -> str:
    """Upstream's ``PrintVersionAndExit`` lines, for this implementation."""
    return "".join(
        f"{line}\n"
        for line in (
            "API Version: v1alpha1",
            f"Version: {__version__}",
            "Git SHA: Not provided.",
            "Built At: Not provided.",
            f"Python Version: {sys.version.split()[0]}",
            f"OS/Arch: {sys.platform}",
        )
    )


def vcctl_main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    out, err = out or sys.stdout, err or sys.stderr
    if not arguments or arguments[0] in _HELP:
        out.write(_root_help())
        return 0
    group, rest = arguments[0], arguments[1:]
    if group == "version":
        out.write(version_text())
        return 0
    if group not in GROUPS:
        return _usage_error(f'unknown command "{group}" for "vcctl"', "vcctl", err)
    verbs = {verb: c for (g, verb), c in vcctl_commands().items() if g == group}
    if not rest or rest[0] in _HELP:
        out.write(_group_help(group, verbs))
        return 0
    if rest[0] not in verbs:
        return _usage_error(
            f'unknown command "{rest[0]}" for "vcctl {group}"', f"vcctl {group}", err
        )
    return run_command(verbs[rest[0]], rest[1:], out, err)


def _standalone(name: str, argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    return run_command(standalone_commands()[name], arguments, sys.stdout, sys.stderr)


def vcctl() -> None:
    sys.exit(vcctl_main())


def vsub() -> None:
    sys.exit(_standalone("vsub"))


def vjobs() -> None:
    sys.exit(_standalone("vjobs"))


def vqueues() -> None:
    sys.exit(_standalone("vqueues"))


def vcancel() -> None:
    sys.exit(_standalone("vcancel"))


def vsuspend() -> None:
    sys.exit(_standalone("vsuspend"))


def vresume() -> None:
    sys.exit(_standalone("vresume"))
