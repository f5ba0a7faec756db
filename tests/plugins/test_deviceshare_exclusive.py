"""deviceshare.GPUExclusiveRules (``plugins/deviceshare/exclusive.py`` and the vGPU
accounting that applies them).

Transcribed from upstream ``pkg/scheduler/plugins/deviceshare/gpuexclusive_test.go``:
TestPodMatchesRule (6), TestMatchingRules (5), TestLoadGPUExclusiveConfig (3),
TestParseExclusiveRulesHandlesEdgeCases (4), TestCapGPUsOnlyAffectsSpecifiedIndices,
TestReservedGPUsForPod, TestPodMatchingMultipleRulesSeesUnionOfReservedGPUs,
TestNonMatchingPodDoesNotReserve, TestEndToEndExclusive, TestOnSessionOpenWrapsDevices. Upstream
sets the reserved cards' ``Number`` to their ``UsedNum`` around the fit (``capGPUs``); here the
fit skips them, which the capping tests check as "the card takes no pod".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.plugins.deviceshare_helpers import (
    check_vectorised_fit,
    example_with,
    limits_pod,
    simulate,
    write_input,
)
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.framework.arguments import Arguments
from volcano_py.plugins.deviceshare import new
from volcano_py.plugins.deviceshare.config import DEFAULT_NVIDIA
from volcano_py.plugins.deviceshare.exclusive import (
    GPU_EXCLUSIVE_RULES,
    ExclusiveRule,
    matching_rules,
    parse_exclusive_rules,
    pod_matches_rule,
)
from volcano_py.plugins.deviceshare.options import BINPACK, SPREAD
from volcano_py.plugins.deviceshare.vgpu import ASSIGNED_IDS, VgpuDevices

# testExclusiveRules
RULES: tuple[ExclusiveRule, ...] = (
    (("app", "training"), ("team", "ml")),
    (("workload", "inference"),),
)
TRAINING = {"app": "training", "team": "ml"}
INFERENCE = {"workload": "inference"}


def exclusive_pod(
    name: str,
    labels: dict[str, str] | None,
    vgpus: int = 1,
    *,
    node: str = "",
    cards: tuple[int, ...] = (),
) -> TaskInfo:
    """``makeExclusivePod``; ``cards``: the cards of ``node`` it holds (its annotation)."""
    limits = {"volcano.sh/vgpu-number": str(vgpus)} if vgpus else {}
    metadata: dict[str, Any] = {"name": name, "namespace": "default", "uid": "uid-" + name}
    if labels is not None:
        metadata["labels"] = labels
    if cards:
        metadata["annotations"] = {
            ASSIGNED_IDS: "".join(f"GPU-{node}-{card},NVIDIA,0,0:" for card in cards)
        }
    spec: dict[str, Any] = {"containers": [{"name": "main", "resources": {"limits": limits}}]}
    if node and cards:
        spec["nodeName"] = node
    task = TaskInfo.from_pod({"metadata": metadata, "spec": spec})
    if cards:
        task.status = TaskStatus.RUNNING
    return task


@pytest.mark.parametrize(
    ("name", "labels", "rule", "expected"),
    [
        ("pod matches rule 0 (app=training, team=ml)", TRAINING, 0, True),
        ("pod matches rule 0 with extra labels", {**TRAINING, "env": "prod"}, 0, True),
        ("pod missing one label from rule 0", {"app": "training"}, 0, False),
        ("pod has wrong value for rule 0", {"app": "training", "team": "data"}, 0, False),
        ("pod matches rule 1 (workload=inference)", INFERENCE, 1, True),
        ("pod with nil labels matches nothing", {}, 0, False),
    ],
)
def test_pod_matches_rule(name: str, labels: dict[str, str], rule: int, expected: bool) -> None:
    """TestPodMatchesRule."""
    assert pod_matches_rule(labels, RULES[rule]) is expected


@pytest.mark.parametrize(
    ("name", "labels", "expected"),
    [
        ("matches rule 0 only", TRAINING, 1),
        ("matches rule 1 only", INFERENCE, 1),
        ("matches both rules", {**TRAINING, **INFERENCE}, 2),
        ("matches no rules", {"app": "serving"}, 0),
        ("nil labels matches nothing", {}, 0),
    ],
)
def test_matching_rules(name: str, labels: dict[str, str], expected: int) -> None:
    """TestMatchingRules."""
    assert len(matching_rules(labels, RULES)) == expected


def test_load_gpu_exclusive_config() -> None:
    """TestLoadGPUExclusiveConfig: no rules by default; rules from the argument's list of
    label maps (YAML gives string keys, so Go's two map types are one case here)."""
    assert new(Arguments({})).options.exclusive_rules == ()
    plugin = new(Arguments({GPU_EXCLUSIVE_RULES: [{"app": "training", "team": "ml"}, INFERENCE]}))
    assert plugin.options.exclusive_rules == RULES
    assert new(Arguments({GPU_EXCLUSIVE_RULES: [{"app": "training"}]})).options.exclusive_rules == (
        (("app", "training"),),
    )


@pytest.mark.parametrize(
    ("name", "raw", "problem"),
    [
        ("nil input", None, None),
        ("wrong type", "not a slice", "is not a list of label maps"),
        ("empty slice", [], None),
        ("empty map skipped", [{}], "has no labels"),
    ],
)
def test_parse_exclusive_rules_handles_edge_cases(name: str, raw: Any, problem: str | None) -> None:
    """TestParseExclusiveRulesHandlesEdgeCases: no rules from any of these; what upstream
    drops silently is named here."""
    rules, problems = parse_exclusive_rules(raw)
    assert rules == ()
    if problem is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problem in problems[0]


def test_unquoted_label_values_are_named(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING"):
        plugin = new(Arguments({GPU_EXCLUSIVE_RULES: [{"gpu": True, "app": "x"}]}))
    assert plugin.options.exclusive_rules == ((("app", "x"),),)
    assert "label 'gpu': True is not a string" in caplog.text


def _node(name: str, cards: int, number: int = 10) -> dict[str, Any]:
    register = "".join(
        f"GPU-{name}-{i},{number},16384,NVIDIA,true,hami-core:" for i in range(cards)
    )
    resources = {
        "volcano.sh/vgpu-number": "10",
        "volcano.sh/vgpu-memory": "16384",
        "volcano.sh/vgpu-cores": "100",
    }
    return {
        "metadata": {"name": name, "annotations": {"volcano.sh/node-vgpu-register": register}},
        "status": {"allocatable": resources, "capacity": resources},
    }


def devices_with(cards: int, *holders: TaskInfo, rules: Any = RULES) -> VgpuDevices:
    info = NodeInfo(name="test-node", matrix=NodeMatrix(), row=0, node=_node("test-node", cards))
    for holder in holders:
        info.tasks[holder.key] = holder
    return VgpuDevices([info], DEFAULT_NVIDIA, BINPACK, rules=rules)


def pod_a() -> TaskInfo:
    return exclusive_pod("pod-a", TRAINING, node="test-node", cards=(0,))


def pod_b() -> TaskInfo:
    return exclusive_pod("pod-b", INFERENCE, node="test-node", cards=(1,))


def test_reserved_gpus_for_pod() -> None:
    """TestReservedGPUsForPod: a new rule-0 pod sees only rule 0's card reserved (same rule
    only); a pod matching no rule sees none."""
    devices = devices_with(3, pod_a(), pod_b())
    assert devices.excluded_cards(exclusive_pod("pod-c", TRAINING), 0) == {0}
    assert devices.excluded_cards(exclusive_pod("pod-e", {"app": "serving"}), 0) == set()


def test_pod_matching_multiple_rules_sees_union_of_reserved_gpus() -> None:
    """TestPodMatchingMultipleRulesSeesUnionOfReservedGPUs."""
    devices = devices_with(3, pod_a(), pod_b())
    both = exclusive_pod("pod-x", {**TRAINING, **INFERENCE})
    assert devices.excluded_cards(both, 0) == {0, 1}


def test_non_matching_pod_does_not_reserve() -> None:
    """TestNonMatchingPodDoesNotReserve: a rule-less pod holding a card reserves nothing."""
    other = exclusive_pod("pod-x", {"app": "serving"}, node="test-node", cards=(0,))
    devices = devices_with(1, other)
    assert devices.excluded_cards(exclusive_pod("pod-c", TRAINING), 0) == set()
    assert devices.holder_rules == {}


def test_cap_gpus_only_affects_specified_indices() -> None:
    """TestCapGPUsOnlyAffectsSpecifiedIndices: the reserved cards (0 and 1) take no pod of
    the rule; the others (2 and 3) do, and the cards stay as they were."""
    devices = devices_with(
        4, pod_a(), exclusive_pod("pod-b2", TRAINING, node="test-node", cards=(1,))
    )
    node = devices.nodes[0]
    for _ in range(2):
        task = exclusive_pod(f"new-{_}", TRAINING, vgpus=1)
        result = devices.fit_on(task, 0)
        assert result.fits and result.devices[0][0].uuid in {"GPU-test-node-2", "GPU-test-node-3"}
    assert [node.cards[i].number for i in range(4)] == [10, 10, 10, 10]


def test_end_to_end_exclusive() -> None:
    """TestEndToEndExclusive: a training pod sees 3 cards (only its rule's card kept from
    it); an unrelated pod sees all 4."""
    devices = devices_with(4, pod_a(), pod_b())
    assert not devices.fit_on(exclusive_pod("pod-c", TRAINING, vgpus=4), 0).fits
    assert devices.fit_on(exclusive_pod("pod-c", TRAINING, vgpus=3), 0).fits
    assert devices.fit_on(exclusive_pod("pod-e", {"app": "serving"}, vgpus=4), 0).fits


def test_on_session_open_wraps_devices() -> None:
    """TestOnSessionOpenWrapsDevices: at session open, the card a rule-0 pod holds is rule
    0's, the other is not."""
    devices = devices_with(2, pod_a())
    assert devices.reserved[0, 0].tolist() == [True, False]
    assert not devices.reserved[1].any()


def test_allocation_and_release_update_the_reservations() -> None:
    devices = devices_with(2)
    first = exclusive_pod("first", TRAINING)
    second = exclusive_pod("second", TRAINING)
    assert devices.allocate(first, 0).fits
    held = devices.excluded_cards(second, 0)
    assert len(held) == 1
    assert devices.allocate(second, 0).fits
    assert devices.excluded_cards(exclusive_pod("third", TRAINING), 0) == {0, 1}
    assert not devices.mask(exclusive_pod("third", TRAINING)).passed[0]  # type: ignore[union-attr]
    devices.release(first.key)
    assert devices.excluded_cards(exclusive_pod("third", TRAINING), 0) == {0, 1} - held


# ---- vectorised mask and score == the scalar fit, with rules


@settings(max_examples=50, deadline=None)
@given(
    nodes=st.lists(
        st.tuples(
            st.integers(1, 4),
            st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0, 1, 2])), max_size=4),
        ),
        min_size=1,
        max_size=4,
    ),
    nums=st.integers(1, 3),
    labels=st.sampled_from([0, 1, 2]),
    policy=st.sampled_from([BINPACK, SPREAD, ""]),
)
def test_vectorised_mask_and_score_agree_with_the_scalar_fit(
    nodes: list[tuple[int, list[tuple[int, int]]]], nums: int, labels: int, policy: str
) -> None:
    label_sets = [TRAINING, INFERENCE, {"app": "serving"}]
    infos = []
    matrix = NodeMatrix()
    for row, (cards, holders) in enumerate(nodes):
        name = f"n{row}"
        info = NodeInfo(name=name, matrix=matrix, row=row, node=_node(name, cards, number=2))
        for h, (card, which) in enumerate(holders):
            holder = exclusive_pod(
                f"{name}-{h}", label_sets[which], node=name, cards=(card % cards,)
            )
            info.tasks[holder.key] = holder
        infos.append(info)
    devices = VgpuDevices(infos, DEFAULT_NVIDIA, policy, rules=RULES)
    check_vectorised_fit(
        devices,
        len(infos),
        lambda attempt: exclusive_pod(f"new-{attempt}", label_sets[labels], vgpus=nums),
    )


# ---- simulate


def test_simulate_keeps_rule_pods_on_separate_cards(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Two training pods land on different cards of one node; a serving pod shares."""
    documents = example_with("vgpu.yaml", {GPU_EXCLUSIVE_RULES: [TRAINING]})
    documents = [d for d in documents if d["kind"] != "Pod" and d["metadata"]["name"] != "gpu-2"]
    limits = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1000"}
    for name, labels in (("train-0", TRAINING), ("train-1", TRAINING), ("serve", {})):
        documents.append(limits_pod(name, limits, labels=labels))
    report = simulate(capsys, write_input(tmp_path, documents))
    cards = {
        name: report["pods"][f"default/{name}"]["annotations"]["volcano.sh/vgpu-ids-new"][:5]
        for name in ("train-0", "train-1", "serve")
    }
    assert {cards["train-0"], cards["train-1"]} == {"GPU-a", "GPU-b"}
