"""Unknown and wrongly typed fields, named as the API server's strict field validation names
them (``kubectl apply``'s default, ``fieldValidation=Strict``):

    strict decoding error: unknown field "spec.tasks[0].templat"

Volcano's kinds are checked against the structural schema of our CRDs (the same properties as
upstream's; see tests/models), Kubernetes' own kinds, and the core types Volcano's CRDs embed
(object metadata, a task's pod template, a volume's PVC spec), against ``core_fields.json``:
the field names and types of the ``kubernetes`` client's models, written by
``scripts/core_fields.py``. The API server decodes with the same field sets, so a field it
would refuse is refused here, and a field it accepts is never refused.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

from volcano_py.api.quantity import QuantityError, parse_quantity
from volcano_py.models.crd_schema import CORE_TYPE_KEY, structural_schema
from volcano_py.models.resource import CustomResource

Path = tuple[str | int, ...]
# The API server lists every unknown field; a file with a whole block mis-indented would make
# that a wall of text. The first ones say enough to find the block.
MAX_SHOWN: Final = 10
_INT64: Final = 2**63


def api_path(path: Path) -> str:
    """``spec.tasks[0].template``, as the API server spells a field's path: keys joined by
    dots whatever they hold (``spec.guarantee.deviceclass/gpu.nvidia.com``), indices in
    brackets."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


@dataclass(frozen=True, slots=True)
class FieldProblem:
    path: str
    message: str
    unknown: bool = False


@functools.cache
def _core() -> Mapping[str, Any]:
    text = resources.files("volcano_py.models").joinpath("core_fields.json").read_text("utf-8")
    data: Mapping[str, Any] = json.loads(text)
    return data


def core_type_of(api_version: str, kind: str) -> str | None:
    """The core type name (``V1Pod``) of a Kubernetes kind, or None when not one we know."""
    kinds: Mapping[str, str] = _core()["kinds"]
    return kinds.get(f"{api_version}/{kind}")


def _shown(value: object) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


_EXPECTED: Final = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean (true or false)",
    "datetime": "an RFC 3339 time",
    "quantity": "a quantity (a number or a string like 500m, 2Gi)",
}


class _Walk:
    def __init__(self) -> None:
        self.problems: list[FieldProblem] = []
        self.types: Mapping[str, Mapping[str, str]] = _core()["types"]

    def wrong(self, path: Path, expected: str, value: object) -> None:
        self.problems.append(
            FieldProblem(api_path(path), f"expected {expected}, got {_shown(value)}")
        )

    def unknown(self, path: Path) -> None:
        self.problems.append(FieldProblem(api_path(path), "unknown field", unknown=True))

    # ------------------------------------------------------------------ core types

    def core(self, value: object, spelled: str, path: Path) -> None:
        if value is None or spelled == "object":
            return
        if spelled.startswith("list["):
            if not isinstance(value, list):
                self.wrong(path, "a list", value)
                return
            inner = spelled[5:-1]
            for index, item in enumerate(value):
                self.core(item, inner, (*path, index))
        elif spelled.startswith("map["):
            if not isinstance(value, Mapping):
                self.wrong(path, "a map", value)
                return
            inner = spelled[4:-1]
            for key, item in value.items():
                self.core(item, inner, (*path, str(key)))
        elif spelled in _EXPECTED:
            self.scalar(value, spelled, path)
        else:
            if not isinstance(value, Mapping):
                self.wrong(path, f"an object ({spelled.removeprefix('V1')})", value)
                return
            fields = self.types[spelled]
            for key, item in value.items():
                field_type = fields.get(key) if isinstance(key, str) else None
                if field_type is None:
                    self.unknown((*path, str(key)))
                else:
                    self.core(item, field_type, (*path, key))

    def scalar(self, value: object, spelled: str, path: Path) -> None:
        # As sigs.k8s.io/yaml hands YAML to the JSON decoder: an unquoted timestamp is text.
        if spelled in ("str", "datetime"):
            ok = isinstance(value, str | dt.date)
        elif spelled == "int":
            ok = isinstance(value, int) and not isinstance(value, bool)
            if ok and not -_INT64 <= value < _INT64:  # type: ignore[operator]
                self.problems.append(
                    FieldProblem(api_path(path), f"{value} does not fit in an int64")
                )
                return
        elif spelled == "float":
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        elif spelled == "bool":
            ok = isinstance(value, bool)
        else:  # quantity
            ok = isinstance(value, int | float | str) and not isinstance(value, bool)
            if ok:
                try:
                    parse_quantity(value)  # type: ignore[arg-type]
                except QuantityError as error:
                    self.problems.append(FieldProblem(api_path(path), str(error)))
                    return
        if not ok:
            self.wrong(path, _EXPECTED[spelled], value)

    # ------------------------------------------------------------------ CRD schemas

    def schema(self, value: object, node: Mapping[str, Any], path: Path) -> None:
        """Unknown fields only: pydantic (strict) checks the types of Volcano's kinds."""
        if value is None:
            return
        core_type = node.get(CORE_TYPE_KEY)
        if core_type is not None:
            self.core(value, core_type, path)
            return
        if isinstance(value, Mapping):
            properties = node.get("properties")
            extra = node.get("additionalProperties")
            if properties is not None:
                for key, item in value.items():
                    child = properties.get(key) if isinstance(key, str) else None
                    if child is None:
                        self.unknown((*path, str(key)))
                    else:
                        self.schema(item, child, (*path, key))
            elif isinstance(extra, Mapping):
                for key, item in value.items():
                    self.schema(item, extra, (*path, str(key)))
        elif isinstance(value, list) and isinstance(node.get("items"), Mapping):
            for index, item in enumerate(value):
                self.schema(item, node["items"], (*path, index))


@functools.cache
def _crd_schema(model: type[CustomResource]) -> Mapping[str, Any]:
    schema = structural_schema(model, core_types=True)
    properties = dict(schema["properties"])
    properties["apiVersion"] = {"type": "string"}
    properties["kind"] = {"type": "string"}
    properties["metadata"] = {"type": "object", CORE_TYPE_KEY: "V1ObjectMeta"}
    return {**schema, "properties": properties}


# ---------------------------------------------------------------------- the fast path
# A dump holds tens of thousands of pods, nearly always valid: each type compiles once into a
# checker that only answers "all fine?" (no paths built); the walk above, which names what is
# wrong, runs only on an object the checker doubts.

Checker = Callable[[object], bool]
_CHECKERS: dict[str, Checker] = {}


def _scalar_checker(spelled: str) -> Checker:
    if spelled in ("str", "datetime"):
        return lambda v: v is None or type(v) is str or isinstance(v, dt.date)
    if spelled == "int":
        return lambda v: v is None or (type(v) is int and -_INT64 <= v < _INT64)
    if spelled == "float":
        return lambda v: v is None or type(v) in (int, float)
    if spelled == "bool":
        return lambda v: v is None or type(v) is bool
    # A quantity: parsed by the walk (cached per distinct text), so doubt everything unusual.
    return lambda v: v is None or (type(v) is str and _quantity_ok(v)) or type(v) is int


def _quantity_ok(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def _checker(spelled: str) -> Checker:
    found = _CHECKERS.get(spelled)
    if found is not None:
        return found
    if spelled == "object":
        checker: Checker = _anything
    elif spelled.startswith(("list[", "map[")):
        checker = _collection_checker(spelled)
    elif spelled in _EXPECTED:
        checker = _scalar_checker(spelled)
    else:
        checker = _struct_checker(_core()["types"][spelled])
    _CHECKERS[spelled] = checker
    return checker


def _anything(value: object) -> bool:
    return True


# Fields and items of text (``str`` and ``datetime``): checked inline by the struct and
# collection checkers, without a call each (most of a pod's leaves; 60k pods in a dump).
_TEXT_TYPES: Final = frozenset({"str", "datetime"})
_UNRESOLVED: Any = object()
# The inline text checks (False: every leaf through its own checker, as before: the tests'
# reference).
_INLINE_TEXT = True


def _text_ok(value: object) -> bool:
    """The text checker's verdict (``_scalar_checker("str")``), for the inline checks."""
    return type(value) is str or value is None or isinstance(value, dt.date)


def _collection_checker(spelled: str) -> Checker:
    is_list = spelled.startswith("list[")
    inner = spelled[5:-1] if is_list else spelled[4:-1]
    inline_text = _INLINE_TEXT and inner in _TEXT_TYPES
    resolved: list[Checker] = []  # the inner checker, once (types may refer to themselves)

    def checker(value: object) -> bool:
        if value is None:
            return True
        if is_list:
            if type(value) is not list:
                return False
            items: Any = value
        else:
            if type(value) is not dict:
                return False
            items = value.values()
        # Loops, not ``all(...)``: a generator per collection costs more than its checks.
        if inline_text:
            for item in items:  # noqa: SIM110
                if type(item) is not str and not _text_ok(item):
                    return False
            return True
        if not resolved:
            resolved.append(_checker(inner))
        check = resolved[0]
        for item in items:  # noqa: SIM110
            if not check(item):
                return False
        return True

    return checker


def _struct_checker(fields: Mapping[str, str]) -> Checker:
    # A field's checker, or None for a text field (checked inline).
    resolved: dict[str, Checker | None] = {}

    def checker(value: object) -> bool:
        if type(value) is not dict:
            return value is None
        for key, item in value.items():
            check = resolved.get(key, _UNRESOLVED)
            if check is _UNRESOLVED:
                field_type = fields.get(key)
                if field_type is None:
                    return False
                check = resolved[key] = (
                    None if _INLINE_TEXT and field_type in _TEXT_TYPES else _checker(field_type)
                )
            if check is None:
                if type(item) is not str and not _text_ok(item):
                    return False
            elif not check(item):
                return False
        return True

    return checker


def core_problems(obj: Mapping[str, Any], type_name: str) -> list[FieldProblem]:
    """Unknown and wrongly typed fields of a Kubernetes object of type ``type_name``."""
    if _checker(type_name)(obj):
        return []
    walk = _Walk()
    walk.core(obj, type_name, ())
    return walk.problems


def _schema_checker(node: Mapping[str, Any]) -> Checker:
    """The fast path of ``_Walk.schema``: True when nothing in the value is unknown."""
    core_type = node.get(CORE_TYPE_KEY)
    if core_type is not None:
        return _checker(core_type)
    properties = node.get("properties")
    extra = node.get("additionalProperties")
    items = node.get("items")
    if properties is not None:
        children = {key: _schema_checker(child) for key, child in properties.items()}

        def check_object(value: object) -> bool:
            if type(value) is not dict:
                return True  # a wrong type: pydantic names it
            for key, item in value.items():
                check = children.get(key)
                if check is None or not check(item):
                    return False
            return True

        return check_object
    if isinstance(extra, Mapping):
        check_value = _schema_checker(extra)
        return lambda value: (
            type(value) is not dict or all(check_value(item) for item in value.values())
        )
    if isinstance(items, Mapping):
        check_item = _schema_checker(items)
        return lambda value: type(value) is not list or all(check_item(i) for i in value)
    return _anything


@functools.cache
def _custom_checker(model: type[CustomResource]) -> Checker:
    return _schema_checker(_crd_schema(model))


def custom_problems(obj: Mapping[str, Any], model: type[CustomResource]) -> list[FieldProblem]:
    """Unknown fields of a Volcano object (anywhere, metadata and pod templates included), and
    wrongly typed fields of the core types it embeds."""
    if _custom_checker(model)(obj):
        return []
    walk = _Walk()
    walk.schema(obj, _crd_schema(model), ())
    return walk.problems


def strict_message(problems: list[FieldProblem]) -> str:
    """One line, as the API server words it: type errors first (its JSON decoder stops at the
    first), else ``strict decoding error: unknown field "a", unknown field "b"``."""
    wrong = [p for p in problems if not p.unknown]
    if wrong:
        return f"{wrong[0].path}: {wrong[0].message}"
    shown = ", ".join(f'unknown field "{p.path}"' for p in problems[:MAX_SHOWN])
    more = len(problems) - MAX_SHOWN
    return f"strict decoding error: {shown}" + (f" (and {more} more)" if more > 0 else "")
