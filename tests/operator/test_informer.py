"""The informer: list then watch, relist with a diff on 410, resync by GET, optional kinds."""

from __future__ import annotations

import asyncio
from typing import Any

from operator_fakes import FakeApi, error, obj

from volcano_py.operator.informer import HYPER_NODE, POD, POD_GROUP, Informer, ResourceKind

Events = list[tuple[str, str, str]]


def informer(api: FakeApi, kind: ResourceKind = POD) -> tuple[Informer, Events]:
    seen: Events = []

    def sink(kind_name: str, event_type: str, item: Any) -> None:
        seen.append((event_type, item["metadata"]["name"], item["metadata"]["resourceVersion"]))

    return Informer(api, kind, sink), seen  # type: ignore[arg-type]


async def run_until(inf: Informer, done: Any, timeout: float = 2.0) -> None:
    task = asyncio.create_task(inf.run())
    deadline = asyncio.get_running_loop().time() + timeout
    try:
        while not done():
            assert asyncio.get_running_loop().time() < deadline, "condition not reached"
            await asyncio.sleep(0.005)
    finally:
        task.cancel()


def test_relist_applies_only_the_difference() -> None:
    api = FakeApi()
    inf, seen = informer(api)

    async def main() -> None:
        api.lists["/api/v1/pods"] = [([obj("a", "1"), obj("b", "2")], "2")]
        await inf.relist()
        assert inf.synced.is_set()
        api.lists["/api/v1/pods"] = [([obj("a", "1"), obj("b", "5"), obj("c", "6")], "6")]
        await inf.relist()

    asyncio.run(main())
    assert seen == [("ADDED", "a", "1"), ("ADDED", "b", "2"), ("MODIFIED", "b", "5"),
                    ("ADDED", "c", "6")]  # fmt: skip
    assert inf.resource_version == "6"


def test_a_410_relists_and_deletes_what_vanished_meanwhile() -> None:
    api = FakeApi()
    inf, seen = informer(api, POD_GROUP)
    path = "/apis/scheduling.volcano.sh/v1beta1/podgroups"
    api.lists[path] = [([obj("a", "1"), obj("b", "2")], "2"), ([obj("b", "9")], "9")]
    api.watches[path] = [
        [{"type": "MODIFIED", "object": obj("a", "3")},
         {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "4"}}},
         {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}}],
        [],
    ]  # fmt: skip

    async def main() -> None:
        await run_until(inf, lambda: len(inf.objects) == 1 and inf.lists == 2)

    asyncio.run(main())
    assert seen == [("ADDED", "a", "1"), ("ADDED", "b", "2"), ("MODIFIED", "a", "3"),
                    ("MODIFIED", "b", "9"), ("DELETED", "a", "3")]  # fmt: skip
    watches = [params for method, _, params in api.calls if method == "WATCH"]
    assert watches[0]["resourceVersion"] == "2" and watches[0]["allowWatchBookmarks"] == "true"
    assert watches[1]["resourceVersion"] == "9"


def test_a_dropped_watch_resumes_from_the_last_version() -> None:
    api = FakeApi()
    inf, seen = informer(api)
    api.lists["/api/v1/pods"] = [([], "10")]
    api.watches["/api/v1/pods"] = [
        [{"type": "ADDED", "object": obj("a", "11")}, error(0, "WATCH")],
        [{"type": "DELETED", "object": obj("a", "12")}],
    ]

    async def main() -> None:
        await run_until(inf, lambda: len(seen) == 2)

    asyncio.run(main())
    assert seen == [("ADDED", "a", "11"), ("DELETED", "a", "12")]
    assert [c[2]["resourceVersion"] for c in api.calls if c[0] == "WATCH"] == ["10", "11"]
    assert inf.lists == 1


def test_resync_applies_newer_skips_older_and_deletes_missing() -> None:
    api = FakeApi()
    inf, seen = informer(api)

    async def main() -> None:
        api.lists["/api/v1/pods"] = [([obj("a", "5"), obj("b", "5")], "5")]
        await inf.relist()
        api.answer("GET", "/api/v1/namespaces/ns/pods/a", obj("a", "5"))
        await inf.resync("ns/a")  # same version: applied again (a failed bind's task)
        api.answers.clear()
        api.answer("GET", "/api/v1/namespaces/ns/pods/a", obj("a", "4"))
        await inf.resync("ns/a")  # older than the watch's: ignored
        api.answer("GET", "/api/v1/namespaces/ns/pods/b", error(404))
        assert await inf.resync("ns/b") is None

    asyncio.run(main())
    assert seen[2:] == [("MODIFIED", "a", "5"), ("DELETED", "b", "5")]
    assert "ns/b" not in inf.objects


def test_resync_does_not_bring_back_what_the_watch_deleted_meanwhile() -> None:
    """A failed bind's GET read the pod, the pod was deleted, the watch's DELETED came before
    the GET's answer: the late answer is dropped (found by ``bench churn``: deleted pods stayed
    in the scheduler cache). An object newer than the watch (the watch lags) is applied."""
    api = FakeApi()
    inf, seen = informer(api)

    async def main() -> None:
        api.lists["/api/v1/pods"] = [([obj("a", "5")], "5"), ([], "7")]
        await inf.relist()
        await inf.relist()  # a deleted: the informer is at version 7
        api.answer("GET", "/api/v1/namespaces/ns/pods/a", obj("a", "6"))
        assert await inf.resync("ns/a") is None
        api.answer("GET", "/api/v1/namespaces/ns/pods/c", obj("c", "9"))
        assert await inf.resync("ns/c") is not None

    asyncio.run(main())
    assert seen == [("ADDED", "a", "5"), ("DELETED", "a", "5"), ("ADDED", "c", "9")]
    assert list(inf.objects) == ["ns/c"]


def test_an_optional_kind_that_is_not_served_counts_as_synced() -> None:
    api = FakeApi()
    inf, seen = informer(api, HYPER_NODE)

    async def broken_list(path: str, params: Any = None, page_size: int = 500) -> Any:
        raise error(404)

    api.list_all = broken_list  # type: ignore[method-assign]

    async def main() -> None:
        await run_until(inf, inf.synced.is_set)

    asyncio.run(main())
    assert seen == [] and inf.objects == {}


def test_a_kind_that_fails_otherwise_is_never_synced() -> None:
    api = FakeApi()
    inf, _ = informer(api)

    async def forbidden(path: str, params: Any = None, page_size: int = 500) -> Any:
        raise error(403)

    api.list_all = forbidden  # type: ignore[method-assign]

    async def main() -> None:
        task = asyncio.create_task(inf.run())
        await asyncio.sleep(0.3)
        task.cancel()

    asyncio.run(main())
    assert not inf.synced.is_set()


def test_a_bad_object_does_not_stop_the_watch() -> None:
    api = FakeApi()
    applied: list[str] = []

    def sink(kind: str, event_type: str, item: Any) -> None:
        if item["metadata"]["name"] == "bad":
            raise ValueError("cannot convert")
        applied.append(item["metadata"]["name"])

    inf = Informer(api, POD, sink)  # type: ignore[arg-type]
    api.lists["/api/v1/pods"] = [([obj("bad", "1"), obj("good", "2")], "2")]

    asyncio.run(inf.relist())
    assert applied == ["good"] and inf.synced.is_set()
