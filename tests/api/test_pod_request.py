"""``pod_request``: what a pod (a plain Kubernetes dict) asks of a node (upstream
``GetPodResourceRequest``), with upstream's ``pod_info_test.go`` cases transcribed."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.resource import Resource, pod_request

Mi, Gi = 2**20, 2**30


def res(cpu: float = 0, memory: float = 0, **scalars: float) -> Resource:
    """cpu in millicores, memory in bytes, scalars in milli-units; ``pods: 1`` as every pod."""
    return Resource(
        milli_cpu=cpu,
        memory=memory,
        scalar_resources={"pods": 1, **{k.replace("_", "-"): v for k, v in scalars.items()}},
    )


def rl(cpu: str = "", memory: str = "", **scalars: str) -> dict[str, str]:
    """``BuildResourceList``: only the non-empty entries."""
    result = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    result.update({k.replace("_", "-"): v for k, v in scalars.items()})
    return result


def container(
    name: str = "",
    requests: dict[str, str] | None = None,
    *,
    limits: dict[str, str] | None = None,
    sidecar: bool = False,
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    result: dict[str, Any] = {"name": name, "resources": resources}
    if sidecar:
        result["restartPolicy"] = "Always"
    return result


def pod(
    containers: list[dict[str, Any]], inits: list[dict[str, Any]] | None = None, **spec: Any
) -> dict[str, Any]:
    return {"spec": {"containers": containers, "initContainers": inits or [], **spec}}


# ------------------------------------------------------------------ seed 000


def test_seed000_task_resource_requirements_worked_example() -> None:
    # Pod = max(sum(containers), max(initContainers)) per dimension.
    p = pod(
        [container("a", rl("500m", "1Gi")), container("b", rl("300m", "512Mi"))],
        [container("init-a", rl("1000m", "512Mi")), container("init-b", rl("200m", "2Gi"))],
    )
    assert pod_request(p) == res(1000, 2 * Gi)


def test_upstream_doc_comment_example() -> None:
    # The example on GetPodResourceRequest: IC1 2/1G, IC2 2/3G; C1 2/1G, C2 1/1G -> 3, 3G.
    p = pod(
        [container("c1", rl("2", "1G")), container("c2", rl("1", "1G"))],
        [container("ic1", rl("2", "1G")), container("ic2", rl("2", "3G"))],
    )
    assert pod_request(p) == res(3000, 3 * 10**9)


# ------------------------------------------------------------------ TestGetPodResourceRequest

GET_POD_RESOURCE_REQUEST = [
    pytest.param(
        pod([container(requests=rl("1000m", "1G")), container(requests=rl("2000m", "1G"))]),
        res(3000, 2 * 10**9),
        id="TestGetPodResourceRequest/0/without init containers",
    ),
    pytest.param(
        pod(
            [container(requests=rl("1000m", "1G")), container(requests=rl("2000m", "1G"))],
            [container(requests=rl("2000m", "5G")), container(requests=rl("2000m", "1G"))],
        ),
        res(3000, 5 * 10**9),
        id="TestGetPodResourceRequest/1/with init containers",
    ),
    pytest.param(
        pod(
            [container("container-1", {"cpu": "1"})],
            [container("restartable-init-1", {"cpu": "1"}, sidecar=True)],
        ),
        res(2000, 0),
        id="TestGetPodResourceRequest/2/restartable init container",
    ),
    pytest.param(
        pod(
            [container("container-1", {"cpu": "1"})],
            [
                container("init-1", {"cpu": "5"}),
                container("restartable-init-1", {"cpu": "1"}, sidecar=True),
                container("restartable-init-2", {"cpu": "2"}, sidecar=True),
                container("restartable-init-3", {"cpu": "3"}, sidecar=True),
            ],
        ),
        res(7000, 0),  # max(5, restartable (3+2+1) + regular (1)) = 7
        id="TestGetPodResourceRequest/3/multiple restartable init containers",
    ),
    pytest.param(
        pod(
            [container("container-1", {"cpu": "1"})],
            [
                container("init-1", {"cpu": "5"}),
                container("restartable-init-1", {"cpu": "1"}, sidecar=True),
                container("restartable-init-2", {"cpu": "2"}, sidecar=True),
                container("init-2", {"cpu": "5"}),
                container("restartable-init-3", {"cpu": "3"}, sidecar=True),
            ],
        ),
        # init-2 needs 5 + the restartable ones already running (1+2) = 8; the one starting
        # after it does not count.
        res(8000, 0),
        id="TestGetPodResourceRequest/4/multiple restartable and regular init containers",
    ),
    pytest.param(
        pod(
            [container("container-1", {"cpu": "100"})],
            [
                container("restartable-init-1", {"cpu": "10"}, sidecar=True),
                container("init-1", {"cpu": "200"}),
            ],
        ),
        res(210_000, 0),
        id="TestGetPodResourceRequest/5/restartable-init, init and regular",
    ),
    pytest.param(
        pod(
            [container("container-1", {"cpu": "100"})],
            [
                container("restartable-init-1", {"cpu": "10"}, sidecar=True),
                container("init-1", {"cpu": "200"}),
            ],
            resources={
                "requests": {
                    "cpu": "250",
                    "memory": "100Mi",
                    "hugepages-1Mi": "2Gi",
                    "hugepages-1Ki": "2Gi",
                }
            },
        ),
        res(250_000, 100 * Mi, hugepages_1Mi=2 * Gi * 1000, hugepages_1Ki=2 * Gi * 1000),
        id="TestGetPodResourceRequest/6/with pod-level resources",
    ),
    pytest.param(
        pod(
            [container("container-1", {"cpu": "100"})],
            [
                container("restartable-init-1", {"cpu": "10"}, sidecar=True),
                container("init-1", {"cpu": "200"}),
            ],
            overhead=rl("250", "100Mi"),
            resources={"requests": rl("250", "100Mi")},
        ),
        res(500_000, 200 * Mi),
        id="TestGetPodResourceRequest/7/with pod-level resources and overhead",
    ),
]


@pytest.mark.parametrize(("p", "expected"), GET_POD_RESOURCE_REQUEST)
def test_get_pod_resource_request(p: dict[str, Any], expected: Resource) -> None:
    # Upstream runs cases 0-4 with the PodLevelResources gate off and 5-7 with it on; it only
    # matters where the pod sets spec.resources (6, 7). Ours behaves as with the gate on (the
    # default from Kubernetes 1.34).
    assert pod_request(p) == expected


# --------------------------------------------- TestGetPodResourceWithoutInitContainers
# Upstream's cases for the init-less variant; these pods have no init containers, so the
# request vector is the same plus ``pods: 1``.

WITHOUT_INIT_CONTAINERS = [
    pytest.param(
        pod(
            [container(requests=rl("1000m", "1G")), container(requests=rl("2000m", "1G"))],
            overhead={"cpu": "500m", "memory": "1G"},
        ),
        res(3500, 3 * 10**9),
        id="TestGetPodResourceWithoutInitContainers/2/with overhead",
    ),
    pytest.param(
        pod(
            [container(requests=rl("1000m", "1G")), container(requests=rl("2000m", "1G"))],
            resources={
                "requests": {
                    "cpu": "4000m",
                    "memory": "4G",
                    "hugepages-1Mi": "2Gi",
                    "hugepages-1Ki": "2Gi",
                }
            },
        ),
        res(4000, 4 * 10**9, hugepages_1Mi=2 * Gi * 1000, hugepages_1Ki=2 * Gi * 1000),
        id="TestGetPodResourceWithoutInitContainers/3/pod-level greater than containers",
    ),
    pytest.param(
        pod(
            [container(requests=rl("1000m", "1G")), container(requests=rl("2000m", "1G"))],
            resources={"requests": rl("4000m")},
            overhead=rl("1000m", "1G"),
        ),
        res(5000, 3 * 10**9),  # pod-level cpu only; memory stays the containers' sum
        id="TestGetPodResourceWithoutInitContainers/4/pod-level and overhead",
    ),
]


@pytest.mark.parametrize(("p", "expected"), WITHOUT_INIT_CONTAINERS)
def test_get_pod_resource_without_init_containers_cases(
    p: dict[str, Any], expected: Resource
) -> None:
    assert pod_request(p) == expected


# ------------------------------------------------------------------ TestGetPodResourceWithResize


def resized(
    spec_req: dict[str, str],
    status_req: dict[str, str],
    condition: tuple[str, str] | None,
    pod_level: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [container("c1", spec_req)]}
    if pod_level is not None:
        spec["resources"] = {"requests": pod_level}
    status: dict[str, Any] = {
        "containerStatuses": [{"name": "c1", "resources": {"requests": status_req}}]
    }
    if condition is not None:
        status["conditions"] = [{"type": condition[0], "status": "True", "reason": condition[1]}]
    return {"spec": spec, "status": status}


RESIZE = [
    ("no pending resize", resized(rl("2", "2Gi"), rl("1", "1Gi"), None), res(2000, 2 * Gi)),
    (
        "pod-level resources and no pending resize",
        resized(rl("2", "2Gi"), rl("1", "1Gi"), None, rl("4", "4Gi")),
        res(4000, 4 * Gi),
    ),
    (
        "resize infeasible",
        resized(rl("2", "2Gi"), rl("1", "1Gi"), ("PodResizePending", "Infeasible")),
        res(1000, Gi),
    ),
    (
        "pod-level resources and resize infeasible",
        resized(rl("2", "2Gi"), rl("1", "1Gi"), ("PodResizePending", "Infeasible"), rl("4", "4Gi")),
        res(4000, 4 * Gi),
    ),
    (
        "resize in progress",
        resized(rl("1", "1Gi"), rl("1", "1Gi"), ("PodResizeInProgress", "Infeasible")),
        res(1000, Gi),
    ),
    (
        "pod-level resources and resize in progress",
        resized(
            rl("1", "1Gi"), rl("1", "1Gi"), ("PodResizeInProgress", "Infeasible"), rl("4", "4Gi")
        ),
        res(4000, 4 * Gi),
    ),
    (
        "resize deferred",
        resized(rl("2", "2Gi"), rl("1", "1Gi"), ("PodResizePending", "Deferred")),
        res(2000, 2 * Gi),
    ),
    (
        "pod-level resources and resize deferred",
        resized(rl("2", "2Gi"), rl("1", "1Gi"), ("PodResizePending", "Deferred"), rl("4", "4Gi")),
        res(4000, 4 * Gi),
    ),
]


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        pytest.param(p, e, id=f"TestGetPodResourceWithResize/{i}/{n}")
        for i, (n, p, e) in enumerate(RESIZE)
    ],
)
def test_get_pod_resource_with_resize(p: dict[str, Any], expected: Resource) -> None:
    # Upstream runs these with InPlacePodVerticalScaling and PodLevelResources on (both default
    # on in the Kubernetes release upstream builds against) and compares with Equal(.., Zero).
    assert pod_request(p) == expected


def test_resize_counts_allocated_resources() -> None:
    # determineContainerReqs: max(spec, reported, allocated); infeasible: max(reported, allocated).
    p = resized(rl("1", "1Gi"), rl("1", "1Gi"), None)
    p["status"]["containerStatuses"][0]["allocatedResources"] = rl("3", "512Mi")
    assert pod_request(p) == res(3000, Gi)
    p["status"]["conditions"] = [
        {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}
    ]
    p["spec"]["containers"][0]["resources"]["requests"] = rl("8", "8Gi")
    assert pod_request(p) == res(3000, Gi)


def test_resize_status_without_resources_uses_the_spec() -> None:
    p = resized(rl("2", "2Gi"), rl("1", "1Gi"), None)
    del p["status"]["containerStatuses"][0]["resources"]
    assert pod_request(p) == res(2000, 2 * Gi)
    p["status"]["containerStatuses"][0]["name"] = "other"
    assert pod_request(p) == res(2000, 2 * Gi)


def test_resize_applies_to_sidecars_not_to_regular_init_containers() -> None:
    p = pod(
        [container("main", {"cpu": "1"})],
        [container("init", {"cpu": "1"}), container("sidecar", {"cpu": "1"}, sidecar=True)],
    )
    p["status"] = {
        "initContainerStatuses": [
            {"name": "init", "resources": {"requests": {"cpu": "50"}}},
            {"name": "sidecar", "resources": {"requests": {"cpu": "2"}}},
        ]
    }
    # The sidecar runs at max(1, 2) = 2 beside main's 1; init's reported 50 is ignored.
    assert pod_request(p) == res(3000, 0)


# ------------------------------------------------------------------ our own cases


def test_empty_pod_requests_one_pod() -> None:
    expected = res()
    assert pod_request({}) == expected
    assert pod_request({"spec": {}}) == expected
    assert pod_request({"spec": {"containers": [{"name": "c"}]}}) == expected
    assert pod_request({"spec": {"containers": [{"name": "c", "resources": None}]}}) == expected
    assert pod_request({}).is_empty(), "best-effort: only pods"
    assert pod_request({}).max_task_num == 0, "pods: 1 is a scalar, not MaxTaskNum"


def test_limits_only_containers_request_their_limits() -> None:
    # The API server defaults a missing request to the limit (SetDefaults_Pod), per resource.
    p = pod(
        [
            container("a", limits={**rl("1", "1Gi"), "nvidia.com/gpu": "1"}),
            container("b", {"cpu": "500m"}, limits=rl("2", "2Gi")),
        ],
        [container("init", limits=rl("4", "256Mi"))],
    )
    gpu = {"nvidia.com/gpu": 1000.0}
    expected = Resource(4000, 3 * Gi, {**gpu, "pods": 1})
    assert pod_request(p) == expected


def test_limits_only_extended_resource() -> None:
    p = pod([container("a", limits={"nvidia.com/gpu": "2", "memory": "1Gi"})])
    assert pod_request(p) == Resource(0, Gi, {"nvidia.com/gpu": 2000, "pods": 1})


def test_overhead_adds_every_dimension() -> None:
    p = pod([container("a", rl("1", "1Gi"))], overhead={"cpu": "250m", "example.com/vf": "1"})
    assert pod_request(p) == Resource(1250, Gi, {"pods": 1, "example.com/vf": 1000})


def test_pod_level_only_overrides_supported_dimensions() -> None:
    # IsSupportedPodLevelResource: cpu, memory, hugepages-*; others stay the containers' own.
    p = pod(
        [container("a", {"cpu": "1", "nvidia.com/gpu": "1", "ephemeral-storage": "1Gi"})],
        resources={"requests": {"cpu": "2", "nvidia.com/gpu": "4", "ephemeral-storage": "2Gi"}},
    )
    assert pod_request(p) == Resource(
        2000, 0, {"pods": 1, "nvidia.com/gpu": 1000, "ephemeral-storage": Gi * 1000}
    )


def test_pod_level_limits_alone_change_nothing() -> None:
    # Only spec.resources.requests is read (the API server would have defaulted it).
    p = pod([container("a", {"cpu": "1"})], resources={"limits": {"cpu": "4"}})
    assert pod_request(p) == res(1000, 0)


def test_sidecar_adds_to_later_init_containers_and_to_the_sum() -> None:
    p = pod(
        [container("main", rl("1", "1Gi"))],
        [
            container("sidecar", rl("500m", "2Gi"), sidecar=True),
            container("migrate", rl("2", "512Mi")),
        ],
    )
    # running: main + sidecar = 1.5 cpu / 3Gi; migrate + sidecar = 2.5 cpu / 2.5Gi.
    assert pod_request(p) == res(2500, 3 * Gi)


def test_extended_resources_of_init_containers_take_the_max() -> None:
    p = pod(
        [container("a", {"nvidia.com/gpu": "1"}), container("b", {"nvidia.com/gpu": "1"})],
        [container("init", {"nvidia.com/gpu": "4", "example.com/fpga": "1"})],
    )
    assert pod_request(p) == Resource(
        0, 0, {"pods": 1, "nvidia.com/gpu": 4000, "example.com/fpga": 1000}
    )


def test_bad_quantity_names_resource_and_value() -> None:
    with pytest.raises(ValueError, match=r"'1.5.5'.*'memory'"):
        pod_request(pod([container("a", {"memory": "1.5.5"})]))


def test_pods_that_ask_alike_share_a_reading_but_not_the_resource():
    """``pod_request`` remembers plain pods' requests by what their containers ask; each pod
    gets its own copy, and a spelling that only compares equal (``True`` for 1) is not
    taken for another."""
    from volcano_py.api.quantity import QuantityError
    from volcano_py.api.resource import pod_request

    def plain(cpu: object) -> dict[str, object]:
        return {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}

    first, second = pod_request(plain(1)), pod_request(plain(1))
    assert first == second and first is not second
    first.milli_cpu = 5.0
    assert pod_request(plain(1)).milli_cpu == 1000.0
    with pytest.raises(QuantityError):
        pod_request(plain(True))
