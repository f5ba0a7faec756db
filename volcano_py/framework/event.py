"""Allocation events: how plugins keep their per-session state (shares, queue usage) current."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from volcano_py.api.task import TaskInfo


@dataclass(slots=True)
class Event:
    task: TaskInfo
    # A handler sets this to veto an allocation; the statement then rolls it back.
    error: str = ""


@dataclass(slots=True)
class EventHandler:
    allocate: Callable[[Event], None] | None = None
    deallocate: Callable[[Event], None] | None = None
    owner: str = field(default="")
