"""A scripted stand-in for KubeApi: answers by (method, path), records every call."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable
from typing import Any

from volcano_py.runtime.apiclient import ApiError

Answer = Any  # a value, an ApiError to raise, or a callable(body) -> value


class FakeApi:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.answers: dict[tuple[str, str], list[Answer]] = {}
        self.lists: dict[str, list[tuple[list[dict[str, Any]], str]]] = {}
        self.watches: dict[str, list[list[dict[str, Any]]]] = {}

    def answer(self, method: str, path: str, *answers: Answer) -> None:
        self.answers.setdefault((method, path), []).extend(answers)

    async def request(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        self.calls.append((method, path, copy.deepcopy(body)))
        queue = self.answers.get((method, path))
        if not queue:
            raise AssertionError(f"unexpected {method} {path}")
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, ApiError):
            raise answer
        if callable(answer):
            return answer(body)
        return copy.deepcopy(answer)

    async def list_all(
        self, path: str, params: Any = None, page_size: int = 500
    ) -> tuple[list[dict[str, Any]], str]:
        self.calls.append(("LIST", path, None))
        pages = self.lists[path]
        items, version = pages.pop(0) if len(pages) > 1 else pages[0]
        return copy.deepcopy(items), version

    async def watch(
        self, path: str, params: Any, timeout_seconds: int
    ) -> AsyncIterator[dict[str, Any]]:
        self.calls.append(("WATCH", path, dict(params)))
        streams = self.watches.get(path) or [[]]
        events = streams.pop(0) if len(streams) > 1 else streams[0]
        for event in events:
            if isinstance(event, ApiError):
                raise event
            yield copy.deepcopy(event)
        await _forever()


async def _forever() -> None:
    import asyncio

    await asyncio.Event().wait()


def error(status: int, method: str = "GET", path: str = "/") -> ApiError:
    return ApiError(method, path, status, f"HTTP {status}")


def obj(name: str, version: str, namespace: str | None = "ns", **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": version, "uid": f"uid-{name}"}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta, **extra}


Recorder = Callable[[str, str, Any], None]
