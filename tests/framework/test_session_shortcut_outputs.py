"""Every shortcut ``bench.outputs.REFERENCE_SWITCHES`` lists, switched off together, hands out
what the sessions hand out with them on: every bind in order (with its annotations), eviction,
PodGroup and queue status write, pod condition and event, on ``bench.decisions``' clusters
(issue 14: speed-ups must not change any output a user sees)."""

from __future__ import annotations

import importlib

import pytest

from bench import outputs


@pytest.mark.parametrize("seed", range(1, 60, 5))
def test_the_reference_paths_hand_out_the_same(seed: int) -> None:
    shortcuts = outputs.outputs(seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        for module, flag, value in outputs.REFERENCE_SWITCHES:
            monkeypatch.setattr(importlib.import_module(module), flag, value)
        assert outputs.outputs(seed) == shortcuts
