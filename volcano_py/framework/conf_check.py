"""A parsed conf checked against what exists: the registry's actions, plugins and the
arguments each declares.

Unknown action and plugin names are refused (``UnknownNameError``, the closest known name
suggested), and so are plugin arguments Volcano exits on (``RefusedArgumentsError``, from the
module's ``REFUSED_ARGUMENTS(arguments) -> reason | None``). An argument a plugin or action
does not declare, one Volcano reads that volcano-py does not act on, a ``configurations`` entry
for an unknown action (a plugin's own entry, such as deviceshare's ``init-params``, is declared
through ``declared_action_arguments``) and a plugin listed twice are warned once, through the conf's
``ConfDiagnostics``.

A module declares its arguments next to its ``new`` as ``ARGUMENTS`` (upstream spelling; an
entry ending in ``*`` is a prefix pattern) and, when Volcano reads arguments volcano-py does not
act on, ``UNSUPPORTED_ARGUMENTS``. A plugin without ``ARGUMENTS`` (a third-party one) is not
checked.

``RETIRED_ARGUMENTS`` (name or ``prefix*`` -> ``RetiredArgument``) are those Volcano once read and
reads no more, though its user guides still show them. They are inert, as on Volcano, and not
warned (``simulate`` stays quiet about a guide's conf); the log says once per process, at info
level, that each is retired and what replaces it. Where one used to change a placement (set
true, it made a plugin fit some resources itself), a conf that sets it true while its successor
is off gets a ``resource_notes`` entry per such resource: the "Insufficient <resource>" reason of
a pod left pending carries it, so the user learns why no per-device fit happened.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from volcano_py.api.task import parse_go_bool
from volcano_py.framework.conf import (
    DEFAULT_CONF,
    ConfDiagnostics,
    RefusedArgumentsError,
    SchedulerConf,
    UnknownNameError,
    closest,
    parse_conf,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RetiredArgument:
    """An argument Volcano's code reads no more (its guides may still show it): inert."""

    # Since when and why, in a user's words ("Volcano v1.8 moved GPU sharing to deviceshare").
    why: str
    # What to set instead ("deviceshare.GPUSharingEnable on the deviceshare plugin").
    replacement: str
    # When, set true, it used to make a plugin fit these resources itself: the (plugin,
    # argument) that does so now. Set true while that one is off, a pod short of one of these
    # resources is told so.
    successor: tuple[str, str] | None = None
    resources: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DeclaredArguments:
    accepted: frozenset[str]
    # Read by Volcano, no effect here: named when set rather than silently dropped.
    unsupported: frozenset[str] = frozenset()
    # Why Volcano would exit on these arguments (its klog.Fatal checks), or None.
    refuse: Callable[[Mapping[str, Any]], str | None] | None = None
    # Read by Volcano no more: inert there and here (see the module docstring).
    retired: Mapping[str, RetiredArgument] = field(default_factory=dict)

    def accepts(self, key: str) -> bool:
        return _matches(key, self.accepted)

    def is_unsupported(self, key: str) -> bool:
        return _matches(key, self.unsupported)

    def retirement(self, key: str) -> RetiredArgument | None:
        """Why ``key`` is retired, or None."""
        for entry, retired in self.retired.items():
            if _matches(key, frozenset((entry,))):
                return retired
        return None


def _matches(key: str, entries: frozenset[str]) -> bool:
    """``key`` is one of ``entries``, or starts with an entry ending in ``*``."""
    return any(
        key.startswith(entry[:-1]) if entry.endswith("*") else key == entry for entry in entries
    )


class ConfVocabulary(Protocol):
    """What a conf may name (the plugin registry is one)."""

    def action_names(self) -> Collection[str]: ...

    def plugin_names(self) -> Collection[str]: ...

    def declared_action_arguments(self, name: str) -> DeclaredArguments | None: ...

    def declared_plugin_arguments(self, name: str) -> DeclaredArguments | None: ...


def load_conf(
    text: str,
    vocabulary: ConfVocabulary,
    *,
    source: str = "volcano-scheduler.conf",
    emit: Callable[[str], None] | None = None,
) -> SchedulerConf:
    """Parse and check a conf; ``ConfError`` when it cannot be used, warnings to ``emit``."""
    conf = parse_conf(text, vocabulary.action_names(), source=source, emit=emit)
    check_conf(conf, vocabulary, source)
    return conf


def load_default_conf(
    vocabulary: ConfVocabulary, emit: Callable[[str], None] | None = None
) -> SchedulerConf:
    return load_conf(DEFAULT_CONF, vocabulary, source="built-in default conf", emit=emit)


def check_conf(conf: SchedulerConf, vocabulary: ConfVocabulary, source: str) -> None:
    plugin_names = vocabulary.plugin_names()
    seen: dict[str, str] = {}
    for t, tier in enumerate(conf.tiers):
        for p, option in enumerate(tier.plugins):
            where = f"{source}: tiers[{t}].plugins[{p}]"
            if option.name not in plugin_names:
                raise UnknownNameError(
                    f"{where}: unknown plugin {option.name!r}{closest(option.name, plugin_names)}"
                )
            if option.name in seen:
                conf.diagnostics.warn(
                    f"{where}: plugin {option.name!r} is already listed at {seen[option.name]};"
                    " each entry opens its own instance"
                )
            seen.setdefault(option.name, f"tiers[{t}].plugins[{p}]")
            declared = vocabulary.declared_plugin_arguments(option.name)
            _check_arguments(
                option.arguments,
                declared,
                f"{where} ({option.name})",
                "plugin",
                conf.diagnostics,
            )
            if declared is not None:
                _note_retired(conf, option.name, option.arguments, declared)
            refusal = (
                declared.refuse(option.arguments)
                if declared is not None and declared.refuse is not None
                else None
            )
            if refusal is not None:
                raise RefusedArgumentsError(f"{where} ({option.name}): arguments: {refusal}")
    action_names = vocabulary.action_names()
    for action, arguments in conf.configurations.items():
        where = f"{source}: configurations (name {action!r})"
        declared_entry = vocabulary.declared_action_arguments(action)
        if action not in action_names and declared_entry is None:
            conf.diagnostics.warn(
                f"{where}: unknown action{closest(action, action_names)}; ignored"
            )
            continue
        _check_arguments(
            arguments,
            declared_entry,
            where,
            "action" if action in action_names else "configuration",
            conf.diagnostics,
        )


def _check_arguments(
    arguments: Mapping[str, Any],
    declared: DeclaredArguments | None,
    where: str,
    kind: str,
    diagnostics: ConfDiagnostics,
) -> None:
    if declared is None:
        return
    for key in arguments:
        name = str(key)
        if declared.retirement(name) is not None:
            continue
        if declared.is_unsupported(name):
            diagnostics.warn(
                f"{where}: argument {name!r} is read by Volcano but has no effect in"
                " volcano-py; ignored"
            )
        elif not declared.accepts(name):
            known = [entry for entry in declared.accepted if not entry.endswith("*")]
            diagnostics.warn(
                f"{where}: unknown {kind} argument {name!r}{closest(name, known)}; ignored"
            )


# Retired arguments already logged by this process (the conf is reloaded, not the news).
_logged_retired: set[tuple[str, str]] = set()


def _note_retired(
    conf: SchedulerConf, plugin: str, arguments: Mapping[str, Any], declared: DeclaredArguments
) -> None:
    """Log each retired argument the entry sets, once per process; and where one set true
    would have turned on a per-device fit that its successor leaves off, say so next to the
    resources it concerned (``conf.resource_notes``)."""
    for key, value in arguments.items():
        name = str(key)
        retired = declared.retirement(name)
        if retired is None:
            continue
        if (plugin, name) not in _logged_retired:
            _logged_retired.add((plugin, name))
            log.info(
                "plugin %s: argument %s is retired and has no effect, as on Volcano: %s;"
                " set %s instead",
                plugin,
                name,
                retired.why,
                retired.replacement,
            )
        if retired.successor is None or not _is_true(value):
            continue
        successor_plugin, successor_argument = retired.successor
        if _set_true(conf, successor_plugin, successor_argument):
            continue
        for resource in retired.resources:
            conf.resource_notes.setdefault(
                resource,
                f"counted as a plain resource, not per device: {successor_argument} is off"
                f" on plugin {successor_plugin}; {name} is retired, {retired.why}",
            )


def _is_true(value: Any) -> bool:
    """A YAML true, or a string Go's ParseBool reads as true (``Arguments.get_bool``)."""
    return value is True or (isinstance(value, str) and parse_go_bool(value) is True)


def _set_true(conf: SchedulerConf, plugin: str, argument: str) -> bool:
    """An entry of ``plugin`` sets ``argument`` true (each entry opens its own instance)."""
    return any(
        option.name == plugin and _is_true(option.arguments.get(argument))
        for tier in conf.tiers
        for option in tier.plugins
    )
