"""``--admission-conf``: the resource groups of the pods mutate webhook, re-read when the file
changes (upstream watches the ConfigMap's directory with fsnotify; a ``stat`` per pod admission
is as quick and follows the kubelet's ``..data`` symlink swap).

A file that cannot be read or parsed at start stops the server with the reason; on a later
change the last good configuration is kept and the reason logged once.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from volcano_py.controllers.pod_admission import (
    AdmissionConf,
    AdmissionConfError,
    ResourceGroup,
    parse_admission_conf,
)

log = logging.getLogger(__name__)

_Stamp = tuple[int, int, int]


class AdmissionConfFile:
    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._stamp: _Stamp | None = None
        self._failed: _Stamp | None = None
        self.conf = self._load()  # raises AdmissionConfError: refuse to start

    def _stat(self) -> _Stamp:
        info = os.stat(self.path)
        return info.st_mtime_ns, info.st_size, info.st_ino

    def _load(self) -> AdmissionConf:
        try:
            stamp = self._stat()
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise AdmissionConfError(
                f"--admission-conf {self.path}: cannot read: {error}"
            ) from None
        conf = parse_admission_conf(text, source=f"--admission-conf {self.path}")
        for warning in conf.warnings:
            log.warning("%s", warning)
        self._stamp = stamp
        log.info("admission configuration %s: %d resource groups", self.path, len(conf.groups))
        return conf

    def groups(self) -> tuple[ResourceGroup, ...]:
        """The resource groups now, reloading the file first when it changed."""
        with self._lock:
            try:
                stamp = self._stat()
            except OSError:
                stamp = None
            if stamp is not None and stamp != self._stamp and stamp != self._failed:
                try:
                    self.conf = self._load()
                    self._failed = None
                except AdmissionConfError as error:
                    self._failed = stamp
                    log.error("admission configuration not reloaded, keeping the last: %s", error)
            return self.conf.groups
