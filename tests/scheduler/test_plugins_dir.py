"""``load_plugins_dir`` and the ``--plugins-dir`` flags (Volcano's ``LoadCustomPlugins``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from volcano_py.cli.main import main
from volcano_py.framework.arguments import Arguments
from volcano_py.scheduler.plugins_dir import PluginsDirError, load_plugins_dir, plugins_with_dir

PLUGIN = """
from volcano_py.framework.arguments import Arguments

PLUGIN_NAME = "{name}"
ARGUMENTS = frozenset({{"{name}.weight"}})


class P:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments

    def on_session_open(self, ssn: object) -> None:
        pass

    def on_session_close(self, ssn: object) -> None:
        pass


def new(arguments: Arguments) -> P:
    return P(arguments)
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_modules_and_packages_are_loaded_by_plugin_name(tmp_path: Path) -> None:
    write(tmp_path / "team_affinity.py", PLUGIN.format(name="team-affinity"))
    # A package whose __init__ uses a relative import of its own module.
    write(tmp_path / "spread" / "impl.py", PLUGIN.format(name="spread"))
    write(tmp_path / "spread" / "__init__.py", "from .impl import PLUGIN_NAME, new\n")
    # Not plugins: private modules, caches, other files, directories without __init__.py.
    write(tmp_path / "_shared.py", "raise RuntimeError('must not be imported')\n")
    write(tmp_path / "README.md", "docs\n")
    write(tmp_path / "data" / "x.py", "raise RuntimeError('must not be imported')\n")
    builders = load_plugins_dir(tmp_path)
    assert sorted(builders) == ["spread", "team-affinity"]
    plugin = builders["team-affinity"](Arguments({"team-affinity.weight": 2}))
    assert plugin.name == "team-affinity"


def test_a_plugin_file_named_like_a_builtin_module_shadows_nothing(tmp_path: Path) -> None:
    write(tmp_path / "gang.py", PLUGIN.format(name="my-gang"))
    assert list(load_plugins_dir(tmp_path)) == ["my-gang"]
    import volcano_py.plugins.gang as builtin_gang

    assert builtin_gang.PLUGIN_NAME == "gang"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("import no_such_module_here\n", "broken.py: failed to import: ModuleNotFoundError"),
        ("def new(arguments):\n    return None\n", "broken.py: a plugin must set PLUGIN_NAME"),
        ("PLUGIN_NAME = 'x'\n", "broken.py: plugin 'x' must define new(arguments)"),
        (
            "PLUGIN_NAME = 'x'\nARGUMENTS = ['a']\ndef new(arguments):\n    return None\n",
            "broken.py: plugin 'x': ARGUMENTS must be a frozenset",
        ),
        (
            "PLUGIN_NAME = 'gang'\ndef new(arguments):\n    return None\n",
            "broken.py: PLUGIN_NAME 'gang' is the name of a built-in plugin",
        ),
        ("1/0\n", "broken.py: failed to import: ZeroDivisionError"),
    ],
)
def test_a_broken_plugin_is_refused_naming_its_file(
    tmp_path: Path, text: str, message: str
) -> None:
    write(tmp_path / "broken.py", text)
    with pytest.raises(PluginsDirError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_plugins_dir(tmp_path)


def test_two_files_with_one_plugin_name_are_refused(tmp_path: Path) -> None:
    write(tmp_path / "a.py", PLUGIN.format(name="same"))
    write(tmp_path / "b.py", PLUGIN.format(name="same"))
    with pytest.raises(
        PluginsDirError, match=r"b.py: PLUGIN_NAME 'same' is already used by .*a.py"
    ):
        load_plugins_dir(tmp_path)


def test_a_missing_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PluginsDirError, match="not a directory"):
        load_plugins_dir(tmp_path / "nope")


def test_the_registry_has_builtins_and_the_directory(tmp_path: Path) -> None:
    write(tmp_path / "extra.py", PLUGIN.format(name="extra"))
    registry = plugins_with_dir(tmp_path)
    assert "extra" in registry and "gang" in registry
    assert "extra" not in plugins_with_dir(None)


def test_simulate_refuses_a_broken_plugins_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "plugins" / "broken.py", "1/0\n")
    objects = write(
        tmp_path / "objects.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: '1'}}\n",
    )
    assert main(["simulate", "--plugins-dir", str(tmp_path / "plugins"), str(objects)]) == 2
    assert "broken.py: failed to import: ZeroDivisionError" in capsys.readouterr().err


def test_scheduler_refuses_a_broken_plugins_dir_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "plugins" / "broken.py", "PLUGIN_NAME = 'predicates'\ndef new(a): ...\n")
    code = main(
        [
            "scheduler",
            "--plugins-dir",
            str(tmp_path / "plugins"),
            "--kubeconfig",
            str(tmp_path / "missing-kubeconfig"),
        ]
    )
    assert code == 2
    assert "built-in plugin" in capsys.readouterr().err
