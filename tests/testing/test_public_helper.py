"""``volcano_py.testing``: the public session helper (upstream ``uthelper``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from volcano_py.testing import Case, Cluster, build_node, build_pod, check, resource_list, run_case


def test_importing_it_does_not_import_pytest() -> None:
    code = "import sys, volcano_py.testing; sys.exit('pytest' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_a_gang_fits_and_binds() -> None:
    outcome = (
        Cluster()
        .node("n1", cpu="2", memory="4Gi")
        .node("n2", cpu="2", memory="4Gi")
        .queue("default")
        .job("j", replicas=2, cpu="2", memory="1Gi")
        .run(actions=["enqueue", "allocate"], plugins={"gang": ["enableJobReady"]})
    )
    assert sorted(outcome.binds.values()) == ["n1", "n2"]
    outcome.expect_bind_count(2).expect_evicted([]).expect_pipelined({})


def test_a_gang_that_does_not_fit_binds_nothing_and_says_so() -> None:
    outcome = (
        Cluster()
        .node("n1", cpu="2", memory="4Gi")
        .queue("default")
        .job("j", replicas=2, cpu="2", memory="1Gi")
        .run(actions=["enqueue", "allocate"], plugins={"gang": ["enableJobReady"]})
    )
    with pytest.raises(AssertionError, match=r"binds \{\} != expected"):
        outcome.expect_binds({"default/j-0": "n1"})


def test_a_conf_text_gives_actions_and_tiers() -> None:
    conf = """
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
  - name: predicates
"""
    outcome = (
        Cluster()
        .node("n1", labels={"zone": "a"})
        .node("n2", labels={"zone": "b"})
        .queue("default")
        .job("j", node_selector={"zone": "b"})
        .run(conf=conf)
    )
    outcome.expect_binds({"default/j-0": "n2"})


def test_check_reports_the_case_name_without_assert_statements() -> None:
    case = Case(
        name="one pod",
        plugins={},
        nodes=[build_node("n1", resource_list("1", "1Gi", pods="10"))],
        pods=[build_pod("ns", "p", "", "Pending", resource_list("1", "1Gi"), "pg")],
        expect_bind_map={"ns/p": "elsewhere"},
    )
    outcome = run_case(case, ["allocate"])
    with pytest.raises(AssertionError, match="one pod: binds"):
        check(case, outcome)
