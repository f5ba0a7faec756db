"""``python -m bench.memtrace volcano_py ARGS...``: run ``python -m volcano_py ARGS...`` with
tracemalloc on (``$VOLCANO_PY_MEMTRACE_FRAMES`` frames a trace, 8; 0 leaves it off and
counts objects only), taking a snapshot on request. ``python -m bench.memtrace compare OLD NEW``:
what grew from one snapshot to the other, by line and by traceback. Used by ``bench churn
--memtrace`` to find what a live process keeps round after round; never by the product.

The directory is ``$VOLCANO_PY_MEMTRACE_DIR``. A request is a file ``<pid>.request`` holding a
tag (the round); a watcher thread answers it with ``<pid>-<tag>.snapshot`` (tracemalloc's,
after a full collection) and ``<pid>-<tag>.json`` (the collection's result, tracemalloc's traced
total, the objects the collector tracks by type). Requests are answered by a thread rather than
a signal handler: the scheduler already owns SIGUSR1/SIGUSR2, and a thread needs the main
thread neither idle nor in Python code. Comparing is left to ``compare``, outside the process:
tracemalloc groups its traces in Python, minutes for a scheduler's million on this machine.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import gc
import json
import os
import runpy
import sys
import threading
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

DIR_VARIABLE = "VOLCANO_PY_MEMTRACE_DIR"
FRAMES_VARIABLE = "VOLCANO_PY_MEMTRACE_FRAMES"
TOP = 30


def request_path(directory: Path, pid: int) -> Path:
    return directory / f"{pid}.request"


def answer_path(directory: Path, pid: int, tag: str) -> Path:
    return directory / f"{pid}-{tag}.json"


def snapshot_path(directory: Path, pid: int, tag: str) -> Path:
    return directory / f"{pid}-{tag}.snapshot"


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def malloc_info() -> dict[str, float]:
    """glibc's heap (``mallinfo2``, glibc >= 2.33), MiB: what malloc holds from the system
    (``held``), how much of it is in use, and how much is free but kept (``free``): the part
    of the RSS that no Python object accounts for. Empty elsewhere (musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        function = ctypes.CDLL(name).mallinfo2
    except (OSError, AttributeError, TypeError):
        return {}
    function.restype = _MallInfo2
    info = function()
    mib = 2**20
    return {
        "held_mib": round((info.arena + info.hblkhd) / mib, 1),
        "in_use_mib": round((info.uordblks + info.hblkhd) / mib, 1),
        "free_mib": round(info.fordblks / mib, 1),
    }


def type_counts() -> Counter[str]:
    """Objects the collector tracks, by qualified type name."""
    return Counter(f"{type(obj).__module__}.{type(obj).__qualname__}" for obj in gc.get_objects())


class Watcher:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.pid = os.getpid()

    def answer(self, tag: str) -> dict[str, Any]:
        unreachable = gc.collect()
        types = type_counts()
        if tracemalloc.is_tracing():
            tracemalloc.take_snapshot().dump(str(snapshot_path(self.directory, self.pid, tag)))
        traced, peak = tracemalloc.get_traced_memory()  # (0, 0) when not tracing
        return {
            "tag": tag,
            "unreachable_collected": unreachable,
            "traced_mib": round(traced / 2**20, 2),
            "traced_peak_mib": round(peak / 2**20, 2),
            "gc_objects": sum(types.values()),
            "malloc": malloc_info(),
            "types": dict(types),
        }

    def run(self) -> None:
        request = request_path(self.directory, self.pid)
        while True:
            time.sleep(0.5)
            if not request.exists():
                continue
            tag = request.read_text().strip() or "0"
            answer = self.answer(tag)
            temporary = answer_path(self.directory, self.pid, tag).with_suffix(".tmp")
            temporary.write_text(json.dumps(answer))
            temporary.rename(answer_path(self.directory, self.pid, tag))
            request.unlink()


def types_grown(old: dict[str, int], new: dict[str, int]) -> list[tuple[str, int]]:
    """Types whose count changed most from ``old`` to ``new`` (answers' ``types``)."""
    changed = ((name, new.get(name, 0) - old.get(name, 0)) for name in set(old) | set(new))
    return sorted((item for item in changed if item[1]), key=lambda item: -abs(item[1]))[:TOP]


def compare(old: Path, new: Path, frames: int = 8) -> str:
    """The largest growth from snapshot ``old`` to ``new``, by line then by traceback."""
    before = tracemalloc.Snapshot.load(str(old))
    after = tracemalloc.Snapshot.load(str(new))
    lines = [f"tracemalloc growth from {old.name} to {new.name}", "by line:"]
    for stat in after.compare_to(before, "lineno")[:TOP]:
        frame = stat.traceback[0]
        lines.append(
            f"  {stat.size_diff / 1024:+10.1f} KiB {stat.count_diff:+8d}"
            f"  {frame.filename}:{frame.lineno}"
        )
    lines.append("by traceback (innermost last):")
    for stat in after.compare_to(before, "traceback")[:TOP]:
        lines.append(f"  {stat.size_diff / 1024:+10.1f} KiB {stat.count_diff:+8d}")
        lines.extend(f"      {frame.filename}:{frame.lineno}" for frame in stat.traceback[-frames:])
    return "\n".join(lines)


def run_traced() -> None:
    directory = Path(os.environ[DIR_VARIABLE])
    frames = int(os.environ.get(FRAMES_VARIABLE, "8"))
    if frames > 0:  # 0: object counts only, at full speed
        tracemalloc.start(frames)
    threading.Thread(target=Watcher(directory).run, name="memtrace", daemon=True).start()
    module, *rest = sys.argv[1:]
    sys.argv = [module, *rest]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def main() -> None:
    if sys.argv[1:2] != ["compare"]:
        run_traced()
        return
    parser = argparse.ArgumentParser(prog="python -m bench.memtrace compare")
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--frames", type=int, default=8)
    args = parser.parse_args(sys.argv[2:])
    print(compare(args.old, args.new, args.frames))


if __name__ == "__main__":
    main()
