"""docs/plugins.md lists every hook as framework/hooks.py declares it."""

from __future__ import annotations

from pathlib import Path

from volcano_py.framework import hooks
from volcano_py.framework.hook_table import registration_method, render, replace_table
from volcano_py.framework.session import Session

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"


def test_every_hook_has_a_function_type_and_a_registration_method() -> None:
    assert set(hooks.HOOK_FUNCTION_TYPES) == set(hooks.HOOKS)
    for hook, type_name in hooks.HOOK_FUNCTION_TYPES.items():
        assert hasattr(hooks, type_name), f"{hook}: no type alias {type_name} in hooks.py"
        assert hasattr(Session, registration_method(hook)), f"Session lacks add_{hook}_fn"


def test_the_documented_hook_table_is_current() -> None:
    document = DOC.read_text(encoding="utf-8")
    assert replace_table(document) == document, (
        "docs/plugins.md's hook table is stale: run "
        "python -m volcano_py.framework.hook_table --write docs/plugins.md"
    )
    for hook in hooks.HOOKS:
        assert f"`{registration_method(hook)}`" in render()
