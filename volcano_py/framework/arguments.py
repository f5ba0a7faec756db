"""Plugin and action arguments, read with Volcano's type rules (``framework/arguments.go``).

A value of the wrong type is reported and the default kept, as upstream does: a typo in one
argument must not stop the scheduler. The session hands ``report`` (the conf's
``ConfDiagnostics.warn``) so a bad value is named once per conf load, not at every session;
without it each read logs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from volcano_py.api.task import parse_go_bool

log = logging.getLogger(__name__)


class Arguments(dict[str, Any]):
    def __init__(
        self,
        values: Mapping[str, Any] | None = None,
        owner: str = "",
        report: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(values or {})
        self.owner = owner
        self.report = report

    def warn(self, message: str) -> None:
        """A problem with these arguments, named with their owner (once per conf load when
        the session gave a ``report``)."""
        text = f"{self.owner}: {message}" if self.owner else message
        if self.report is not None:
            self.report(text)
        else:
            log.warning("%s", text)

    def _warn(self, key: str, value: Any, kind: str) -> None:
        self.warn(f"could not parse argument {value!r} for key {key} to {kind}; default kept")

    def get_int(self, key: str, default: int) -> int:
        """Only a YAML integer counts (``GetInt``)."""
        if key not in self:
            return default
        value = self[key]
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        self._warn(key, value, "int")
        return default

    def get_float(self, key: str, default: float) -> float:
        """A YAML float or integer (``GetFloat64``)."""
        if key not in self:
            return default
        value = self[key]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        self._warn(key, value, "float64")
        return default

    def get_bool(self, key: str, default: bool) -> bool:
        """A YAML bool or a string Go's ParseBool accepts (``GetBool``)."""
        if key not in self:
            return default
        value = self[key]
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            parsed = parse_go_bool(value)
            if parsed is not None:
                return parsed
        self._warn(key, value, "bool")
        return default

    def get_str(self, key: str, default: str) -> str:
        if key not in self:
            return default
        value = self[key]
        if isinstance(value, str):
            return value
        self._warn(key, value, "string")
        return default
