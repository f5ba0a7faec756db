"""The session harness now lives in :mod:`volcano_py.testing.session` (public, for plugin
authors too); this module keeps ``from tests.harness import ...`` working."""

from __future__ import annotations

from volcano_py.testing.session import Case, Outcome, PluginFlags, check, run_case, tiers_of

__all__ = ["Case", "Outcome", "PluginFlags", "check", "run_case", "tiers_of"]
