"""``--scheduler-conf``, re-read before every cycle.

Volcano watches the ConfigMap's directory with fsnotify; hashing the file once a cycle is as
quick (one small read a second), needs no dependency and survives the kubelet's ``..data``
symlink swap. A file that cannot be read or parsed keeps the last good configuration, logs one
line saying why, and counts ``volcano_scheduler_config_reload_failures_total``; the same broken
content is not reported again every cycle.

The file is checked against the plugin registry (``conf_check.load_conf``): an unknown action
or plugin name at start raises ``UnknownNameError`` (the scheduler refuses to start rather
than run without, say, gang scheduling), and plugin arguments Volcano exits on raise
``RefusedArgumentsError``; on a reload either is a failure like any other. A loaded
file's warnings (unknown keys and arguments) are logged once per load.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from volcano_py.framework.conf import (
    ConfError,
    RefusedArgumentsError,
    SchedulerConf,
    UnknownNameError,
)
from volcano_py.framework.conf_check import ConfVocabulary, load_conf, load_default_conf
from volcano_py.metrics import CONFIG_RELOAD_FAILURES

log = logging.getLogger(__name__)


class ConfFile:
    """The scheduler configuration: the file's when it parses, else the last good one (the
    built-in default until the file first parses)."""

    def __init__(self, path: str | None, vocabulary: ConfVocabulary) -> None:
        self.path = Path(path) if path else None
        self.vocabulary = vocabulary
        self.conf: SchedulerConf = load_default_conf(vocabulary)
        self.source = "built-in default conf"
        self._digest: bytes | None = None
        self.reloads = 0
        self.failures = 0
        self._starting = True
        # Read at start, as Volcano does: the first cycle already runs with the file's.
        self.current()
        self._starting = False

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
            conf = load_conf(content.decode("utf-8"), self.vocabulary, source=str(self.path))
        except (ConfError, UnicodeDecodeError) as error:
            if self._starting and isinstance(error, UnknownNameError | RefusedArgumentsError):
                raise
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
