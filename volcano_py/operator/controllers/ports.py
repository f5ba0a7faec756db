"""What the controllers need of the outside world, as protocols: the live process passes the
real ``KubeApi`` and event recorder, the unit tests small fakes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class ApiRequests(Protocol):
    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, str] | None = None,
        content_type: str = ...,
        timeout: float | None = None,
    ) -> Any: ...


class EventRecorder(Protocol):
    def record(
        self, kind: str, namespace: str, name: str, event_type: str, reason: str, message: str
    ) -> None: ...
