"""Fixtures of the cluster tests: one real control plane per test session.

* ``control_plane`` (session): the running `e2e.controlplane.ControlPlane` (etcd,
  kube-apiserver, kwok on 127.0.0.1, our CRDs installed, no nodes). ``KUBECONFIG`` points at
  its admin kubeconfig while the session runs. ``VK8S_KEEP_WORKDIR=1`` keeps its temp dir
  (logs, kubeconfigs) after the session; ``VK8S_CRD_DIR`` installs CRDs from another
  directory than ``crds/`` (e.g. upstream Volcano's, to compare).
* ``kube`` (session): a `kubernetes.client.ApiClient` as admin. Read pods and nodes as raw
  JSON (``_preload_content=False``) where speed matters.
* ``namespace`` (function): a fresh namespace; afterwards its pods (grace 0) and our custom
  objects are deleted, so nothing it held occupies node capacity in later tests.
* ``make_nodes`` (function): ``make_nodes("gpu", 2, **kw) -> names``; kwok nodes of a pool
  ("cpu", "gpu", "npu"), Ready on return, with names unique to the test; deleted afterwards.
* ``make_node`` (function): ``make_node(role, capacity, labels=..., annotations=...) -> name``;
  one kwok node named ``<role>-<the namespace's last 6 characters>`` (not waited for: the test
  waits for its nodes together); deleted afterwards.
* ``delete_afterwards`` (function): ``delete_afterwards(path)``; the object at that API path
  is deleted after the test (for cluster-scoped objects and other namespaces than the test's).
* ``make_numatopology`` (function): ``make_numatopology(node, cpus_per_numa, policy)``; the
  node's Numatopology (`tests.device_objects.numatopology`); deleted afterwards.

A failing test gets the tail of each component's log in its report.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Callable, Generator, Iterator
from typing import Any

import pytest
from kubernetes.client import ApiClient

from e2e.controlplane import DEFAULT_CRD_DIR, ApiError, ControlPlane, bin_dir_from_env
from tests.device_objects import NUMATOPOLOGY_API, numatopology

MakeNodes = Callable[..., list[str]]
MakeNode = Callable[..., str]
MakeNumatopology = Callable[[str, int, str], None]
DeleteAfterwards = Callable[[str], None]


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    plane = ControlPlane(
        bin_dir_from_env(),
        crd_dir=os.environ.get("VK8S_CRD_DIR") or DEFAULT_CRD_DIR,
        keep_workdir=os.environ.get("VK8S_KEEP_WORKDIR") == "1",
    )
    with plane:
        saved = {key: os.environ.get(key) for key in ("KUBECONFIG", "NO_PROXY", "no_proxy")}
        os.environ["KUBECONFIG"] = str(plane.kubeconfig)
        for key in ("NO_PROXY", "no_proxy"):
            hosts = [h for h in os.environ.get(key, "").split(",") if h]
            os.environ[key] = ",".join([*hosts, "127.0.0.1", "localhost"])
        try:
            yield plane
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


@pytest.fixture(scope="session")
def kube(control_plane: ControlPlane) -> Iterator[ApiClient]:
    with control_plane.api_client() as client:
        yield client


def _unique_name(request: pytest.FixtureRequest, limit: int) -> str:
    stem = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")
    stem = stem.removeprefix("test-")[: limit - 7].strip("-") or "t"
    return f"{stem}-{secrets.token_hex(3)}"


@pytest.fixture
def namespace(control_plane: ControlPlane, request: pytest.FixtureRequest) -> Iterator[str]:
    name = _unique_name(request, 63)
    control_plane.create_namespace(name)
    try:
        yield name
    finally:
        control_plane.purge_namespace(name)


@contextlib.contextmanager
def _nodes_deleted_afterwards(control_plane: ControlPlane) -> Iterator[list[str]]:
    """A list to put the names of the nodes a test creates in; they are deleted at the end."""
    created: list[str] = []
    try:
        yield created
    finally:
        for name in created:
            control_plane.delete_node(name)


@pytest.fixture
def make_nodes(control_plane: ControlPlane, request: pytest.FixtureRequest) -> Iterator[MakeNodes]:
    prefix = _unique_name(request, 40)
    with _nodes_deleted_afterwards(control_plane) as created:

        def make(pool: str, count: int = 1, **kwargs: Any) -> list[str]:
            names = control_plane.create_pool_nodes(pool, count, prefix=prefix, **kwargs)
            created.extend(names)
            return names

        yield make


@pytest.fixture
def make_node(control_plane: ControlPlane, namespace: str) -> Iterator[MakeNode]:
    suffix = namespace[-6:]
    with _nodes_deleted_afterwards(control_plane) as created:

        def make(role: str, capacity: dict[str, str], **kwargs: Any) -> str:
            name = f"{role}-{suffix}"
            control_plane.create_node(name, capacity, **kwargs)
            created.append(name)
            return name

        yield make


@pytest.fixture
def delete_afterwards(control_plane: ControlPlane) -> Iterator[DeleteAfterwards]:
    paths: list[str] = []
    try:
        yield paths.append
    finally:
        for path in paths:
            with contextlib.suppress(ApiError):  # already gone
                control_plane.request("DELETE", path)


@pytest.fixture
def make_numatopology(
    control_plane: ControlPlane, delete_afterwards: DeleteAfterwards
) -> MakeNumatopology:
    def make(node: str, cpus_per_numa: int, policy: str) -> None:
        control_plane.create(numatopology(node, cpus_per_numa, policy))
        delete_afterwards(f"/apis/{NUMATOPOLOGY_API}/numatopologies/{node}")

    return make


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    if report.failed and isinstance(item, pytest.Function):
        plane = item.funcargs.get("control_plane")
        if isinstance(plane, ControlPlane):
            report.sections.append(("control plane logs", plane.logs(25)))
    return report
