"""What the live controllers share about the objects they write: a key's parts, the wall
clock, and the status write of a controller that owns its object's status."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from volcano_py.operator.controllers.kinds import namespaced_path
from volcano_py.operator.controllers.ports import ApiRequests
from volcano_py.operator.controllers.store import ObjectStore
from volcano_py.operator.controllers.workqueue import RetryLater
from volcano_py.operator.informer import ResourceKind
from volcano_py.runtime.apiclient import ApiError


def split_key(key: str) -> tuple[str, str]:
    """``namespace/name`` -> (namespace, name)."""
    namespace, _, name = key.partition("/")
    return namespace, name


def wall_clock() -> datetime:
    return datetime.now(UTC)


async def write_status(
    api: ApiRequests,
    store: ObjectStore,
    kind: ResourceKind,
    key: str,
    obj: Mapping[str, Any],
    new_status: Mapping[str, Any],
) -> None:
    """PUT the status subresource. Our own write is applied to the store at once, so the next
    round sees it before the watch delivers it (a CronJob's ``status.active``, a flow's
    phase). A vanished object ends it; any other error is retried after a back-off."""
    updated = copy.deepcopy(dict(obj))
    updated["status"] = copy.deepcopy(dict(new_status))
    path = namespaced_path(kind, *split_key(key)) + "/status"
    try:
        written = await api.request("PUT", path, updated)
    except ApiError as error:
        if error.not_found:
            return
        raise RetryLater(str(error)) from None
    store.apply(kind.kind, "MODIFIED", written)
