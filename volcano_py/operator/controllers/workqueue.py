"""A work queue of keys, as client-go's: a key is handed to one worker at a time, requests
added while it is being worked on wait for the next round (nothing is lost, nothing for the
same key runs concurrently), and a failed round is retried after a growing delay."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

R = TypeVar("R")
Handler = Callable[[str, list[R]], Awaitable[None]]


class RetryLater(Exception):
    """Raised by a handler: these requests could not be completed (a 409, a transient API
    error); run them again after a delay."""

    def __init__(self, reason: str, requests: list[object] | None = None) -> None:
        super().__init__(reason)
        self.requests = requests


class KeyedWorkQueue(Generic[R]):
    def __init__(
        self,
        name: str,
        handler: Handler[R],
        *,
        workers: int = 4,
        base_delay: float = 0.05,
        max_delay: float = 30.0,
        may_work: Callable[[], bool] = lambda: True,
    ) -> None:
        self.name = name
        self.handler = handler
        self.workers = workers
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.may_work = may_work
        self.pending: dict[str, list[R]] = {}
        self.processing: set[str] = set()
        self.failures: dict[str, int] = {}
        self._ready: asyncio.Queue[str] = asyncio.Queue()
        self.handled = 0

    def add(self, key: str, request: R) -> None:
        queued = key in self.pending
        self.pending.setdefault(key, []).append(request)
        # A key being processed is queued again when its round ends.
        if not queued and key not in self.processing:
            self._ready.put_nowait(key)

    def add_after(self, delay: float, key: str, request: R) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(delay, self.add, key, request)

    def __len__(self) -> int:
        return len(self.pending) + len(self.processing)

    def start(self) -> list[asyncio.Task[None]]:
        return [
            asyncio.create_task(self._work(), name=f"{self.name} worker {index}")
            for index in range(self.workers)
        ]

    async def _work(self) -> None:
        while True:
            key = await self._ready.get()
            while not self.may_work():
                # Not the leader, or not synced yet: the keys wait, nothing is dropped.
                await asyncio.sleep(0.1)
            requests = self.pending.pop(key, [])
            if not requests:
                continue
            self.processing.add(key)
            try:
                await self.handler(key, requests)
                self.failures.pop(key, None)
            except RetryLater as retry:
                self._retry(key, list(retry.requests or requests), str(retry))  # type: ignore[arg-type]
            except Exception:
                # A bug or an object we cannot handle: logged, never the end of the worker.
                log.exception("%s %s: failed", self.name, key)
            finally:
                self.handled += 1
                self.processing.discard(key)
                if key in self.pending:
                    self._ready.put_nowait(key)

    def _retry(self, key: str, requests: list[R], reason: str) -> None:
        failures = self.failures.get(key, 0) + 1
        self.failures[key] = failures
        delay = min(self.max_delay, self.base_delay * 2 ** (failures - 1))
        log.info("%s %s: %s; retrying in %.2fs", self.name, key, reason, delay)
        loop = asyncio.get_running_loop()
        for request in requests:
            loop.call_later(delay, self.add, key, request)
