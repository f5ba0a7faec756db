"""Reading the simulator's input: YAML or JSON files, one or many documents, ``kind: List``
(what ``kubectl get -o yaml`` prints), or ``-`` for standard input.

JSON (a ``.json`` file, or text that starts with ``{`` or ``[``) is read by the stdlib JSON
parser, YAML by libyaml (``yaml.CSafeLoader``): PyYAML's pure-Python parser takes minutes over
a dump of a few thousand nodes. Without libyaml we fall back to the pure-Python parser, saying
so once.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from volcano_py.sim.cluster import NAMESPACED


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
        if not namespace and self.kind in NAMESPACED:
            namespace = "default"
        return f"{self.kind} {namespace}/{name}" if namespace else f"{self.kind} {name}"

    def error(self, field: str, problem: str) -> SimInputError:
        where = f"{field}: " if field else ""
        return SimInputError(f"{self.where}: {self.label}: {where}{problem}")


# Limits past which an input describes no cluster that runs, and reading it would take the
# machine's memory before anything is simulated. A dump of 5,000 nodes and 60,000 pods is about
# 65,000 objects and 200 MB of YAML; Kubernetes supports at most 150,000 pods and 5,000 nodes
# (kubernetes.io/docs/setup/best-practices/cluster-large).
MAX_INPUT_BYTES: Final = 2 * 1024**3
MAX_OBJECTS: Final = 500_000


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        text = sys.stdin.read(MAX_INPUT_BYTES + 1)
        if len(text) > MAX_INPUT_BYTES:
            raise SimInputError(f"<stdin>: more than {MAX_INPUT_BYTES} bytes; simulate refuses it")
        return "<stdin>", text
    try:
        size = Path(path).stat().st_size
        if size > MAX_INPUT_BYTES:
            raise SimInputError(
                f"{path}: {size} bytes, more than {MAX_INPUT_BYTES}; simulate refuses it"
                " (split the dump, or leave out what the scheduler does not read)"
            )
        return path, Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise SimInputError(f"{path}: cannot read: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        raise SimInputError(f"{path}: not UTF-8 text: {error.reason}") from error


def _yaml_loader() -> type[yaml.SafeLoader] | type[yaml.CSafeLoader]:
    global _warned_no_libyaml
    if yaml.__with_libyaml__:
        return yaml.CSafeLoader
    if not _warned_no_libyaml:
        _warned_no_libyaml = True
        print(
            "warning: PyYAML was built without libyaml: reading YAML input is slow"
            " (install PyYAML with libyaml, or give the input as JSON)",
            file=sys.stderr,
        )
    return yaml.SafeLoader


_warned_no_libyaml = False


def _looks_like_json(source: str, text: str) -> bool:
    return source.endswith(".json") or text.lstrip()[:1] in ("{", "[")


def _json_documents(text: str) -> list[Any]:
    """Every JSON value of ``text``: one, or several one after another (as ``kubectl get -w
    -o json`` prints them)."""
    decoder = json.JSONDecoder()
    documents: list[Any] = []
    index, end = 0, len(text)
    while True:
        while index < end and text[index] in " \t\r\n":
            index += 1
        if index == end:
            return documents
        document, index = decoder.raw_decode(text, index)
        documents.append(document)


def _documents(source: str, text: str) -> Iterator[tuple[int, Any]]:
    if _looks_like_json(source, text):
        try:
            documents = _json_documents(text)
        except json.JSONDecodeError as error:
            if source.endswith(".json"):
                raise SimInputError(
                    f"{source} (line {error.lineno}, column {error.colno}): not valid JSON:"
                    f" {error.msg}"
                ) from None
            # YAML written in flow style (``{kind: Node, ...}``): the YAML parser's turn.
        else:
            yield from enumerate(documents, start=1)
            return
    aliases = "&" in text and "*" in text  # anchors and aliases: shared subtrees
    try:
        for position, document in enumerate(yaml.load_all(text, Loader=_yaml_loader()), start=1):
            if aliases:
                _check_aliasing(source, position, document)
            yield position, document
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise SimInputError(f"{source}{at}: not valid YAML or JSON: {problem}") from error


# go-yaml (which kubectl and the API server read YAML with) refuses a document whose aliases
# expand it far past what it spells out ("document contains excessive aliasing"): a few lines
# of nested aliases are otherwise billions of nodes. Refused here past the same kind of bound.
MAX_EXPANDED_NODES: Final = 1_000_000


def _check_aliasing(source: str, position: int, document: Any) -> None:
    """Counts the nodes ``document`` has once every alias is expanded, each shared subtree
    once (linear in what was parsed), and refuses it past MAX_EXPANDED_NODES."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(document, False)]
    while stack:
        node, children_done = stack.pop()
        if not isinstance(node, dict | list) or (id(node) in sizes and not children_done):
            continue
        children = list(node.values()) if isinstance(node, dict) else node
        if not children_done:
            sizes[id(node)] = 0  # visiting: a cycle through an alias counts as one node
            stack.append((node, True))
            stack.extend((child, False) for child in children)
            continue
        total = 1 + sum(sizes.get(id(child), 1) for child in children)
        sizes[id(node)] = total
        if total > MAX_EXPANDED_NODES:
            raise SimInputError(
                f"{source}: document {position}: YAML aliases expand it to more than"
                f" {MAX_EXPANDED_NODES} nodes (excessive aliasing); simulate refuses it"
            )


# The characters of a name the API server generates (``utilrand.String``: no vowels, no
# confusable digits), and how many it appends to ``metadata.generateName``.
_GENERATED_NAME_CHARS: Final = "bcdfghjklmnpqrstvwxz2456789"
_GENERATED_NAME_LENGTH: Final = 5


def load_documents(paths: Sequence[str], *, seed: int = 0) -> list[Document]:
    """Every object of every file, in order; ``List`` documents are unpacked. An object with
    ``metadata.generateName`` and no name gets one as the API server would make it, from a
    source seeded with ``seed`` (the same input and seed give the same names)."""
    loaded: list[Document] = []
    for path in paths:
        source, text = _read(path)
        before = len(loaded)
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
                _check_count(loaded, source, position)
                continue
            loaded.append(Document(document, source, position))
            _check_count(loaded, source, position)
        if len(loaded) == before:
            raise SimInputError(f"{source}: no Kubernetes object in it (an empty file?)")
    names = random.Random(seed)
    taken = {
        (document.kind, _name_of(document.obj))
        for document in loaded
        if _name_of(document.obj) is not None
    }
    for document in loaded:
        if not document.obj.get("kind"):
            raise document.error("kind", "missing")
        metadata = document.obj.get("metadata")
        if not isinstance(metadata, dict):
            raise document.error("metadata.name", "missing")
        if metadata.get("name"):
            continue
        prefix = metadata.get("generateName")
        if not isinstance(prefix, str) or not prefix:
            raise document.error("metadata.name", "missing (and no metadata.generateName)")
        name = _generated_name(prefix, names)
        while (document.kind, name) in taken:
            name = _generated_name(prefix, names)
        taken.add((document.kind, name))
        metadata["name"] = name
    return loaded


def _check_count(loaded: Sequence[Document], source: str, position: int) -> None:
    if len(loaded) > MAX_OBJECTS:
        raise SimInputError(
            f"{source}: document {position}: more than {MAX_OBJECTS} objects in the input;"
            " simulate refuses it (Kubernetes' largest supported cluster, 5,000 nodes and"
            " 150,000 pods, holds far fewer)"
        )


def _name_of(obj: Mapping[str, Any]) -> str | None:
    metadata = obj.get("metadata")
    name = None
    if type(metadata) is dict or isinstance(metadata, Mapping):  # the ABC check is slow
        name = metadata.get("name")
    return name if isinstance(name, str) and name else None


def _generated_name(prefix: str, source: random.Random) -> str:
    suffix = "".join(source.choice(_GENERATED_NAME_CHARS) for _ in range(_GENERATED_NAME_LENGTH))
    return f"{prefix}{suffix}"
