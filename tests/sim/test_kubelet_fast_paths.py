"""The simulated kubelet's shortcuts give what the general code gives: pods that ask alike
share one QoS class (``qos._resources_key``), and a status with no condition to keep is made
without the general pass over old conditions (``SimKubelet._conditions``). Each runs both
ways here and compares."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api import qos
from volcano_py.controllers.raw import items, mapping, text
from volcano_py.sim.kubelet import _CONDITION_ORDER, SimKubelet, condition

_AMOUNTS = st.sampled_from(["1", "500m", "1Gi", "0", 1, 2.0, 0, True, None, "bad", "1000m"])
_NAMES = st.sampled_from(["cpu", "memory", "nvidia.com/gpu"])


@st.composite
def containers(draw: st.DrawFn) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for part in ("requests", "limits"):
        if draw(st.booleans()):
            resources[part] = draw(st.dictionaries(_NAMES, _AMOUNTS, max_size=3))
    return {"name": "c", "resources": resources}


@st.composite
def specs(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": draw(st.lists(containers(), max_size=3))}
    if draw(st.integers(0, 4)) == 0:
        spec["initContainers"] = draw(st.lists(containers(), min_size=1, max_size=2))
    return spec


@settings(max_examples=500, deadline=None)
@given(st.lists(specs(), min_size=1, max_size=6))
def test_pods_asking_alike_share_the_class_the_general_code_gives(
    pod_specs: list[dict[str, Any]],
) -> None:
    for spec in pod_specs + pod_specs:  # the second time from the memo
        assert qos.qos_class({"spec": spec}) == qos._qos_class(spec)


def test_an_int_and_true_are_not_taken_for_each_other() -> None:
    def pod(value: Any) -> dict[str, Any]:
        return {"spec": {"containers": [{"resources": {"limits": {"cpu": value}}}]}}

    assert qos.qos_class(pod(1)) == "Burstable"
    assert qos.qos_class(pod(True)) == qos._qos_class(pod(True)["spec"])


def _conditions_reference(
    old: Mapping[str, Any], phase: str, started: str, now: str
) -> list[dict[str, Any]]:
    """``SimKubelet._conditions`` before its shortcut (the general pass, for any old)."""
    kept = {text(mapping(c).get("type")): mapping(c) for c in items(old.get("conditions"))}
    scheduled = kept.get("PodScheduled")
    if scheduled is None or scheduled.get("status") != "True":
        scheduled = condition("PodScheduled", True, started)
    running = phase == "Running"
    finished_reason = "" if running else "PodCompleted"
    made = {
        "PodReadyToStartContainers": condition(
            "PodReadyToStartContainers", running, started if running else now
        ),
        "Initialized": condition("Initialized", True, started),
        "Ready": condition("Ready", running, started if running else now, finished_reason),
        "ContainersReady": condition(
            "ContainersReady", running, started if running else now, finished_reason
        ),
        "PodScheduled": dict(scheduled),
    }
    for kind in _CONDITION_ORDER:
        before = kept.get(kind)
        if before is not None and before.get("status") == made[kind]["status"]:
            made[kind]["lastTransitionTime"] = before.get(
                "lastTransitionTime", made[kind]["lastTransitionTime"]
            )
    others = [dict(c) for kind, c in kept.items() if kind not in made]
    return [made[kind] for kind in _CONDITION_ORDER] + others


_OLD_CONDITIONS = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from([*_CONDITION_ORDER, "DisruptionTarget"]),
            "status": st.sampled_from(["True", "False"]),
            "lastTransitionTime": st.sampled_from(["t0", "t1"]),
        }
    ),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.none(), st.just([]), _OLD_CONDITIONS),
    st.sampled_from(["Running", "Succeeded", "Failed"]),
    st.sampled_from(["t0", "t2"]),
)
def test_conditions_are_those_of_the_general_pass(
    old_conditions: list[dict[str, Any]] | None, phase: str, started: str
) -> None:
    old: dict[str, Any] = {"phase": "Pending"}
    if old_conditions is not None:
        old["conditions"] = old_conditions
    made = SimKubelet._conditions(old, phase, started, "t3")
    assert made == _conditions_reference(old, phase, started, "t3")
    # The same key order too (the YAML output writes keys as they come).
    assert [list(c) for c in made] == [
        list(c) for c in _conditions_reference(old, phase, started, "t3")
    ]


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["Running", "Succeeded", "Failed"]), st.sampled_from(["t0", "t2"]))
def test_first_conditions_from_the_memo_are_fresh_copies(phase: str, started: str) -> None:
    """Pods reported together share one made list (``_FIRST_CONDITIONS``): each gets its own
    copies, equal to the general pass's, which a later write to one pod's never reaches."""
    first = SimKubelet._conditions({"phase": "Pending"}, phase, started, "t3")
    second = SimKubelet._conditions({"phase": "Pending"}, phase, started, "t3")
    reference = _conditions_reference({"phase": "Pending"}, phase, started, "t3")
    assert first == second == reference
    assert [list(c) for c in second] == [list(c) for c in reference]
    assert all(a is not b for a, b in zip(first, second, strict=True))
    first[0]["status"] = "changed"
    assert SimKubelet._conditions({"phase": "Pending"}, phase, started, "t3") == reference


@settings(max_examples=200, deadline=None)
@given(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["c", "main", 3, None])},
        optional={"image": st.sampled_from(["busybox", "", None, 7])},
    ),
    st.sampled_from(["t0", "t2"]),
)
def test_a_first_running_container_status_is_the_general_one(
    container: dict[str, Any], started: str
) -> None:
    """``SimKubelet._first_running`` (no old status, Running) is ``_container``'s answer,
    the same keys in the same order."""
    kubelet = SimKubelet(seed=5)
    made = kubelet._first_running(container, "uid-1", started)
    general = kubelet._container(container, {}, "uid-1", started, "t3", "Running", None)
    assert made == general
    assert list(made) == list(general)
