"""Which actions and plugins exist (``scheduler/registry.py``): the built-ins, loaded lazily,
and third-party plugins registered under the ``volcano_py.plugins`` entry-point group (the
Python analogue of Volcano's ``--plugins-dir``, upstream ``framework/plugins.go``).

Upstream ``framework/plugins_test.go`` ``TestGetPluginName`` (plugin name from a ``.so``
path) has no equivalent: plugins are named by their entry point.
"""

from __future__ import annotations

import importlib
import logging
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier, parse_conf
from volcano_py.framework.session import open_session
from volcano_py.scheduler import registry
from volcano_py.scheduler.registry import (
    BUILTIN_ACTIONS,
    BUILTIN_PLUGINS,
    ENTRY_POINT_GROUP,
    PluginRegistry,
    build_plugin,
    default_registry,
    discover_plugins,
    new_action,
)

MODULE = "vpy_thirdparty_plugin_for_tests"

PLUGIN_SOURCE = """
from __future__ import annotations

OPENED = []


class ThirdParty:
    name = "thirdparty"

    def __init__(self, arguments):
        self.arguments = arguments

    def on_session_open(self, ssn):
        OPENED.append(dict(self.arguments))
        ssn.add_job_order_fn(self.name, lambda left, right: -1 if left.uid > right.uid else 1)

    def on_session_close(self, ssn):
        return None


def new(arguments):
    return ThirdParty(arguments)


class Shadow(ThirdParty):
    name = "gang"


def new_gang(arguments):
    return Shadow(arguments)
"""


@pytest.fixture
def installed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A tiny installed distribution: a module plus a dist-info declaring entry points."""
    (tmp_path / f"{MODULE}.py").write_text(textwrap.dedent(PLUGIN_SOURCE))
    dist_info = tmp_path / "vpy_thirdparty_plugin_for_tests-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: vpy-thirdparty-plugin-for-tests\nVersion: 1.0\n"
    )
    (dist_info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\n"
        f"thirdparty = {MODULE}:new\n"
        "broken = vpy_no_such_module_for_tests:new\n"
        f"missing-attribute = {MODULE}:does_not_exist\n"
        "[some.other.group]\n"
        f"unrelated = {MODULE}:new\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    sys.modules.pop(MODULE, None)


def test_entry_point_plugin_is_discovered(installed_plugin, caplog):
    with caplog.at_level(logging.ERROR, logger="volcano_py.scheduler.registry"):
        found = discover_plugins()
    assert "thirdparty" in found
    assert "unrelated" not in found
    plugin = found["thirdparty"](Arguments({"k": 1}))
    assert plugin.name == "thirdparty"
    # a broken third-party plugin is reported and skipped, never fatal
    assert "broken" not in found and "missing-attribute" not in found
    messages = " ".join(record.getMessage() for record in caplog.records)
    assert "broken" in messages and "missing-attribute" in messages


def test_default_registry_serves_builtins_and_third_party(installed_plugin):
    plugins = default_registry()
    assert "thirdparty" in plugins
    assert set(BUILTIN_PLUGINS) <= set(plugins)
    assert len(plugins) == len(set(plugins))
    assert list(plugins).count("thirdparty") == 1
    assert plugins["priority"] is importlib.import_module(BUILTIN_PLUGINS["priority"]).new


def test_third_party_plugin_runs_in_a_session(installed_plugin):
    conf = parse_conf(
        """
actions: "allocate"
tiers:
- plugins:
  - name: thirdparty
    arguments: {answer: 42}
""",
        BUILTIN_ACTIONS,
    )
    ssn = open_session(SchedulerCache().snapshot(), conf, default_registry(), SchedulerCache())
    module = sys.modules[MODULE]
    assert module.OPENED == [{"answer": 42}]
    assert ssn.plugins["thirdparty"].name == "thirdparty"
    # read from a file, enableJobOrder defaulted to true: its order function is in effect
    assert ssn.has_hook("job_order")
    from volcano_py.api.job import JobInfo

    assert ssn.job_order_fn(JobInfo(uid="b"), JobInfo(uid="a")) is True


def test_third_party_plugin_may_replace_a_builtin(installed_plugin):
    """As upstream, where a plugin loaded from --plugins-dir re-registers a name after the
    built-ins, the externally registered builder wins."""
    module = importlib.import_module(MODULE)
    plugins = PluginRegistry({"gang": module.new_gang})
    assert plugins["gang"] is module.new_gang
    assert len(plugins) == len(BUILTIN_PLUGINS)


def test_discovery_through_patched_entry_points(monkeypatch):
    class FakeEntryPoint:
        def __init__(self, name: str, value: object) -> None:
            self.name, self.value = name, f"fake:{name}"
            self._value = value

        def load(self) -> object:
            if isinstance(self._value, Exception):
                raise self._value
            return self._value

    def builder(arguments: Arguments) -> object:
        return object()

    seen_groups: list[str] = []

    def fake_entry_points(*, group: str) -> list[FakeEntryPoint]:
        seen_groups.append(group)
        return [FakeEntryPoint("good", builder), FakeEntryPoint("bad", RuntimeError("boom"))]

    monkeypatch.setattr(registry, "entry_points", fake_entry_points)
    assert discover_plugins() == {"good": builder}
    assert seen_groups == [ENTRY_POINT_GROUP]


# ---------------------------------------------------------------------------- built-ins


@pytest.mark.parametrize("name", sorted(BUILTIN_PLUGINS))
def test_every_builtin_plugin_builds(name):
    plugin = build_plugin(PluginRegistry(), name, Arguments({}, owner=name))
    assert plugin.name == name
    assert callable(plugin.on_session_open) and callable(plugin.on_session_close)


@pytest.mark.parametrize("name", sorted(BUILTIN_ACTIONS))
def test_every_builtin_action_builds(name):
    action = new_action(name)
    assert action.name == name
    assert callable(action.execute)


def test_unknown_plugin_is_a_key_error():
    plugins = PluginRegistry()
    with pytest.raises(KeyError):
        plugins["no-such-plugin"]
    assert plugins.get("no-such-plugin") is None
    assert "no-such-plugin" not in plugins


def test_builtin_that_fails_to_import_is_skipped_like_an_unknown_one(monkeypatch, caplog):
    monkeypatch.setitem(BUILTIN_PLUGINS, "half-written", "vpy_no_such_module_for_tests")
    plugins = PluginRegistry()
    with caplog.at_level(logging.ERROR):
        assert plugins.get("half-written") is None
    assert "half-written" in caplog.text
    # the session says so and carries on
    conf = SchedulerConf(
        actions=[],
        tiers=[
            Tier([PluginOption.with_flags("half-written"), PluginOption.with_flags("priority")])
        ],
    )
    ssn = open_session(SchedulerCache().snapshot(), conf, plugins, SchedulerCache())
    assert list(ssn.plugins) == ["priority"]


def test_unknown_plugin_in_an_unchecked_conf_is_skipped_at_session_open(caplog):
    """``parse_conf`` alone does not check plugin names (``load_conf`` refuses them, see
    tests/framework/test_conf_check.py); such a conf still opens, without the plugin."""
    conf = parse_conf(
        """
actions: "allocate"
tiers:
- plugins:
  - name: no-such-plugin
  - name: priority
""",
        BUILTIN_ACTIONS,
    )
    with caplog.at_level(logging.ERROR, logger="volcano_py.framework.session"):
        ssn = open_session(SchedulerCache().snapshot(), conf, PluginRegistry(), SchedulerCache())
    assert list(ssn.plugins) == ["priority"]
    assert "failed to get plugin no-such-plugin" in caplog.text


def test_third_party_plugin_without_arguments_declaration_is_not_checked(installed_plugin):
    from volcano_py.framework.conf_check import load_conf

    warnings: list[str] = []
    conf = load_conf(
        'actions: "allocate"\ntiers:\n- plugins:\n  - name: thirdparty\n'
        "    arguments: {anything: 1}\n",
        default_registry(),
        emit=warnings.append,
    )
    assert conf.plugin_names() == ["thirdparty"]
    assert default_registry().declared_plugin_arguments("thirdparty") is None
    assert warnings == []


def test_builtin_modules_load_lazily_and_once():
    plugins = PluginRegistry()
    first = plugins["drf"]
    assert plugins["drf"] is first
    assert first is importlib.import_module(BUILTIN_PLUGINS["drf"]).new
