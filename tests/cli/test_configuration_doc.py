"""docs/configuration.md documents every flag of the three processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from volcano_py.cli.main import GO_FLAG_COMMANDS, _subparsers, build_parser

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


@pytest.mark.parametrize("process", sorted(GO_FLAG_COMMANDS))
def test_every_flag_is_documented(process: str) -> None:
    text = DOC.read_text()
    section = text[text.index("## Command line") :]
    parser = _subparsers(build_parser())[process]
    flags = {
        option
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }
    missing = sorted(flag for flag in flags if f"`{flag}`" not in section)
    assert missing == []
