"""Go's command-line syntax for the processes that replace Volcano's binaries.

vc-scheduler, vc-controller-manager and vc-webhook-manager parse their arguments with pflag
(klog's Go ``flag`` set added in, names normalised by component-base's
``WordSepNormalizeFunc``). Before argparse sees the arguments, ``to_argparse`` rewrites them so
argparse accepts exactly what those binaries accept, and a little more of Go's ``flag``:

* ``--flag=value`` and ``--flag value``, as both;
* ``-flag=value`` and ``-flag value`` for long names (Go's ``flag`` package; pflag only takes a
  single dash for the one-letter ``-v``, which argparse handles itself: ``-v=3``, ``-v 3``);
* ``_`` and ``-`` are the same in a name (``--log_dir`` is ``--log-dir``), as
  ``WordSepNormalizeFunc``;
* a boolean flag takes a value only after ``=``: ``--logtostderr false`` is
  ``--logtostderr=true`` and a positional ``false``, as in Go;
* ``--`` ends the flags; positionals, anywhere among the flags (Volcano's chart passes a
  literal ``2>&1``), are kept for the process to ignore, as pflag keeps them in ``Args()``.

Parsers of these processes are built with ``allow_abbrev=False``: Go has no prefix matching.
Unknown flags are left alone so argparse reports them by name and exits with status 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def is_bool_flag(action: argparse.Action) -> bool:
    """A flag made by ``process_flags.bool_flag``: an optional value, True when absent."""
    return action.nargs == "?" and action.const is True and bool(action.option_strings)


def _long_options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {
        option: action
        for option, action in parser._option_string_actions.items()
        if option.startswith("--")
    }


def to_argparse(arguments: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """``arguments`` in Go's flag syntax, rewritten into argparse's for ``parser``."""
    options = _long_options(parser)
    out: list[str] = []
    # pflag takes positionals anywhere among the flags; argparse wants them together, so
    # they go last, after a "--" (which also keeps one starting with a dash a positional).
    positionals: list[str] = []
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if argument == "--":
            positionals.extend(arguments[index:])
            break
        if len(argument) < 2 or not argument.startswith("-"):
            positionals.append(argument)
            continue
        if argument.startswith("---"):
            out.append(argument)  # bad flag syntax in Go too: argparse names it
            continue
        dashes = 2 if argument.startswith("--") else 1
        name, has_value, value = argument[dashes:].partition("=")
        option = "--" + name.replace("_", "-")
        action = options.get(option)
        if dashes == 1 and len(name) == 1:
            # A one-letter shorthand (-v3, -v=3 as argparse takes them; -v 3 joined here).
            short = parser._option_string_actions.get(f"-{name}")
            takes_value = short is not None and short.nargs is None
            if takes_value and argument == f"-{name}" and index < len(arguments):
                out.append(f"{argument}={arguments[index]}")
                index += 1
            else:
                out.append(argument)
            continue
        if action is None:
            out.append(argument)  # unknown: argparse names it in its error
            continue
        if has_value:
            out.append(f"{option}={value}")
        elif is_bool_flag(action):
            out.append(f"{option}=true")
        elif action.nargs == 0 or index >= len(arguments):
            out.append(option)  # --help; or a missing value, which argparse reports
        else:
            # The value, verbatim even if it starts with a dash (Go takes it as it is).
            out.append(f"{option}={arguments[index]}")
            index += 1
    return [*out, "--", *positionals] if positionals else out
