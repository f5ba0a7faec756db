"""Reading the simulator's input: YAML or JSON files, one or many documents, ``kind: List``
(what ``kubectl get -o yaml`` prints), or ``-`` for standard input."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

NAMESPACED_KINDS: Final = frozenset(
    {
        "Pod",
        "PodGroup",
        "Job",
        "Command",
        "PodDisruptionBudget",
        "ResourceQuota",
        "ConfigMap",
        "Secret",
        "Service",
        "NetworkPolicy",
    }
)


class SimInputError(ValueError):
    """Input the simulator cannot use. The message names the file, the document's position,
    the object and the field; the command prints it and exits with status 2."""


@dataclass(frozen=True, slots=True)
class Document:
    obj: dict[str, Any]
    source: str
    position: int  # 1-based document number in its file
    item: int | None = None  # 1-based index inside a List document

    @property
    def where(self) -> str:
        inside = f", item {self.item}" if self.item is not None else ""
        return f"{self.source}: document {self.position}{inside}"

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def label(self) -> str:
        """``Kind namespace/name`` (or ``Kind name`` for cluster-scoped objects)."""
        meta = self.obj.get("metadata") or {}
        name = meta.get("name", "<unnamed>") if isinstance(meta, Mapping) else "<unnamed>"
        namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
        if not namespace and self.kind in NAMESPACED_KINDS:
            namespace = "default"
        return f"{self.kind} {namespace}/{name}" if namespace else f"{self.kind} {name}"

    def error(self, field: str, problem: str) -> SimInputError:
        where = f"{field}: " if field else ""
        return SimInputError(f"{self.where}: {self.label}: {where}{problem}")


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        return "<stdin>", sys.stdin.read()
    try:
        return path, Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise SimInputError(f"{path}: cannot read: {error.strerror or error}") from error


def _documents(source: str, text: str) -> Iterator[tuple[int, Any]]:
    try:
        yield from enumerate(yaml.safe_load_all(text), start=1)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise SimInputError(f"{source}{at}: not valid YAML or JSON: {problem}") from error


def load_documents(paths: Sequence[str]) -> list[Document]:
    """Every object of every file, in order; ``List`` documents are unpacked."""
    loaded: list[Document] = []
    for path in paths:
        source, text = _read(path)
        for position, document in _documents(source, text):
            if document is None:
                continue
            if not isinstance(document, dict):
                raise SimInputError(
                    f"{source}: document {position}: expected a Kubernetes object (a mapping),"
                    f" got {type(document).__name__}"
                )
            if document.get("kind") == "List" or (
                str(document.get("kind", "")).endswith("List") and "items" in document
            ):
                items = document.get("items") or []
                if not isinstance(items, list):
                    raise SimInputError(f"{source}: document {position}: items: expected a list")
                for index, item in enumerate(items, start=1):
                    if not isinstance(item, dict):
                        raise SimInputError(
                            f"{source}: document {position}, item {index}: expected an object"
                        )
                    loaded.append(Document(item, source, position, index))
                continue
            loaded.append(Document(document, source, position))
    for document in loaded:
        if not document.obj.get("kind"):
            raise document.error("kind", "missing")
        metadata = document.obj.get("metadata")
        if not isinstance(metadata, Mapping) or not metadata.get("name"):
            raise document.error("metadata.name", "missing")
    return loaded
