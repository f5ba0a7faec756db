"""One logging pipeline for the long-running commands: stdlib ``logging`` to stderr, plain
text or one JSON object a line.

Volcano's ``-v`` maps onto levels: up to 3 (decisions) is INFO, 4 (per node/plugin) is DEBUG,
5 and above is TRACE (5). Hot loops guard their messages with ``isEnabledFor``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from dataclasses import dataclass
from typing import Final

TRACE: Final = 5
logging.addLevelName(TRACE, "TRACE")

_RECORD_FIELDS: Final = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None)))


def level_for_verbosity(verbosity: int) -> int:
    if verbosity >= 5:
        return TRACE
    if verbosity >= 4:
        return logging.DEBUG
    return logging.INFO


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "msg", ...extra}``: what log shippers parse."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and not key.startswith("_"):
                entry[key] = value if isinstance(value, str | int | float | bool) else str(value)
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry)


@dataclass(frozen=True)
class LogTargets:
    """Where records go (klog's flags): stderr at or above ``stderr_level`` while
    ``to_stderr`` or ``also_to_stderr``, and ``file`` (if any) unless ``to_stderr``
    (klog ignores its files when logging to stderr only)."""

    to_stderr: bool = True
    also_to_stderr: bool = False
    stderr_level: int = logging.NOTSET
    # klog's legacy behaviour: the threshold only applies when writing files as well.
    legacy_threshold: bool = False
    file: str = ""
    headers: bool = True


def configure(
    verbosity: int = 2, log_format: str = "plain", targets: LogTargets = LogTargets()
) -> None:
    handlers: list[logging.Handler] = []
    if targets.file and not targets.to_stderr:
        handlers.append(logging.FileHandler(targets.file, encoding="utf-8"))
    # klog: with files, stderr still gets the records at or above --stderrthreshold.
    stderr = logging.StreamHandler(sys.stderr)
    everything = targets.also_to_stderr or (targets.legacy_threshold and targets.to_stderr)
    stderr.setLevel(logging.NOTSET if everything else targets.stderr_level)
    handlers.append(stderr)
    if log_format == "json":
        formatter: logging.Formatter = JsonFormatter()
    elif targets.headers:
        formatter = logging.Formatter("%(asctime)s %(levelname).1s %(name)s: %(message)s")
    else:
        formatter = logging.Formatter("%(message)s")
    root = logging.getLogger()
    for existing in list(root.handlers):
        if getattr(existing, "_volcano_py", False):  # ours from an earlier call only
            root.removeHandler(existing)
            existing.close()
    for handler in handlers:
        handler.setFormatter(formatter)
        handler._volcano_py = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(level_for_verbosity(verbosity))
    # Client libraries stay at WARNING unless tracing.
    quiet = logging.WARNING if verbosity < 5 else TRACE
    for name in ("aiohttp", "urllib3", "kubernetes", "asyncio"):
        logging.getLogger(name).setLevel(quiet)


def flush_and_exit(status: int = 1) -> None:
    """Exit at once, logs flushed: a process that lost its Lease must stop acting now, not
    after its threads and tasks wind down (another replica already leads)."""
    for handler in logging.getLogger().handlers:
        with contextlib.suppress(Exception):
            handler.flush()
    sys.stderr.flush()
    os._exit(status)
