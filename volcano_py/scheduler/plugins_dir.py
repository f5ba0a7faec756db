"""Plugins loaded from a directory at start: Volcano's ``--plugins-dir``.

Upstream opens every ``*.so`` Go plugin in the directory and registers its ``New`` under the
file's base name; a plugin that cannot be loaded stops the scheduler from starting. Here the
directory holds Python plugins: each ``NAME.py`` module, and each ``NAME/`` package (a directory
with an ``__init__.py``), is imported and must expose

* ``PLUGIN_NAME: str``, the name ``volcano-scheduler.conf`` lists it under (it may hold ``-``,
  which a module name cannot), and
* ``new(arguments) -> Plugin``, its builder,

and may declare ``ARGUMENTS: frozenset[str]``, the argument keys it reads. Entries whose name
starts with ``_`` or ``.`` (``__pycache__``, private helpers) and files that are not ``*.py``
are not plugins and are left alone. As upstream, any broken plugin stops the load, with an
error naming its file; unlike upstream, a plugin may not take the name of a built-in one
(upstream silently replaces the built-in, which hides a typo or a stale copy).

The modules are imported under a private name per directory (``_volcano_py_plugins_<hash>.X``),
so a plugin file called ``gang.py`` does not shadow anything, and a package's relative imports
work.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from volcano_py.framework.plugin import PluginBuilder
from volcano_py.scheduler.registry import (
    BUILTIN_PLUGINS,
    ENTRY_POINT_GROUP,
    PluginRegistry,
    discover_plugins,
)


class PluginsDirError(ValueError):
    """A plugins directory, or a plugin in it, cannot be used; the message names the file."""


def load_plugins_dir(path: str | Path) -> dict[str, PluginBuilder]:
    """Plugin name -> builder for every plugin in ``path`` (see the module doc)."""
    directory = Path(path)
    if not directory.is_dir():
        raise PluginsDirError(f"--plugins-dir {directory}: not a directory")
    namespace = _namespace(directory)
    builders: dict[str, PluginBuilder] = {}
    origins: dict[str, Path] = {}
    for entry, init_file in _plugin_entries(directory):
        module = _import(namespace, entry, init_file)
        name, builder = _plugin_of(module, entry)
        if name in BUILTIN_PLUGINS:
            raise PluginsDirError(
                f"{entry}: PLUGIN_NAME {name!r} is the name of a built-in plugin; "
                "choose another name"
            )
        if name in origins:
            raise PluginsDirError(
                f"{entry}: PLUGIN_NAME {name!r} is already used by {origins[name]}"
            )
        origins[name] = entry
        builders[name] = builder
    return builders


def plugins_with_dir(path: str | Path | None) -> PluginRegistry:
    """The built-ins, the installed entry-point plugins and those of ``path`` (if given)."""
    extra = discover_plugins()
    if path is not None:
        for name, builder in load_plugins_dir(path).items():
            if name in extra:
                raise PluginsDirError(
                    f"{path}: plugin {name!r} is also installed as a {ENTRY_POINT_GROUP} "
                    "entry point; remove one of them"
                )
            extra[name] = builder
    return PluginRegistry(extra)


def _namespace(directory: Path) -> str:
    digest = hashlib.sha256(str(directory.resolve()).encode()).hexdigest()[:12]
    return f"_volcano_py_plugins_{digest}"


def _plugin_entries(directory: Path) -> Iterator[tuple[Path, Path]]:
    """(entry, file to execute) for each plugin module or package, in name order."""
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith(("_", ".")):
            continue
        if entry.is_file() and entry.suffix == ".py":
            yield entry, entry
        elif entry.is_dir() and (entry / "__init__.py").is_file():
            yield entry, entry / "__init__.py"


def _import(namespace: str, entry: Path, init_file: Path) -> ModuleType:
    if namespace not in sys.modules:
        # An empty parent package, so that "namespace.plugin" is a proper dotted module name.
        parent = ModuleType(namespace)
        parent.__path__ = []
        sys.modules[namespace] = parent
    name = f"{namespace}.{entry.stem if entry.is_file() else entry.name}"
    locations = [str(entry)] if entry.is_dir() else None
    spec = importlib.util.spec_from_file_location(
        name, init_file, submodule_search_locations=locations
    )
    if spec is None or spec.loader is None:
        raise PluginsDirError(f"{entry}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # whatever a plugin raises, the message must name its file
        del sys.modules[name]
        raise PluginsDirError(
            f"{entry}: failed to import: {type(error).__name__}: {error}"
        ) from error
    return module


def _plugin_of(module: ModuleType, entry: Path) -> tuple[str, PluginBuilder]:
    name = getattr(module, "PLUGIN_NAME", None)
    if not isinstance(name, str) or not name:
        raise PluginsDirError(
            f"{entry}: a plugin must set PLUGIN_NAME to the name the scheduler conf uses "
            f"(a non-empty string), got {name!r}"
        )
    builder = getattr(module, "new", None)
    if not callable(builder):
        raise PluginsDirError(
            f"{entry}: plugin {name!r} must define new(arguments) returning the plugin"
        )
    arguments: object = getattr(module, "ARGUMENTS", frozenset())
    if not isinstance(arguments, (set, frozenset)) or not all(
        isinstance(key, str) for key in arguments
    ):
        raise PluginsDirError(
            f"{entry}: plugin {name!r}: ARGUMENTS must be a frozenset of argument keys, "
            f"got {arguments!r}"
        )
    plugin_builder: PluginBuilder = builder
    return name, plugin_builder
