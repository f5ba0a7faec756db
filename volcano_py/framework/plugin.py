"""What a plugin and an action are, and how they are built (``framework/interface.go``).

This is the public place to import the interfaces from (see docs/plugins.md). ``Plugin`` and
``PluginBuilder`` are declared in :mod:`volcano_py.framework.session`, which calls them, so
that the session imports nothing above it; they are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from volcano_py.framework.arguments import Arguments
from volcano_py.framework.session import Plugin, PluginBuilder, Session

__all__ = ["Action", "ActionBuilder", "Arguments", "Plugin", "PluginBuilder"]


class Action(Protocol):
    name: str

    def execute(self, ssn: Session) -> None: ...


ActionBuilder = Callable[[], Action]
