"""The cyclic garbage collector in a ``simulate`` run.

A dump of 5k nodes and 60k pods is millions of long-lived objects, and each cycle leaves
hundreds of thousands more behind (new pod versions, the cache's new tasks, the session the
report reads). With the collector on between cycles, each survivor of a cycle is traversed
when young, to find next to no garbage: what a cycle drops is freed by reference counting,
but for the small part of a session its plugins' helpers keep in reference cycles (the rest
``Session.release`` frees).

So the loaded cluster is frozen (out of the collector's sight) without a collection, as is
what each cycle leaves, and a full collection runs every ``CYCLES_BETWEEN_COLLECTIONS``
cycles run: the garbage kept meanwhile is at most that many sessions' leftovers (about 8k
small objects a session at 1k nodes). A run of a few cycles never pays for one.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Final

CYCLES_BETWEEN_COLLECTIONS: Final = 32


@dataclass
class CycleCollector:
    """Freezes what a simulation keeps; collects in full every so many cycles."""

    cycles_since_collection: int = 0
    full_collections: int = 0

    def after_load(self) -> None:
        """The loaded cluster is long-lived: frozen, without a collection (it was built with
        the collector paused, and holds next to no garbage)."""
        gc.freeze()

    def after_cycle(self) -> None:
        self.cycles_since_collection += 1
        if self.cycles_since_collection >= CYCLES_BETWEEN_COLLECTIONS:
            gc.unfreeze()
            gc.collect()
            self.full_collections += 1
            self.cycles_since_collection = 0
        gc.freeze()

    def close(self) -> None:
        """Give everything back to the collector (an in-process caller goes on living)."""
        gc.unfreeze()
