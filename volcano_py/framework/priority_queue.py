"""A binary heap ordered by a "does a go before b" function (``util/priority_queue.go``), and a
sorted queue for items a key orders the same way."""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Iterable
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")


class OrderedQueue(Protocol[T]):
    """What a loop over queued items needs: both queues below offer it."""

    def push(self, item: T) -> None: ...

    def pop(self) -> T: ...

    def empty(self) -> bool: ...

    def __len__(self) -> int: ...


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


class SortedQueue(Generic[T]):
    """The items sorted once by ``key``, popped smallest first; a pushed item goes to its
    place among those left.

    When ``key`` orders the items strictly (no two with equal keys) exactly as a "before"
    function does, this pops what ``PriorityQueue(before)`` pops, in the same order: a heap
    under a strict total order pops in that order. Sorting once costs a few comparisons of
    keys per item, where the heap asks ``before`` (a Python call through every plugin's
    hook) about twice per level at each pop.

    Each item's key is computed once, when it joins the queue, and kept: the heap agrees only
    while what the keys read does not change for the items waiting in it."""

    __slots__ = ("_items", "_key", "_keys", "_next")

    def __init__(self, key: Callable[[T], Any], items: Iterable[T] = ()) -> None:
        self._key = key
        keyed = sorted(((key(item), item) for item in items), key=_first)
        self._keys: list[Any] = [pair[0] for pair in keyed]
        self._items: list[T] = [pair[1] for pair in keyed]
        self._next = 0

    def push(self, item: T) -> None:
        key = self._key(item)
        at = bisect.bisect_right(self._keys, key, lo=self._next)
        self._keys.insert(at, key)
        self._items.insert(at, item)

    def pop(self) -> T:
        if self._next >= len(self._items):
            raise IndexError("pop from an empty queue")
        item = self._items[self._next]
        self._next += 1
        return item

    def empty(self) -> bool:
        return self._next >= len(self._items)

    def __len__(self) -> int:
        return len(self._items) - self._next


def _first(pair: tuple[Any, Any]) -> Any:
    return pair[0]
