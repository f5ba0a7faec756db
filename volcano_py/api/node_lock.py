"""The device node lock (``pkg/scheduler/plugins/util/nodelock``): an annotation on the Node,
its value the RFC 3339 time it was taken, that serialises device binds per node. The device
plugin (HAMi's, Volcano's GPU share plugin) removes it once it has read the pod's devices; a
lock older than five minutes counts as abandoned and may be taken over.

Pure rules here; the deviceshare plugin checks them against the session's view of the node
and the binders (live and simulated) take the lock on the Node itself before the Binding.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Final

# The lock names of the device kinds (each ``Allocate``'s ``LockNode`` call): GPU sharing by
# memory, HAMi vGPU, HAMi Ascend vNPU.
GPUSHARE_LOCK: Final = "gpu"
VGPU_LOCK: Final = "hamivgpu"
ASCEND_HAMI_LOCK: Final = "hami.io/mutex.lock"
DEVICE_LOCKS: Final = (GPUSHARE_LOCK, VGPU_LOCK, ASCEND_HAMI_LOCK)

# ``time.Since(lockTime) > time.Minute*5``: older than this, the lock is taken over.
LOCK_EXPIRY_SECONDS: Final = 300.0
# ``MaxLockRetry``: tries of a lock write that lost a race with another writer.
MAX_LOCK_RETRY: Final = 5

# Go's time.RFC3339 layout as its parser accepts it (fractional seconds allowed).
_RFC3339: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})", re.IGNORECASE
)


def lock_value(now: float) -> str:
    """The annotation's value for a lock taken at ``now`` (seconds since the epoch)."""
    return datetime.fromtimestamp(int(now), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_lock_time(text: str) -> float | None:
    """The time of a lock annotation, or None when it is not RFC 3339."""
    if not _RFC3339.fullmatch(text):
        return None
    try:
        return datetime.fromisoformat(text.upper().replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def lock_expiry(annotations: Mapping[str, str]) -> float | None:
    """When the earliest device lock among ``annotations`` stops holding (seconds since the
    Unix epoch; a lock is free once strictly older than five minutes), or None."""
    found = [
        taken + LOCK_EXPIRY_SECONDS
        for name in DEVICE_LOCKS
        if name in annotations and (taken := parse_lock_time(str(annotations[name]))) is not None
    ]
    return min(found, default=None)


def lock_refusal(
    node_name: str, annotations: Mapping[str, str], lock_name: str, now: float
) -> str | None:
    """``LockNode``'s verdict: why ``lock_name`` cannot be taken on the node now, or None
    when it is free (absent, or older than five minutes: abandoned)."""
    text = annotations.get(lock_name)
    if text is None:
        return None
    taken = parse_lock_time(str(text))
    if taken is None:
        # Upstream returns the parse error: a lock it cannot read is never taken over.
        return f'parsing time "{text}" as RFC3339 for lock {lock_name} on node {node_name}'
    if now - taken > LOCK_EXPIRY_SECONDS:
        return None
    return f"node {node_name} has been locked within 5 minutes"


def lock_holding(node_name: str, annotations: Mapping[str, str], lock_name: str) -> str:
    """Which lock holds the node, for a pending reason or an event: the annotation, when it
    was taken and until when it holds. Volcano's own words ("has been locked within 5
    minutes") name neither."""
    text = str(annotations.get(lock_name, ""))
    taken = parse_lock_time(text)
    if taken is None:
        return (
            f"lock annotation {lock_name!r} on node {node_name} is {text!r}, not an RFC 3339"
            " time: it holds until it is removed"
        )
    return held_since(node_name, lock_name, taken)


def held_since(node_name: str, lock_name: str, taken: float) -> str:
    """A lock taken at ``taken``, in the words of ``lock_holding``."""
    return (
        f"lock annotation {lock_name!r} on node {node_name} taken at {lock_value(taken)},"
        f" held until {lock_value(taken + LOCK_EXPIRY_SECONDS)}"
    )
