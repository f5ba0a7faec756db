"""`volcano-py simulate` and the scheduler conf: unknown names refused (exit 2), unknown keys
and arguments warned on stderr once, ``--strict`` turning every warning into exit 2; the
conf shapes of Volcano's own user guides load without a warning.

The conf fixtures below are our own, written to cover the keys of the scheduler confs in
Volcano's docs/user-guide that use only plugins volcano-py has (how_to_configure_scheduler,
how_to_enable_dra, how_to_use_capacity_plugin, how_to_use_dra_quota,
how_to_use_network_topology_aware_scheduling, how_to_use_scheduling_gates_queue_admission)
and the Helm chart's.
"""

from __future__ import annotations

import json
import logging
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from volcano_py.cli.main import main
from volcano_py.framework.conf_check import load_conf
from volcano_py.scheduler.registry import PluginRegistry

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = str(ROOT / "examples" / "gang-deadlock.yaml")

DOC_SHAPED_CONFS = {
    "default-with-binpack": """
        # default configuration for scheduler
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
        """,
    "capacity-hierarchy": """
        actions: "enqueue, allocate, backfill, reclaim" # add reclaim action.
        tiers:
        - plugins:
          - name: priority
          - name: gang
            enablePreemptable: false
          - name: conformance
        - plugins:
          - name: drf
            enablePreemptable: false
          - name: predicates
          - name: capacity
            enableHierarchy: true
            arguments:
              ancestorReclaimLevel: 1
          - name: nodeorder
          - name: binpack
        """,
    "capacity-gates": """
        actions: "enqueue, allocate, backfill"
        tiers:
        - plugins:
          - name: priority
          - name: gang
        - plugins:
          - name: predicates
          - name: capacity
          - name: nodeorder
        """,
    "network-topology-aware": """
        actions: "enqueue, allocate, backfill"
        tiers:
        - plugins:
          - name: priority
          - name: gang
          - name: conformance
        - plugins:
          - name: drf
          - name: predicates
          - name: proportion
          - name: nodeorder
          - name: binpack
          - name: network-topology-aware
            arguments:
              weight: 10
              hypernode.binpack.cpu: 5
              hypernode.binpack.memory: 1
              hypernode.binpack.resources: nvidia.com/gpu, example.com/foo
              hypernode.binpack.resources.nvidia.com/gpu: 2
              hypernode.binpack.resources.example.com/foo: 3
              hypernode.binpack.normal-pod.enable: true
              hypernode.binpack.normal-pod.fading: 0.8
        """,
    "actions-with-configurations": """
        actions: "enqueue, allocate, preempt, reclaim, backfill"
        configurations:
        - name: preempt
          arguments:
            enableTopologyAwarePreemption: true
            topologyAwarePreemptWorkerNum: 4
            minCandidateNodesPercentage: 10
            minCandidateNodesAbsolute: 1
            maxCandidateNodesAbsolute: 100
        - name: allocate
          arguments:
            predicateErrorCacheEnable: false
        tiers:
        - plugins:
          - name: priority
          - name: gang
            enablePreemptable: false
          - name: conformance
        - plugins:
          - name: overcommit
            arguments:
              overcommit-factor: 1.5
          - name: drf
            enablePreemptable: false
          - name: predicates
            arguments:
              predicate.CacheEnable: true
          - name: proportion
          - name: nodeorder
            arguments:
              leastrequested.weight: 1
              nodeaffinity.weight: 2
          - name: binpack
            arguments:
              binpack.weight: 10
              binpack.cpu: 5
              binpack.resources: nvidia.com/gpu
              binpack.resources.nvidia.com/gpu: 2
        """,
}


@pytest.fixture(autouse=True)
def no_leftover_scheduler_log_handler() -> Iterator[None]:
    """Earlier tests of ``volcano-py scheduler`` may leave its stderr handler (on a stream
    pytest has since closed) on the root logger; simulate's stderr is asserted here."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    root.handlers[:] = [h for h in handlers if not getattr(h, "_volcano_py", False)]
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["simulate", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_conf(tmp_path: Path, text: str) -> str:
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(textwrap.dedent(text))
    return str(path)


@pytest.mark.parametrize("name", sorted(DOC_SHAPED_CONFS))
def test_doc_shaped_conf_loads_without_warning(name):
    warnings: list[str] = []
    load_conf(textwrap.dedent(DOC_SHAPED_CONFS[name]), PluginRegistry(), emit=warnings.append)
    assert warnings == []


PREDICATES_DRA_CONF = """
        actions: "enqueue, allocate, backfill"
        tiers:
        - plugins:
          - name: priority
          - name: gang
        - plugins:
          - name: drf
          - name: predicates
            arguments:
              predicate.DynamicResourceAllocationEnable: true
          - name: proportion
          - name: nodeorder
          - name: binpack
        """


def test_the_dra_guides_predicates_switch_is_retired_and_quiet():
    """how_to_enable_dra's conf sets predicate.DynamicResourceAllocationEnable: Volcano v1.13+
    reads it no more (DRA follows the feature gate), so it is inert and warns nothing, as on
    Volcano (the log says once, at info level, that it is retired)."""
    warnings: list[str] = []
    load_conf(textwrap.dedent(PREDICATES_DRA_CONF), PluginRegistry(), emit=warnings.append)
    assert warnings == []


def test_doc_shaped_conf_runs_under_strict(tmp_path, capsys):
    conf = write_conf(tmp_path, DOC_SHAPED_CONFS["actions-with-configurations"])
    code, out, err = simulate(capsys, CLUSTER, "--conf", conf, "--strict")
    assert (code, err) == (0, "")
    assert json.loads(out)["binds"]


def test_unknown_plugin_exits_2_naming_file_tier_index_and_name(tmp_path, capsys):
    conf = write_conf(
        tmp_path,
        'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: priority\n  - name: gangg\n',
    )
    code, out, err = simulate(capsys, CLUSTER, "--conf", conf)
    assert code == 2 and out == ""
    assert err == (
        f"error: {conf}: tiers[0].plugins[1]: unknown plugin 'gangg' (did you mean 'gang'?)\n"
    )


def test_unknown_plugin_in_an_input_configmap_names_the_configmap(tmp_path, capsys):
    configmap = tmp_path / "cm.yaml"
    configmap.write_text(
        textwrap.dedent(
            """\
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
            data:
              volcano-scheduler.conf: |
                actions: "enqueue, allocate"
                tiers:
                - plugins:
                  - name: gang
                  - name: nodeordr
            """
        )
    )
    code, _, err = simulate(capsys, CLUSTER, str(configmap))
    assert code == 2
    assert "volcano-scheduler-configmap" in err and "data.volcano-scheduler.conf" in err
    assert "tiers[0].plugins[1]: unknown plugin 'nodeordr' (did you mean 'nodeorder'?)" in err


WARNED_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enableJobOrdr: false
  - name: binpack
    arguments:
      binpack.weigth: 3
"""


def test_warnings_go_to_stderr_once_and_the_run_goes_on(tmp_path, capsys):
    conf = write_conf(tmp_path, WARNED_CONF)
    code, out, err = simulate(capsys, CLUSTER, "--conf", conf, "--cycles", "3")
    assert code == 0 and json.loads(out)["binds"]
    assert err.splitlines() == [
        f"warning: {conf}: tiers[0].plugins[1] (gang): unknown key 'enableJobOrdr'"
        " (did you mean 'enableJobOrder'?); ignored",
        f"warning: {conf}: tiers[0].plugins[2] (binpack): unknown plugin argument"
        " 'binpack.weigth' (did you mean 'binpack.weight'?); ignored",
    ]


def test_strict_turns_load_warnings_into_exit_2(tmp_path, capsys):
    conf = write_conf(tmp_path, WARNED_CONF)
    code, out, err = simulate(capsys, CLUSTER, "--conf", conf, "--strict")
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 3 and all(line.startswith("warning: ") for line in lines[:2])
    assert lines[2] == "error: --strict: 2 warning(s) above"


TYPED_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: binpack
    arguments:
      binpack.weight: "ten"
"""


def test_wrongly_typed_argument_is_warned_once_over_many_cycles(tmp_path, capsys):
    conf = write_conf(tmp_path, TYPED_CONF)
    code, out, err = simulate(capsys, CLUSTER, "--conf", conf, "--cycles", "4")
    assert code == 0 and out
    assert err.splitlines() == [
        "warning: plugin binpack: could not parse argument 'ten' for key binpack.weight"
        " to int; default kept"
    ]


def test_strict_turns_a_wrongly_typed_argument_into_exit_2(tmp_path, capsys):
    """The type is known when the plugin reads the value, so the run happens first; the
    report is withheld."""
    conf = write_conf(tmp_path, TYPED_CONF)
    code, out, err = simulate(capsys, CLUSTER, "--conf", conf, "--strict")
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == "error: --strict: 1 warning(s) above"


def test_strict_counts_input_warnings_too(tmp_path, capsys):
    """docs/simulate.md: with --strict every warning is an error, a kind not simulated too."""
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        "apiVersion: example.com/v1\nkind: Widget\n"
        "metadata: {name: c, namespace: default}\n"
    )
    code, _, err = simulate(capsys, CLUSTER, str(extra))
    assert code == 0 and "not simulated" in err
    code, out, err = simulate(capsys, CLUSTER, str(extra), "--strict")
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == "error: --strict: 1 warning(s) above"
