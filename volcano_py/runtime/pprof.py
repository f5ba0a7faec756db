"""``--enable-pprof``: Python's nearest honest equivalent of Go's ``net/http/pprof``, served on
the ``--listen-address`` server as upstream. Go's profiles (protobuf, goroutines, the Go heap)
do not exist in a Python process; what is served instead, as plain text:

* ``/debug/pprof/``: this list;
* ``/debug/pprof/cmdline``: the command line, NUL-separated (as Go's);
* ``/debug/pprof/goroutine``: the stack of every thread (Go's ``goroutine?debug=2``);
* ``/debug/pprof/profile?seconds=N`` (default 30, at most 300): a sampling CPU profile of
  every thread, one stack sample per 10 ms, as folded stacks (``frame;frame;frame count``,
  what flamegraph.pl and speedscope read), hottest first.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import traceback
from collections import Counter
from types import FrameType
from typing import Final

from aiohttp import web

from volcano_py.runtime.health import Handler

SAMPLE_INTERVAL: Final = 0.01
MAX_SECONDS: Final = 300


async def index(request: web.Request) -> web.StreamResponse:
    return web.Response(text=__doc__ or "")


async def cmdline(request: web.Request) -> web.StreamResponse:
    return web.Response(text="\x00".join(sys.argv))


def thread_stacks() -> str:
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    parts = []
    for ident, frame in sys._current_frames().items():
        stack = "".join(traceback.format_stack(frame))
        parts.append(f"thread {names.get(ident, '?')} ({ident}):\n{stack}")
    return "\n".join(parts)


async def goroutine(request: web.Request) -> web.StreamResponse:
    return web.Response(text=thread_stacks())


def _folded(frame: FrameType | None) -> str:
    names = []
    while frame is not None:
        code = frame.f_code
        names.append(f"{code.co_qualname} ({code.co_filename}:{frame.f_lineno})")
        frame = frame.f_back
    return ";".join(reversed(names))


def sample_once(samples: Counter[str], skip: int | None) -> None:
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        if ident != skip:
            samples[f"{names.get(ident, '?')};{_folded(frame)}"] += 1


async def profile(request: web.Request) -> web.StreamResponse:
    try:
        seconds = float(request.query.get("seconds", "30"))
    except ValueError:
        return web.Response(status=400, text="seconds: not a number\n")
    if not 0 < seconds <= MAX_SECONDS:
        return web.Response(status=400, text=f"seconds must be in (0, {MAX_SECONDS}]\n")
    samples: Counter[str] = Counter()
    me = threading.get_ident()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        sample_once(samples, skip=me)
        await asyncio.sleep(SAMPLE_INTERVAL)
    lines = [f"{stack} {count}" for stack, count in samples.most_common()]
    return web.Response(text="\n".join(lines) + "\n")


ROUTES: Final[dict[str, Handler]] = {
    "/debug/pprof/": index,
    "/debug/pprof/cmdline": cmdline,
    "/debug/pprof/goroutine": goroutine,
    "/debug/pprof/profile": profile,
}
