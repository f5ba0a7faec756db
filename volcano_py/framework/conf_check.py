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
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from volcano_py.framework.conf import (
    DEFAULT_CONF,
    ConfDiagnostics,
    RefusedArgumentsError,
    SchedulerConf,
    UnknownNameError,
    closest,
    parse_conf,
)


@dataclass(frozen=True, slots=True)
class DeclaredArguments:
    accepted: frozenset[str]
    # Read by Volcano, no effect here: named when set rather than silently dropped.
    unsupported: frozenset[str] = frozenset()
    # Why Volcano would exit on these arguments (its klog.Fatal checks), or None.
    refuse: Callable[[Mapping[str, Any]], str | None] | None = None

    def accepts(self, key: str) -> bool:
        return _matches(key, self.accepted)

    def is_unsupported(self, key: str) -> bool:
        return _matches(key, self.unsupported)


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
