"""The import-linter contracts that keep actions independent name every built-in action."""

from __future__ import annotations

import tomllib
from pathlib import Path

from volcano_py.scheduler.registry import BUILTIN_ACTIONS

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_actions_independence_contract_lists_every_builtin_action() -> None:
    contracts = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"][
        "contracts"
    ]
    (actions,) = [c for c in contracts if c["name"].startswith("Actions never import each other")]
    assert set(actions["modules"]) == set(BUILTIN_ACTIONS.values())
