"""The CEL selectors of DRA (DeviceClass ``spec.selectors`` and a request's ``selectors``), as
kube-scheduler evaluates them (``k8s.io/dynamic-resource-allocation/cel``).

The language itself is `cel-python` (PyPI ``cel-python``, the Cloud Custodian project's pure
Python CEL): a maintained implementation of the whole grammar and standard library, where our
own parser would cover only the expressions we happened to test. What Kubernetes adds on top is
small and ported here: the ``device`` variable (``driver``, ``attributes[domain].name``,
``capacity[domain].name``, ``allowMultipleAllocations``), the ``quantity()`` library
(``compareTo``, ``isLessThan``, ``isGreaterThan``, ``add``, ``sub``, ``asInteger``,
``asApproximateFloat``, ``isInteger``, ``sign``) and the ``semver()`` library
(``compareTo``, ``isLessThan``, ``isGreaterThan``, ``major``, ``minor``, ``patch``).

An expression is compiled once per text; a device's answer is memoised per (expression,
device), since neither changes while the device's ResourceSlice stays the same.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from volcano_py.api.quantity import QuantityError, parse_quantity

log = logging.getLogger(__name__)


class SelectorError(ValueError):
    """A selector that does not compile, or fails (or is not a boolean) on a device."""


@dataclass(frozen=True, slots=True, order=True)
class QuantityValue:
    """A ``resource.Quantity`` in CEL: exact (a fraction), compared by value."""

    value: Fraction

    def __str__(self) -> str:
        return str(self.value)


_SEMVER: Final = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


@dataclass(frozen=True, slots=True)
class SemverValue:
    """A semantic version (a ``version`` attribute, or ``semver("1.2.3")``)."""

    major: int
    minor: int
    patch: int
    pre: str = ""

    @classmethod
    def parse(cls, text: str) -> SemverValue:
        match = _SEMVER.match(text)
        if match is None:
            raise SelectorError(f"invalid semver {text!r}")
        return cls(int(match[1]), int(match[2]), int(match[3]), match[4] or "")

    def key(self) -> tuple[int, int, int, int, str]:
        # A pre-release sorts before its release (semver 2.0.0, precedence rule 11).
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, self.pre)


def _compare(left: object, right: object) -> int:
    if isinstance(left, QuantityValue) and isinstance(right, QuantityValue):
        return (left.value > right.value) - (left.value < right.value)
    if isinstance(left, SemverValue) and isinstance(right, SemverValue):
        return (left.key() > right.key()) - (left.key() < right.key())
    raise SelectorError(f"cannot compare {type(left).__name__} with {type(right).__name__}")


def _functions() -> dict[str, Callable[..., Any]]:
    from celpy import celtypes

    def quantity(text: object) -> QuantityValue:
        try:
            return QuantityValue(exact_quantity(str(text)))
        except QuantityError as error:
            raise SelectorError(str(error)) from None

    def as_quantity(value: object) -> QuantityValue:
        if not isinstance(value, QuantityValue):
            raise SelectorError(f"expected a quantity, got {type(value).__name__}")
        return value

    return {
        "quantity": quantity,
        "semver": lambda text: SemverValue.parse(str(text)),
        "isQuantity": lambda text: celtypes.BoolType(_is_quantity(str(text))),
        "isSemver": lambda text: celtypes.BoolType(_SEMVER.match(str(text)) is not None),
        "compareTo": lambda left, right: celtypes.IntType(_compare(left, right)),
        "isLessThan": lambda left, right: celtypes.BoolType(_compare(left, right) < 0),
        "isGreaterThan": lambda left, right: celtypes.BoolType(_compare(left, right) > 0),
        "add": lambda left, right: QuantityValue(
            as_quantity(left).value
            + (as_quantity(right).value if isinstance(right, QuantityValue) else Fraction(right))
        ),
        "sub": lambda left, right: QuantityValue(
            as_quantity(left).value
            - (as_quantity(right).value if isinstance(right, QuantityValue) else Fraction(right))
        ),
        "asInteger": lambda value: celtypes.IntType(int(as_quantity(value).value)),
        "asApproximateFloat": lambda value: celtypes.DoubleType(float(as_quantity(value).value)),
        "isInteger": lambda value: celtypes.BoolType(as_quantity(value).value.denominator == 1),
        "sign": lambda value: celtypes.IntType(
            (as_quantity(value).value > 0) - (as_quantity(value).value < 0)
        ),
        "major": lambda value: celtypes.IntType(value.major),
        "minor": lambda value: celtypes.IntType(value.minor),
        "patch": lambda value: celtypes.IntType(value.patch),
    }


def exact_quantity(value: str | int | float) -> Fraction:
    """A quantity's exact value (``10Gi``, ``500m``); QuantityError when it is none."""
    return Fraction(parse_quantity(value))


def _is_quantity(text: str) -> bool:
    try:
        exact_quantity(text)
    except QuantityError:
        return False
    return True


@functools.cache
def _environment() -> Any:
    import sys

    import celpy

    # cel-python sets the recursion limit to 2500 (what CEL's nesting minimums need); never
    # lower a higher one the process chose.
    before = sys.getrecursionlimit()
    environment = celpy.Environment()
    sys.setrecursionlimit(max(before, sys.getrecursionlimit()))
    return environment


@functools.lru_cache(maxsize=4096)
def compile_selector(expression: str) -> Any:
    """The runnable program of a selector; SelectorError when it does not compile."""
    import celpy

    try:
        ast = _environment().compile(expression)
    except celpy.celparser.CELParseError as error:
        where = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
        raise SelectorError(f"CEL compile error: {where or 'syntax error'}") from None
    return _environment().program(ast, functions=_functions())


def selector_problem(expression: str) -> str | None:
    """Why a selector does not compile, or None (the API server's check on create)."""
    try:
        compile_selector(expression)
    except SelectorError as error:
        return str(error)
    return None


def _cel_value(value: object) -> Any:
    from celpy import celtypes

    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    return value  # QuantityValue, SemverValue


def device_activation(
    driver: str,
    attributes: Mapping[str, Mapping[str, object]],
    capacity: Mapping[str, Mapping[str, Fraction]],
    allow_multiple_allocations: bool,
) -> dict[str, Any]:
    """The ``device`` variable of a selector: attributes and capacities by domain, then by
    name (an unqualified name belongs to the driver's domain)."""
    from celpy import celtypes

    def by_domain(values: Mapping[str, Mapping[str, Any]], convert: Callable[[Any], Any]) -> Any:
        return celtypes.MapType(
            {
                celtypes.StringType(domain): celtypes.MapType(
                    {celtypes.StringType(name): convert(v) for name, v in names.items()}
                )
                for domain, names in values.items()
            }
        )

    domains = _domain_map_type()
    return {
        "device": celtypes.MapType(
            {
                celtypes.StringType("driver"): celtypes.StringType(driver),
                celtypes.StringType("attributes"): domains(by_domain(attributes, _cel_value)),
                celtypes.StringType("capacity"): domains(by_domain(capacity, QuantityValue)),
                celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(
                    allow_multiple_allocations
                ),
            }
        )
    }


@functools.cache
def _domain_map_type() -> type:
    from celpy import celtypes

    class DomainMap(celtypes.MapType):
        """A domain the device has nothing in is an empty map, not an error (Kubernetes'
        ``device.attributes["other.domain"]``): ``has(...)`` and ``in`` then say false."""

        def __getitem__(self, key: Any) -> Any:
            if key in self.keys():
                return super().__getitem__(key)
            return celtypes.MapType({})

    return DomainMap


def evaluate(expression: str, activation: Mapping[str, Any]) -> bool:
    """Whether a device (its ``device_activation``) satisfies ``expression``."""
    program = compile_selector(expression)
    try:
        result = program.evaluate(dict(activation))
    except Exception as error:
        raise SelectorError(f"CEL runtime error: {_first_line(error)}") from None
    if isinstance(result, Exception):
        raise SelectorError(f"CEL runtime error: {_first_line(result)}")
    from celpy import celtypes

    if not isinstance(result, bool | celtypes.BoolType):
        raise SelectorError(f"CEL result is {type(result).__name__}, not a boolean")
    return bool(result)


def _first_line(error: BaseException) -> str:
    args = getattr(error, "args", ())
    text = str(args[0]) if args else str(error)
    return text.splitlines()[0] if text else type(error).__name__
