"""``bench.memtrace``: the answer a traced process writes, and the comparison of two."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.memtrace import Watcher, answer_path, compare, snapshot_path, types_grown


class Kept:
    """Objects of a type of our own, to find in the counts."""


@pytest.fixture
def tracing() -> Iterator[None]:
    tracemalloc.start(4)
    try:
        yield
    finally:
        tracemalloc.stop()


def test_types_grown_lists_the_largest_changes_either_way() -> None:
    old = {"a": 10, "b": 5, "c": 1}
    new = {"a": 12, "b": 5, "d": 7}
    assert types_grown(old, new) == [("d", 7), ("a", 2), ("c", -1)]


def test_an_answer_counts_objects_and_a_compare_finds_what_grew(
    tmp_path: Path, tracing: None
) -> None:
    watcher = Watcher(tmp_path)
    first = watcher.answer("1")
    kept = [Kept() for _ in range(2000)]
    second = watcher.answer("2")
    assert second["types"][f"{__name__}.Kept"] == first["types"].get(f"{__name__}.Kept", 0) + 2000
    assert second["traced_mib"] > 0
    assert set(second["malloc"]) in (set(), {"held_mib", "in_use_mib", "free_mib"})  # glibc only
    json.dumps(second)  # what the watcher writes to answer_path
    assert answer_path(tmp_path, watcher.pid, "2").name == f"{watcher.pid}-2.json"
    text = compare(
        snapshot_path(tmp_path, watcher.pid, "1"), snapshot_path(tmp_path, watcher.pid, "2")
    )
    assert "by traceback" in text
    assert __file__ in text  # the list above is the growth, and where it was made
    assert len(kept) == 2000
