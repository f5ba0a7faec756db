"""``/pods/mutate`` and ``/pods/validate``: upstream's tests of pkg/webhooks/admission/pods
(mutate/mutate_pod_test.go TestMutatePods, validate/admit_pod_test.go TestValidatePod)
transcribed, the disruption budget checks of ``validateIntPercentageStr``, the admission
configuration's loading (errors naming the field, reload on change) and both routes over
HTTP."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from volcano_py.cli.main import parse_args
from volcano_py.controllers.pod_admission import (
    AdmissionConfError,
    budget_problem,
    mutate_pod,
    parse_admission_conf,
    validate_pod,
)
from volcano_py.operator.webhooks import jsonpatch
from volcano_py.operator.webhooks.admission_conf import AdmissionConfFile
from volcano_py.operator.webhooks.options import WebhookOptions
from volcano_py.operator.webhooks.server import build_app

Obj = dict[str, Any]

AFFINITY = (
    '{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":'
    '[{"matchExpressions":[{"key":"kubernetes.io/os","operator":"In","values":["linux"]}]}]}}}'
)

# TestMutatePods' admission configuration, as the volcano-admission.conf YAML it stands for.
UPSTREAM_CONF = f"""
resourceGroups:
- resourceGroup: management
  object:
    key: namespace
    value:
    - mng-ns-1
    - mng-ns-2
  schedulerName: default-scheduler
  tolerations:
  - key: mng-taint-1
    operator: Exists
    effect: NoSchedule
  affinity: '{AFFINITY}'
  labels:
    volcano.sh/nodetype: management
- resourceGroup: cpu
  object:
    key: annotation
    value:
    - "volcano.sh/resource-group: cpu"
  schedulerName: volcano
  labels:
    volcano.sh/nodetype: cpu
- resourceGroup: gpu
  schedulerName: volcano
  labels:
    volcano.sh/nodetype: gpu
"""


def pod(
    name: str, namespace: str = "", annotations: dict[str, str] | None = None, **spec: Any
) -> Obj:
    metadata: Obj = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": dict(spec)}


# (upstream case, pod, the spec after upstream's patch; None: no patch)
MUTATE_CASES = [
    (
        "test-1",
        pod("mng-pod", "mng-ns-1", schedulerName="default-scheduler"),
        {
            "nodeSelector": {"volcano.sh/nodetype": "management"},
            "affinity": json.loads(AFFINITY),
            "tolerations": [{"key": "mng-taint-1", "operator": "Exists", "effect": "NoSchedule"}],
            "schedulerName": "default-scheduler",
        },
    ),
    (
        "test-2",
        pod("cpu-pod", annotations={"volcano.sh/resource-group": "cpu"}),
        {"nodeSelector": {"volcano.sh/nodetype": "cpu"}, "schedulerName": "volcano"},
    ),
    (
        "test-3",
        pod("gpu-pod", annotations={"volcano.sh/resource-group": "gpu"}),
        {"nodeSelector": {"volcano.sh/nodetype": "gpu"}, "schedulerName": "volcano"},
    ),
    ("test-4", pod("normal-pod"), None),
]


@pytest.mark.parametrize(
    ("case", "obj", "spec"), MUTATE_CASES, ids=[case[0] for case in MUTATE_CASES]
)
def test_mutate_pods_upstream(case: str, obj: Obj, spec: Obj | None) -> None:
    """upstream TestMutatePods."""
    groups = parse_admission_conf(UPSTREAM_CONF).groups
    mutated = mutate_pod(obj, "", groups)
    if spec is None:
        assert mutated is None
        return
    assert mutated is not None
    assert mutated["spec"] == spec
    assert mutated["metadata"] == obj["metadata"]


def test_mutation_merges_with_what_the_pod_has() -> None:
    """``patchLabels`` merges (the group wins), ``patchTaintToleration`` appends, and
    ``patchAffinity`` leaves a pod's own affinity alone."""
    groups = parse_admission_conf(UPSTREAM_CONF).groups
    own_affinity = {"podAffinity": {}}
    obj = pod(
        "p",
        "mng-ns-2",
        nodeSelector={"zone": "a", "volcano.sh/nodetype": "x"},
        tolerations=[{"key": "own", "operator": "Exists"}],
        affinity=own_affinity,
    )
    mutated = mutate_pod(obj, "", groups)
    assert mutated is not None
    spec = mutated["spec"]
    assert spec["nodeSelector"] == {"zone": "a", "volcano.sh/nodetype": "management"}
    assert [t["key"] for t in spec["tolerations"]] == ["own", "mng-taint-1"]
    assert spec["affinity"] == own_affinity
    assert obj["spec"]["nodeSelector"]["volcano.sh/nodetype"] == "x"  # the input is untouched


def test_the_request_namespace_places_a_pod_without_one() -> None:
    """``Pods``: ``pod.Namespace`` defaults to the request's namespace."""
    groups = parse_admission_conf(UPSTREAM_CONF).groups
    assert mutate_pod(pod("p"), "mng-ns-1", groups) is not None
    assert mutate_pod(pod("p"), "other", groups) is None


def test_only_the_first_group_a_pod_belongs_to_applies() -> None:
    conf = parse_admission_conf(
        """
resourceGroups:
- resourceGroup: a
  object: {key: annotation, value: ["team: x"]}
  labels: {pool: a}
- resourceGroup: b
  object: {key: annotation, value: ["team: x"]}
  labels: {pool: b}
"""
    )
    mutated = mutate_pod(pod("p", annotations={"team": "x"}), "", conf.groups)
    assert mutated is not None and mutated["spec"]["nodeSelector"] == {"pool": "a"}


# ------------------------------------------------------------------------------ validation


# upstream TestValidatePod's one case, then the budget annotations.
DEFAULT = "default-scheduler"
VALIDATE_CASES = [
    ("validate default normal pod", pod("normal-pod-1", "test", schedulerName=DEFAULT), ""),
    ("a budget on another scheduler's pod is not ours to check",
     pod("p", "test", {"volcano.sh/jdb-min-available": "0"}, schedulerName=DEFAULT), ""),
    ("min-available as a positive integer",
     pod("p", "test", {"volcano.sh/jdb-min-available": "2"}, schedulerName="volcano"), ""),
    ("max-unavailable as a percentage",
     pod("p", "test", {"volcano.sh/jdb-max-unavailable": "30%"}, schedulerName="volcano"), ""),
    ("min-available zero",
     pod("p", "test", {"volcano.sh/jdb-min-available": "0"}, schedulerName="volcano"),
     'invalid value <"0"> for volcano.sh/jdb-min-available, it must be a positive integer'),
    ("max-unavailable 100%",
     pod("p", "test", {"volcano.sh/jdb-max-unavailable": "100%"}, schedulerName="volcano"),
     'invalid value <"100%"> for volcano.sh/jdb-max-unavailable, it must be a valid percentage'
     " which between 1% ~ 99%"),
    ("not a number",
     pod("p", "test", {"volcano.sh/jdb-min-available": "abc"}, schedulerName="volcano"),
     'invalid value strconv.Atoi: parsing "abc": invalid syntax for volcano.sh/jdb-min-available'),
    ("both annotations",
     pod("p", "test", {"volcano.sh/jdb-min-available": "1", "volcano.sh/jdb-max-unavailable": "1"},
         schedulerName="volcano"),
     "not allow configure multiple annotations <[volcano.sh/jdb-min-available"
     " volcano.sh/jdb-max-unavailable]> at same time"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "obj", "message"), VALIDATE_CASES, ids=[case[0] for case in VALIDATE_CASES]
)
def test_validate_pod(case: str, obj: Obj, message: str) -> None:
    """The first case is upstream TestValidatePod's ("validate default normal pod")."""
    assert validate_pod(obj, ["volcano"]) == message


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("1", True),
        ("+3", True),  # strconv.Atoi takes a sign
        ("-1", False),
        ("1%", True),
        ("99%", True),
        ("0%", False),
        ("%50", True),  # every % is dropped before Atoi
        ("5 0%", False),
        ("4294967296", False),  # intstr.FromInt wraps it to int32 0
        ("99999999999999999999", False),  # beyond int64: a string, then out of range
        ("", False),
    ],
)
def test_budget_values_as_validate_int_percentage_str(value: str, ok: bool) -> None:
    assert (budget_problem("k", value) == "") is ok


# ------------------------------------------------------------------------------ configuration


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("resourceGroups: {}", "resourceGroups: expected a list"),
        ("resourceGroups: [{object: {key: label}}]", "resourceGroups[0].object.key: 'label'"),
        ("resourceGroups: [{affinity: 'nope'}]", "resourceGroups[0].affinity: not JSON"),
        ("resourceGroups: [{labels: {a: 1}}]", "resourceGroups[0].labels: expected a map"),
        ("resourceGroups: [{tolerations: [{key: 1}]}]", "tolerations[0].key: expected a string"),
        ("resourceGroups: [{object: {value: ['- x']}}]", "object.value[0]: expected a map"),
        ("[1, 2", "not YAML"),
    ],
)
def test_a_bad_configuration_names_the_field(text: str, message: str) -> None:
    with pytest.raises(AdmissionConfError) as error:
        parse_admission_conf(text, source="conf")
    assert message in str(error.value)


def test_unknown_fields_are_warned_about() -> None:
    conf = parse_admission_conf("resourceGroups: [{resourceGroup: a, nodeSelector: {}}]\nx: 1")
    assert any("nodeSelector: unknown field" in warning for warning in conf.warnings)
    assert any("x: unknown field" in warning for warning in conf.warnings)


def test_the_file_is_reloaded_when_it_changes_and_a_bad_edit_keeps_the_last(
    tmp_path: Path,
) -> None:
    path = tmp_path / "volcano-admission.conf"
    path.write_text("resourceGroups: [{resourceGroup: a, labels: {pool: a}}]\n")
    conf = AdmissionConfFile(str(path))
    assert [group.name for group in conf.groups()] == ["a"]
    path.write_text("resourceGroups: [{resourceGroup: b}, {resourceGroup: c}]\n")
    os.utime(path, ns=(1, 10**18))
    assert [group.name for group in conf.groups()] == ["b", "c"]
    path.write_text("resourceGroups: {}\n")
    os.utime(path, ns=(1, 2 * 10**18))
    assert [group.name for group in conf.groups()] == ["b", "c"]


def test_a_bad_file_at_start_stops_the_webhooks_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from volcano_py.cli.webhooks import run

    path = tmp_path / "conf"
    path.write_text("resourceGroups: 3\n")
    cert = tmp_path / "cert"
    cert.write_text("x")
    args = parse_args(
        ["webhooks", "--tls-cert-file", str(cert), "--tls-private-key-file", str(cert),
         "--admission-conf", str(path)]
    )  # fmt: skip
    assert run(args) == 2
    err = capsys.readouterr().err
    assert "error:" in err


# ------------------------------------------------------------------------------ over HTTP


def review(obj: Obj, operation: str = "CREATE", namespace: str = "") -> Obj:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u1",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "operation": operation,
            "name": obj["metadata"]["name"],
            "namespace": namespace or obj["metadata"].get("namespace", ""),
            "object": obj,
        },
    }


def answer(path: str, body: Obj, options: WebhookOptions) -> Obj:
    async def go() -> Obj:
        app = build_app(None, options)  # type: ignore[arg-type]  # the pod routes read nothing
        async with TestClient(TestServer(app)) as client:
            reply = await client.post(path, data=json.dumps(body).encode())
            assert reply.status == 200
            result: Obj = (await reply.json())["response"]
            return result

    return asyncio.run(go())


def test_pods_mutate_over_http_patches_the_pod(tmp_path: Path) -> None:
    path = tmp_path / "conf"
    path.write_text(UPSTREAM_CONF)
    options = WebhookOptions(admission_conf=AdmissionConfFile(str(path)))
    obj = pod("cpu-pod", "ns", annotations={"volcano.sh/resource-group": "cpu"})
    response = answer("/pods/mutate", review(obj), options)
    assert response["allowed"] is True and response["patchType"] == "JSONPatch"
    patched = jsonpatch.apply(obj, json.loads(base64.b64decode(response["patch"])))
    assert patched["spec"] == {
        "nodeSelector": {"volcano.sh/nodetype": "cpu"},
        "schedulerName": "volcano",
    }
    # No configuration: allowed, untouched.
    plain = answer("/pods/mutate", review(obj), WebhookOptions())
    assert plain["allowed"] is True and "patch" not in plain


def test_pods_validate_over_http_refuses_a_bad_budget() -> None:
    obj = pod("p", "ns", {"volcano.sh/jdb-min-available": "0"}, schedulerName="volcano")
    response = answer("/pods/validate", review(obj), WebhookOptions())
    assert response["allowed"] is False
    assert "it must be a positive integer" in response["status"]["message"]
    other = WebhookOptions(scheduler_names=("other",))
    assert answer("/pods/validate", review(obj), other)["allowed"] is True


def test_only_create_is_admitted_as_upstream() -> None:
    obj = pod("p", "ns")
    for path in ("/pods/mutate", "/pods/validate"):
        response = answer(path, review(obj, "UPDATE"), WebhookOptions())
        assert response["allowed"] is False
        assert "expect operation to be 'CREATE'" in response["status"]["message"]
