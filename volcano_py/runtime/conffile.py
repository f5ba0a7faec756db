"""``--scheduler-conf``, re-read before every cycle.

Volcano watches the ConfigMap's directory with fsnotify; hashing the file once a cycle is as
quick (one small read a second), needs no dependency and survives the kubelet's ``..data``
symlink swap. A file that cannot be read or parsed keeps the last good configuration, logs one
line saying why, and counts ``volcano_scheduler_config_reload_failures_total``; the same broken
content is not reported again every cycle.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from pathlib import Path

from volcano_py.framework.conf import ConfError, SchedulerConf, default_conf, parse_conf
from volcano_py.metrics import CONFIG_RELOAD_FAILURES

log = logging.getLogger(__name__)


class ConfFile:
    """The scheduler configuration: the file's when it parses, else the last good one (the
    built-in default until the file first parses)."""

    def __init__(self, path: str | None, known_actions: Iterable[str]) -> None:
        self.path = Path(path) if path else None
        self.known_actions = frozenset(known_actions)
        self.conf: SchedulerConf = default_conf(self.known_actions)
        self.source = "built-in default conf"
        self._digest: bytes | None = None
        self.reloads = 0
        self.failures = 0
        # Read at start, as Volcano does: the first cycle already runs with the file's.
        self.current()

    def current(self) -> SchedulerConf:
        """The configuration to use for the next cycle (reloading it if the file changed)."""
        if self.path is None:
            return self.conf
        try:
            content = self.path.read_bytes()
        except OSError as error:
            self._fail(
                b"unreadable:" + str(error).encode(),
                f"{self.path}: cannot read: {error.strerror or error}",
            )
            return self.conf
        digest = hashlib.sha256(content).digest()
        if digest == self._digest:
            return self.conf
        try:
            conf = parse_conf(content.decode("utf-8"), self.known_actions, source=str(self.path))
        except (ConfError, UnicodeDecodeError) as error:
            self._fail(digest, f"{error}")
            return self.conf
        first = self.reloads == 0
        self._digest = digest
        self.conf, self.source = conf, str(self.path)
        self.reloads += 1
        log.info(
            "%s scheduler configuration %s: actions %s",
            "loaded" if first else "reloaded",
            self.path,
            ", ".join(conf.actions),
        )
        return self.conf

    def _fail(self, digest: bytes, message: str) -> None:
        if digest == self._digest:
            return
        self._digest = digest
        self.failures += 1
        CONFIG_RELOAD_FAILURES.inc()
        log.error(
            "scheduler configuration not loaded, keeping the %s: %s",
            "last good one" if self.reloads else "built-in default",
            message,
        )
