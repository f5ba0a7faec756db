"""User guide ``how_to_configure_scheduler``: the default conf (``enqueue, allocate,
backfill``; priority, gang, conformance; overcommit, drf, predicates, proportion, nodeorder,
binpack). enqueue admits a job (its PodGroup goes Inqueue) when its minimum resources fit the
idle resources times overcommit's default factor 1.2, else the PodGroup stays Pending; the
actions run in the order the conf gives.

The guide's action table still lists ``elect`` and ``reserve`` (and the plugin table
``reservation``): Volcano removed them, and its scheduler refuses a conf naming such an action
("failed to find Action"); volcano-py refuses it the same way (docs/migrating-from-volcano.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guides.guide_sim import bare_pod, conf_map, node, simulate, task, vcjob, vqueue
from tests.sim.roundtrip import dump, simulate_text

DEFAULT_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""


@pytest.mark.parametrize(("members", "phase"), [(5, "Running"), (7, "Inqueue"), (8, "Pending")])
def test_enqueue_admits_up_to_the_overcommit_factor(
    tmp_path: Path, members: int, phase: str
) -> None:
    """A 10-CPU node with 5 CPUs used (by another queue's pod): overcommit counts 10 x 1.2 - 5
    = 7 CPUs idle, so a gang of 7 is admitted though it cannot run yet, and 8 waits.
    (proportion checks the queue's own share too, here the whole cluster: 10 CPUs.)"""
    used = bare_pod(
        "other-0", "5", annotations={"scheduling.volcano.sh/queue-name": "other"}, nodeName="n1"
    )
    job = vcjob("big", [task("worker", members)], minAvailable=members)
    cluster = [conf_map(DEFAULT_CONF), node("n1", cpu="10"), vqueue("other", weight=1), used, job]
    report, _, _ = simulate(tmp_path, cluster)
    assert report["podgroups"]["default/big"]["phase"] == phase


@pytest.mark.parametrize("action", ["elect", "reserve"])
def test_removed_actions_are_refused(tmp_path: Path, action: str) -> None:
    conf = DEFAULT_CONF.replace("backfill", f"backfill, {action}")
    code, _, err = simulate_text(tmp_path, dump([conf_map(conf), node("n1")]))
    assert code != 0
    assert f"failed to find Action '{action}'" in err
