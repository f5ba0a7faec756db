"""What a running process uses, read from Linux's /proc: CPU seconds and resident memory.
Shared by the benches that run the live processes (side-by-side, restart, controller-rate)."""

from __future__ import annotations

import os
from pathlib import Path


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far (``/proc/<pid>/stat`` utime and stime)."""
    # The command name in parentheses may hold spaces: split after its closing one.
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mib(pid: int) -> dict[str, float]:
    """``rss_mib`` (VmRSS) and ``peak_rss_mib`` (VmHWM) of ``pid``."""
    names = {"VmRSS": "rss_mib", "VmHWM": "peak_rss_mib"}
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in names:
            found[names[key]] = int(value.split()[0]) / 1024
    return found
