"""What a plugin and an action are, and how they are built (``framework/interface.go``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from volcano_py.framework.arguments import Arguments

if TYPE_CHECKING:
    from volcano_py.framework.session import Session


class Plugin(Protocol):
    """Registers hooks on the session in ``on_session_open``; drops its state on close."""

    name: str

    def on_session_open(self, ssn: Session) -> None: ...

    def on_session_close(self, ssn: Session) -> None: ...


PluginBuilder = Callable[[Arguments], Plugin]


class Action(Protocol):
    name: str

    def execute(self, ssn: Session) -> None: ...


ActionBuilder = Callable[[], Action]
