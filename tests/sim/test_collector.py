"""How ``simulate`` runs the cyclic collector (sim/collector.py) changes no output: the loaded
cluster and what each cycle leaves are frozen, a full collection runs every so many cycles,
and a released session is emptied so reference counting frees its copies."""

from __future__ import annotations

import gc
import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from volcano_py.cli.main import main
from volcano_py.framework.conf import default_conf
from volcano_py.framework.session import close_session, open_session
from volcano_py.scheduler.registry import default_registry
from volcano_py.sim import collector
from volcano_py.sim.engine import Simulation

EXAMPLE = Path(__file__).parents[2] / "examples" / "forecast-gpu.yaml"


def _simulate(*arguments: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["simulate", str(EXAMPLE), *arguments]) == 0
    return out.getvalue()


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_full_collections_between_cycles_change_no_output(monkeypatch, output):
    usual = _simulate("--until", "3h", "--format", output)
    collections = []
    original = collector.CycleCollector.after_cycle

    def counted(self: collector.CycleCollector) -> None:
        original(self)
        collections.append(self.full_collections)

    monkeypatch.setattr(collector, "CYCLES_BETWEEN_COLLECTIONS", 2)
    monkeypatch.setattr(collector.CycleCollector, "after_cycle", counted)
    assert _simulate("--until", "3h", "--format", output) == usual
    assert len(collections) > 4 and collections[-1] == len(collections) // 2


def test_nothing_stays_frozen_after_an_in_process_run():
    _simulate("--cycles", "2")
    assert gc.get_freeze_count() == 0


def test_a_released_session_is_emptied():
    simulation = Simulation(default_conf(), default_registry())
    simulation.load(
        [
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "n1"},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
            }
        ]
    )
    snapshot = simulation.cache.snapshot()
    nodes = snapshot.nodes
    ssn = open_session(snapshot, simulation.conf, simulation.plugins, simulation.cache)
    close_session(ssn)
    ssn.release()
    assert nodes == {} and vars(ssn) == {}
    with pytest.raises(AttributeError):
        _ = ssn.jobs
