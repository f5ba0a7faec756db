"""One registry per process, counters named as client_golang names them, and the text
exposition Volcano's binaries serve.

Each process serves only its own families, as Volcano's do: the scheduler's
(``pkg/scheduler/metrics``), the controllers' (``pkg/controllers/metrics`` and the job and
jobflow state machines), the webhooks' (none of Volcano's own). Families every process has
(requests to the API server) are registered in all three with ``register_everywhere``.

Naming: client_golang serves a counter under the name it was given, ``_total`` or not
(``volcano_schedule_attempts_total`` but ``volcano_job_retry_counts``); prometheus_client
always appends ``_total``. Counters whose Volcano name ends in ``_total`` are plain
``Counter``s named without the suffix; the others are ``BareCounter``s. ``render`` writes the
text format with Go's number formatting (``le="1"``, not ``le="1.0"``) and without the
``_created`` series Go never serves.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Final

from prometheus_client import CollectorRegistry, disable_created_metrics
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

# Go serves no ``<name>_created`` series; neither do we (must run before any metric exists).
disable_created_metrics()  # type: ignore[no-untyped-call]

NAMESPACE: Final = "volcano"

SCHEDULER_REGISTRY: Final = CollectorRegistry(auto_describe=True)
CONTROLLERS_REGISTRY: Final = CollectorRegistry(auto_describe=True)
WEBHOOKS_REGISTRY: Final = CollectorRegistry(auto_describe=True)
# The scheduler's, under the name the scheduler's modules and tests have always used.
REGISTRY: Final = SCHEDULER_REGISTRY
ALL_REGISTRIES: Final = (SCHEDULER_REGISTRY, CONTROLLERS_REGISTRY, WEBHOOKS_REGISTRY)


def register_everywhere(collector: Collector) -> None:
    """A family every process serves (e.g. the API client's request counter)."""
    for registry in ALL_REGISTRIES:
        registry.register(collector)


class _BareCounterFamily(Metric):
    """A counter family whose samples carry the family's own name (no ``_total``)."""


class BareCounter(Collector):
    """A counter served as ``<name>``, as client_golang serves a counter whose name has no
    ``_total`` suffix (``volcano_job_retry_counts``, ``volcano_total_preemption_attempts``)."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Iterable[str] = (),
        *,
        registry: CollectorRegistry,
    ) -> None:
        self.name = f"{NAMESPACE}_{name}"
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self._values: dict[tuple[str, ...], float] = {}
        self._lock = threading.Lock()
        registry.register(self)

    def _key(self, labelvalues: tuple[str, ...]) -> tuple[str, ...]:
        if len(labelvalues) != len(self.labelnames):
            raise ValueError(f"{self.name}: expected labels {self.labelnames}, got {labelvalues}")
        return tuple(str(value) for value in labelvalues)

    def inc(self, *labelvalues: str, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError(f"{self.name}: a counter only goes up (amount {amount})")
        key = self._key(labelvalues)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def remove(self, *labelvalues: str) -> None:
        """Drop one series (client_golang's ``DeleteLabelValues``); absent is fine."""
        with self._lock:
            self._values.pop(self._key(labelvalues), None)

    def value(self, *labelvalues: str) -> float:
        with self._lock:
            return self._values.get(self._key(labelvalues), 0.0)

    def describe(self) -> Iterator[Metric]:
        yield _BareCounterFamily(self.name, self.documentation, "counter")

    def collect(self) -> Iterator[Metric]:
        family = _BareCounterFamily(self.name, self.documentation, "counter")
        with self._lock:
            items = list(self._values.items())
        for key, value in items:
            family.add_sample(self.name, dict(zip(self.labelnames, key, strict=True)), value)
        yield family


def exposed_name(family: Metric) -> str:
    """The name a family is served under (its ``# TYPE`` line)."""
    if family.type == "counter" and not isinstance(family, _BareCounterFamily):
        return family.name + "_total"
    return family.name


def go_float(value: float) -> str:
    """``strconv.FormatFloat(value, 'g', -1, 64)`` as expfmt writes values and ``le``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    # repr is the shortest string that reads back as the same float, as Go's -1 precision.
    digits_tuple = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(str(d) for d in digits_tuple.digits)
    point = len(digits) + int(digits_tuple.exponent)  # the decimal point's position
    exponent = point - 1
    if exponent < -4 or exponent >= 6:  # %e, as Go's 'g' with the shortest precision
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _sample_line(name: str, labels: dict[str, str], value: float) -> str:
    if labels:
        # client_golang sorts a series' labels by name and writes a bucket's ``le`` last.
        pairs = [f'{key}="{_escape_label(labels[key])}"' for key in sorted(labels) if key != "le"]
        if "le" in labels:
            pairs.append(f'le="{go_float(float(labels["le"]))}"')
        return f"{name}{{{','.join(pairs)}}} {go_float(value)}\n"
    return f"{name} {go_float(value)}\n"


def render(registry: CollectorRegistry) -> bytes:
    """The Prometheus text format (0.0.4) of every family in ``registry``."""
    out: list[str] = []
    for family in registry.collect():
        name = exposed_name(family)
        kind = "untyped" if family.type == "unknown" else family.type
        documentation = family.documentation.replace("\\", "\\\\").replace("\n", "\\n")
        out.append(f"# HELP {name} {documentation}\n# TYPE {name} {kind}\n")
        for sample in family.samples:
            if sample.name == family.name + "_created":
                continue
            out.append(_sample_line(sample.name, dict(sample.labels), sample.value))
    return "".join(out).encode()
