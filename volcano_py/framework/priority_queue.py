"""A binary heap ordered by a "does a go before b" function (``util/priority_queue.go``)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Entry(Generic[T]):
    __slots__ = ("before", "item")

    def __init__(self, item: T, before: Callable[[T, T], bool]) -> None:
        self.item = item
        self.before = before

    def __lt__(self, other: _Entry[T]) -> bool:
        return self.before(self.item, other.item)


class PriorityQueue(Generic[T]):
    def __init__(self, before: Callable[[T, T], bool], items: Iterable[T] = ()) -> None:
        self._before = before
        self._heap: list[_Entry[T]] = [_Entry(item, before) for item in items]
        heapq.heapify(self._heap)

    def push(self, item: T) -> None:
        heapq.heappush(self._heap, _Entry(item, self._before))

    def pop(self) -> T:
        return heapq.heappop(self._heap).item

    def empty(self) -> bool:
        return not self._heap

    def __len__(self) -> int:
        return len(self._heap)

    def clone(self) -> PriorityQueue[T]:
        """An independent queue holding the same items (the heap copied, not rebuilt)."""
        copy: PriorityQueue[T] = PriorityQueue(self._before)
        copy._heap = list(self._heap)
        return copy
