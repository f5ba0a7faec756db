"""`make test-deploy`: what a user installs, installed and run. deploy/base is rendered with
kubectl's kustomize and the Helm chart with `helm template` (both built from their Go modules,
scripts/deploy-test-bins.sh), applied with server-side apply to the real API server, and then
run as a cluster would run it, except that the processes are local and started by this test
(no kubelet here):

* the certificate Job's command, as the Job's ServiceAccount, makes the Secret and sets the
  caBundle of the shipped webhook configurations;
* the webhooks, scheduler and controllers run with their Deployments' arguments, each as its
  shipped ServiceAccount (a TokenRequest token, not admin), with the files their pods would
  mount (the ConfigMap's conf, the Secret's certificate);
* the API server calls the webhooks through the shipped Service (an EndpointSlice at this
  machine's address; the API server routes to endpoints) over TLS, trusting the generated CA:
  a Job comes back with its queue defaulted and an invalid Queue is refused;
* a gang Job of two is scheduled and runs, and no process met a 403.

Every workload's pod also passes the API server's PodSecurity admission at "restricted".
The Helm chart is installed in its own namespace under another release name, after the base's
objects are removed (its webhooks would refuse what nothing serves); the CRDs stay.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from test_controllers_process import job_manifest
from test_least_privilege import kubeconfig_for, service_account_token
from test_scheduler_process import bound, list_pods, wait_until

from e2e.controllers_process import ControllersProcess
from e2e.controlplane import REPO_ROOT, ApiError, ControlPlane, free_port
from e2e.scheduler_process import SchedulerProcess

pytestmark = pytest.mark.cluster

DEPLOY_BIN_DIR_ENV: Final = "VK8S_DEPLOY_BIN_DIR"
CHART: Final = REPO_ROOT / "deploy" / "helm" / "volcano-py"
HELM_NAMESPACE: Final = "volcano-py-helm"
HELM_RELEASE: Final = "vp"
ADMISSION: Final = "/apis/admissionregistration.k8s.io/v1"
QUEUES: Final = "/apis/scheduling.volcano.sh/v1beta1/queues"
# helm keeps no state for `template`; its cache and config stay out of the user's home.
HELM_ENV: Final = {
    "HELM_CACHE_HOME": "/tmp/vk8s-helm/cache",
    "HELM_CONFIG_HOME": "/tmp/vk8s-helm/config",
}


# ------------------------------------------------------------------------------ the tools


@dataclass(frozen=True)
class Tools:
    kubectl: Path
    helm: Path


@pytest.fixture(scope="module")
def tools() -> Tools:
    """kubectl and helm from ``VK8S_DEPLOY_BIN_DIR``. Missing: a failure in CI or wherever
    Go could build them (`make test-deploy` does), else a skip saying how to build them."""
    value = os.environ.get(DEPLOY_BIN_DIR_ENV, "").strip()
    found = Tools(Path(value) / "kubectl", Path(value) / "helm") if value else None
    if found and all(os.access(path, os.X_OK) for path in (found.kubectl, found.helm)):
        return found
    reason = (
        f"kubectl and helm are not built ({DEPLOY_BIN_DIR_ENV}={value!r}):"
        " make test-deploy builds them (scripts/deploy-test-bins.sh)"
    )
    if os.environ.get("CI", "").lower() == "true" or shutil.which("go"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def run(
    argv: list[str | Path], *, stdin: str | None = None, env: dict[str, str] | None = None
) -> str:
    result = subprocess.run(
        [str(arg) for arg in argv], input=stdin, capture_output=True, text=True, check=False,
        env={**os.environ, **(env or {})}, timeout=300,
    )  # fmt: skip
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, argv))} failed ({result.returncode}):\n"
                             f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")  # fmt: skip
    return result.stdout


def render_base(tools: Tools) -> str:
    return run([tools.kubectl, "kustomize", REPO_ROOT / "deploy" / "base"])


def render_chart(tools: Tools, *values: str) -> str:
    argv: list[str | Path] = [
        tools.helm, "template", HELM_RELEASE, CHART, "--namespace", HELM_NAMESPACE,
        "--include-crds",  # (the Kubernetes version assumed is the one helm was built with)
    ]  # fmt: skip
    for value in values:
        argv += ["--set", value]
    return run(argv, env=HELM_ENV)


def documents(rendered: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(rendered) if isinstance(doc, dict)]


# ------------------------------------------------------------------------------ the install


def host_address() -> str:
    """This machine's address other than loopback (an EndpointSlice may not hold 127/8)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the route
        address = str(probe.getsockname()[0])
    if address.startswith("127."):
        raise AssertionError("no non-loopback IPv4 address here for the webhooks' endpoint")
    return address


def env_value(container: dict[str, Any], namespace: str, text: str) -> str:
    """``$(VAR)`` in an argument as the kubelet expands it (the downward-API namespace)."""
    values = {"POD_NAMESPACE": namespace}
    for variable in container.get("env") or []:
        field = (variable.get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath")
        if field == "metadata.namespace":
            values[variable["name"]] = namespace
    return re.sub(r"\$\((\w+)\)", lambda m: values.get(m.group(1), m.group(0)), text)


@dataclass
class Install:
    """One rendered install applied: its objects by (kind, name), and the process helpers."""

    plane: ControlPlane
    tools: Tools
    rendered: str
    namespace: str
    workdir: Path

    def __post_init__(self) -> None:
        self.objects = {(d["kind"], d["metadata"]["name"]): d for d in documents(self.rendered)}

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [doc for (k, _), doc in self.objects.items() if k == kind]

    def container(self, kind: str, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        spec = self.objects[(kind, name)]["spec"]["template"]["spec"]
        return spec, spec["containers"][0]

    def _url(self, doc: dict[str, Any]) -> str:
        metadata = doc["metadata"]
        path = self.plane.resource_path(doc["apiVersion"], doc["kind"], metadata.get("namespace"))
        return f"{path}/{metadata['name']}"

    def _removable(self) -> list[dict[str, Any]]:
        """What cleanup removes: all but the CRDs and the namespace (no namespace controller
        runs here)."""
        return [
            doc for doc in documents(self.rendered)
            if doc["kind"] not in ("CustomResourceDefinition", "Namespace")
        ]  # fmt: skip

    def apply(self) -> None:
        """Server-side apply, after keeping a copy of every object it would change that
        other tests made (they grant the same ClusterRoles and Roles to their own users)."""
        self.saved: list[dict[str, Any]] = []
        for doc in self._removable():
            try:
                found = self.plane.request("GET", self._url(doc))
            except ApiError as error:
                if error.status != 404:
                    raise
                continue
            metadata = {k: v for k, v in found["metadata"].items()
                        if k in ("name", "namespace", "labels", "annotations")}  # fmt: skip
            self.saved.append({**found, "metadata": metadata})
        path = self.workdir / "rendered.yaml"
        path.write_text(self.rendered)
        run([self.tools.kubectl, "--kubeconfig", self.plane.kubeconfig, "apply", "--server-side",
             "--force-conflicts", "--field-manager=volcano-py-test", "-f", path])  # fmt: skip

    def kubeconfig_as(self, service_account: str) -> Path:
        token = service_account_token(self.plane, self.namespace, service_account)
        return kubeconfig_for(self.plane, token, self.workdir / f"{service_account}.kubeconfig")

    def args(
        self, kind: str, name: str, replace: dict[str, str], drop: tuple[str, ...] = ()
    ) -> list[str]:
        """The container's arguments, ``$(VAR)`` expanded, mounted paths replaced by local
        copies (``replace``: mount path -> local directory), flags in ``drop`` left out."""
        _, container = self.container(kind, name)
        found = []
        for arg in container.get("args") or []:
            if arg.split("=", 1)[0] in drop:
                continue
            arg = env_value(container, self.namespace, arg)
            for mount, local in replace.items():
                arg = arg.replace(mount, local)
            found.append(arg)
        return found

    def cleanup(self) -> None:
        """Everything applied except the CRDs and the namespace (no namespace controller runs
        here): the webhook configurations first, so nothing is refused meanwhile."""
        for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            for doc in self.of_kind(kind):
                with contextlib.suppress(ApiError):
                    self.plane.request(
                        "DELETE", f"{ADMISSION}/{kind.lower()}s/{doc['metadata']['name']}"
                    )
        path = self.workdir / "to-delete.yaml"
        path.write_text(yaml.safe_dump_all(self._removable()))
        with contextlib.suppress(AssertionError):
            run([self.tools.kubectl, "--kubeconfig", self.plane.kubeconfig, "delete",
                 "--ignore-not-found", "--wait=true", "--timeout=60s", "-f", path])  # fmt: skip
        for doc in getattr(self, "saved", []):  # put back what other tests had made
            path = self.plane.resource_path(
                doc["apiVersion"], doc["kind"], doc["metadata"].get("namespace")
            )
            self.plane.request("POST", path, doc)


class ShippedProcess(SchedulerProcess):
    """`volcano-py <command> <args>` exactly (no flags of the test's own), with a health
    port for readiness; started, probed, stopped and read as the other processes."""

    def __init__(self, workdir: Path, command: str, args: list[str], label: str) -> None:
        super().__init__(Path("unused"), workdir, label=label)
        self.argv = [sys.executable, "-m", "volcano_py", command, *args]


def run_certgen_job(install: Install, job_name: str) -> None:
    spec, container = install.container("Job", job_name)
    assert container["command"][0] == "volcano-py"
    kubeconfig = install.kubeconfig_as(spec["serviceAccountName"])
    args = [env_value(container, install.namespace, arg) for arg in container.get("args") or []]
    run([sys.executable, "-m", "volcano_py", *container["command"][1:], *args,
         f"--kubeconfig={kubeconfig}", "--wait=30s"])  # fmt: skip


def mounted_secret(install: Install, deployment: str, target: Path) -> str:
    """The Secret the Deployment mounts, written to ``target`` as the kubelet would; the
    mount path."""
    spec, container = install.container("Deployment", deployment)
    volume = next(v for v in spec["volumes"] if "secret" in v)
    mount = next(m for m in container["volumeMounts"] if m["name"] == volume["name"])
    secret = install.plane.request(
        "GET", f"/api/v1/namespaces/{install.namespace}/secrets/{volume['secret']['secretName']}"
    )
    target.mkdir(parents=True, exist_ok=True)
    for key, value in secret["data"].items():
        (target / key).write_bytes(base64.b64decode(value))
    return str(mount["mountPath"])


def mounted_config(install: Install, deployment: str, target: Path) -> str:
    spec, container = install.container("Deployment", deployment)
    volume = next(v for v in spec["volumes"] if "configMap" in v)
    mount = next(m for m in container["volumeMounts"] if m["name"] == volume["name"])
    config = install.plane.request(
        "GET", f"/api/v1/namespaces/{install.namespace}/configmaps/{volume['configMap']['name']}"
    )
    target.mkdir(parents=True, exist_ok=True)
    for key, value in config["data"].items():
        (target / key).write_text(value)
    return str(mount["mountPath"])


def point_service_at(install: Install, service: str, address: str, port: int) -> None:
    """An EndpointSlice of the Service with this process's address (as the EndpointSlice
    controller would write for a ready pod)."""
    port_name = install.objects[("Service", service)]["spec"]["ports"][0]["name"]
    install.plane.request(
        "POST", f"/apis/discovery.k8s.io/v1/namespaces/{install.namespace}/endpointslices",
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": f"{service}-test",
                      "labels": {"kubernetes.io/service-name": service}},
         "addressType": "IPv4",
         "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
         "ports": [{"name": port_name, "port": port, "protocol": "TCP"}]},
    )  # fmt: skip


def assert_pods_pass_restricted_pod_security(install: Install) -> None:
    """Each workload's pod, created with dryRun in the install namespace (labelled to
    enforce "restricted"), is admitted."""
    for kind in ("Deployment", "Job"):
        for workload in install.of_kind(kind):
            template = workload["spec"]["template"]
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": workload["metadata"]["name"],
                                "labels": template["metadata"].get("labels") or {}},
                   "spec": template["spec"]}  # fmt: skip
            install.plane.request(
                "POST", f"/api/v1/namespaces/{install.namespace}/pods", pod,
                params={"dryRun": "All"},
            )  # fmt: skip


# ------------------------------------------------------------------------------ the run


@dataclass(frozen=True)
class Names:
    """What an install calls its parts."""

    certgen_jobs: tuple[str, ...]
    webhooks: str
    webhooks_service: str
    scheduler: str
    controllers: str
    configurations: tuple[tuple[str, str], ...]


BASE_NAMES: Final = Names(
    ("volcano-py-webhooks-certgen",), "volcano-py-webhooks", "volcano-py-webhooks",
    "volcano-scheduler", "volcano-py-controllers",
    (("mutating", "volcano-py-webhooks-mutate"), ("validating", "volcano-py-webhooks-validate")),
)  # fmt: skip
CHART_NAMES: Final = Names(
    (f"{HELM_RELEASE}-admission-init-pre", f"{HELM_RELEASE}-admission-init-post"),
    f"{HELM_RELEASE}-admission", f"{HELM_RELEASE}-admission-service",
    f"{HELM_RELEASE}-scheduler", f"{HELM_RELEASE}-controllers",
    (("mutating", f"{HELM_RELEASE}-admission-service-mutating"),
     ("validating", f"{HELM_RELEASE}-admission-service-validating")),
)  # fmt: skip

ADDRESS_FLAGS: Final = ("--listen-address", "--healthz-address", "--metrics-address")


def start_processes(
    install: Install, names: Names, processes: list[SchedulerProcess]
) -> list[SchedulerProcess]:
    """Start the three shipped processes, each added to ``processes`` as soon as it runs, so
    the caller stops them even when a later one fails to come up."""
    work = install.workdir
    # The webhooks: the Secret as mounted, listening where the EndpointSlice points.
    mount = mounted_secret(install, names.webhooks, work / "certificates")
    # The resource groups of /pods/mutate (--admission-conf), from their ConfigMap.
    conf_mount = mounted_config(install, names.webhooks, work / "admission-config")
    address, port = host_address(), free_port()
    spec, _ = install.container("Deployment", names.webhooks)
    mounts = {mount: str(work / "certificates"), conf_mount: str(work / "admission-config")}
    args = install.args("Deployment", names.webhooks, mounts,
                        drop=(*ADDRESS_FLAGS, "--port"))  # fmt: skip
    webhooks = ShippedProcess(work, "webhooks", [], "webhooks-shipped")
    webhooks.argv += [
        *args, f"--kubeconfig={install.kubeconfig_as(spec['serviceAccountName'])}",
        f"--listen-address={address}", f"--port={port}",
        f"--metrics-address=127.0.0.1:{webhooks.metrics_port}",
        "--enable-healthz=true", f"--healthz-address=127.0.0.1:{webhooks.health_port}",
    ]  # fmt: skip
    processes.append(webhooks.start())
    point_service_at(install, names.webhooks_service, address, port)
    # Ready before the scheduler creates the default queue (which the webhooks admit).
    webhooks.wait_ready(timeout=90)
    # The scheduler: the ConfigMap as mounted.
    mount = mounted_config(install, names.scheduler, work / "scheduler-config")
    spec, _ = install.container("Deployment", names.scheduler)
    scheduler = SchedulerProcess(
        install.kubeconfig_as(spec["serviceAccountName"]), work,
        install.args("Deployment", names.scheduler, {mount: str(work / "scheduler-config")},
                     drop=ADDRESS_FLAGS),
        label="scheduler-shipped",
    )  # fmt: skip
    processes.append(scheduler.start())
    spec, _ = install.container("Deployment", names.controllers)
    controllers = ControllersProcess(
        install.kubeconfig_as(spec["serviceAccountName"]), work,
        install.args("Deployment", names.controllers, {}, drop=ADDRESS_FLAGS),
        label="controllers-shipped",
    )  # fmt: skip
    processes.append(controllers.start())
    for process in processes:
        process.wait_ready(timeout=90)
    return processes


def exercise(
    install: Install, names: Names, namespace: str, make_nodes: Callable[..., list[str]]
) -> None:
    plane = install.plane
    # The caBundle is the generated CA, in every webhook.
    secret_ca = (install.workdir / "certificates" / "ca.crt").read_bytes()
    for kind, name in names.configurations:
        configuration = plane.request("GET", f"{ADMISSION}/{kind}webhookconfigurations/{name}")
        bundles = {hook["clientConfig"].get("caBundle") for hook in configuration["webhooks"]}
        assert bundles == {base64.b64encode(secret_ca).decode()}, name
    # The API server calls the validating webhook over TLS: an invalid Queue is refused.
    wait_until("the default queue", lambda: _exists(plane, f"{QUEUES}/default"), timeout=60)
    bad = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
           "metadata": {"name": f"bad-{secrets.token_hex(3)}"},
           "spec": {"weight": 1, "capability": {"cpu": "1"},
                    "guarantee": {"resource": {"cpu": "2"}}}}  # fmt: skip
    with pytest.raises(ApiError) as refused:
        plane.request("POST", QUEUES, bad)
    assert "denied the request" in str(refused.value), refused.value
    # ... and the mutating one: a Job naming no queue gets "default"; a gang of 2 runs.
    make_nodes("cpu", 2)
    job = job_manifest("gang", "volcano")
    del job["spec"]["queue"]
    created = plane.create(job, namespace)
    assert created["spec"]["queue"] == "default"
    wait_until(
        "both gang members bound",
        lambda: len(bound(list_pods(plane, namespace))) == 2,
        timeout=90,
    )


def _exists(plane: ControlPlane, path: str) -> bool:
    try:
        plane.request("GET", path)
    except ApiError as error:
        if error.status == 404:
            return False
        raise
    return True


@pytest.fixture
def install_and_run(
    control_plane: ControlPlane, tools: Tools, tmp_path: Path
) -> Iterator[Callable[[str, str, Names], tuple[Install, list[SchedulerProcess]]]]:
    made: list[Install] = []
    running: list[SchedulerProcess] = []

    def make(rendered: str, namespace: str, names: Names) -> tuple[Install, list[SchedulerProcess]]:
        install = Install(control_plane, tools, rendered, namespace, tmp_path)
        made.append(install)
        install.apply()
        assert_pods_pass_restricted_pod_security(install)
        for job in names.certgen_jobs:
            run_certgen_job(install, job)
        start_processes(install, names, running)
        return install, running

    try:
        yield make
    finally:
        for process in running:
            process.stop()  # SIGTERM: the Leases are released for other tests' processes
        for install in made:
            install.cleanup()


def test_kustomize_base_installs_and_runs(
    install_and_run: Callable[[str, str, Names], tuple[Install, list[SchedulerProcess]]],
    tools: Tools,
    namespace: str,
    make_nodes: Callable[..., list[str]],
) -> None:
    rendered = render_base(tools)
    kinds = {doc["kind"] for doc in documents(rendered)}
    assert {"CustomResourceDefinition", "Namespace", "Job"} <= kinds
    install, processes = install_and_run(rendered, "volcano-system", BASE_NAMES)
    try:
        exercise(install, BASE_NAMES, namespace, make_nodes)
    except AssertionError as error:
        raise AssertionError(f"{error}\n" + "\n".join(p.log(30) for p in processes)) from None
    assert [p.forbidden() for p in processes] == [[], [], []]


def test_helm_chart_installs_and_runs(
    install_and_run: Callable[[str, str, Names], tuple[Install, list[SchedulerProcess]]],
    control_plane: ControlPlane,
    tools: Tools,
    namespace: str,
    make_nodes: Callable[..., list[str]],
) -> None:
    rendered = render_chart(tools, "custom.leader_elect_enable=true")
    with contextlib.suppress(ApiError):
        control_plane.create_namespace(HELM_NAMESPACE, {
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "latest",
        })  # fmt: skip
    install, processes = install_and_run(rendered, HELM_NAMESPACE, CHART_NAMES)
    try:
        exercise(install, CHART_NAMES, namespace, make_nodes)
    except AssertionError as error:
        raise AssertionError(f"{error}\n" + "\n".join(p.log(30) for p in processes)) from None
    assert [p.forbidden() for p in processes] == [[], [], []]


# ------------------------------------------------------------------------------ the chart


def _rules(rendered: str, kind: str, suffix: str) -> list[Any]:
    found = [doc for doc in documents(rendered)
             if doc["kind"] == kind and doc["metadata"]["name"].endswith(suffix)]  # fmt: skip
    assert len(found) == 1, (kind, suffix)
    return list(found[0]["rules"])


def test_chart_grants_what_the_base_grants(tools: Tools) -> None:
    """The chart's ClusterRoles and leader-election Roles are the base's, rule for rule."""
    base, chart = render_base(tools), render_chart(tools, "custom.leader_elect_enable=true")
    pairs = [
        ("ClusterRole", "volcano-scheduler", "-scheduler"),
        ("ClusterRole", "volcano-py-controllers", "-controllers"),
        ("ClusterRole", "volcano-py-webhooks", "-admission"),
        ("Role", "volcano-scheduler-leader-election", "-scheduler-leader-election"),
        ("Role", "volcano-py-controllers-leader-election", "-controllers-leader-election"),
    ]
    for kind, base_name, chart_suffix in pairs:
        assert _rules(chart, kind, chart_suffix) == _rules(base, kind, base_name), base_name


def test_chart_takes_volcano_values(tools: Tools, control_plane: ControlPlane) -> None:
    """Volcano chart values act on the processes' flags; a Volcano key without effect here
    is named in the install notes."""
    rendered = render_chart(
        tools, "custom.scheduler_kube_api_qps=77", "custom.scheduler_schedule_period=3s",
        "custom.leader_elect_enable=true", "custom.scheduler_name=my-sched",
        "custom.controller_worker_threads=9", "custom.enabled_admissions=/jobs/validate",
        "basic.image_registry=registry.example.com", "custom.scheduler_replicas=2",
    )  # fmt: skip
    objects = {(d["kind"], d["metadata"]["name"]): d for d in documents(rendered)}
    scheduler = objects[("Deployment", f"{HELM_RELEASE}-scheduler")]
    container = scheduler["spec"]["template"]["spec"]["containers"][0]
    assert scheduler["spec"]["replicas"] == 2
    assert container["image"] == "registry.example.com/volcano-py:0.1.0"
    for flag in ("--kube-api-qps=77", "--schedule-period=3s", "--leader-elect=true",
                 "--scheduler-name=my-sched"):  # fmt: skip
        assert flag in container["args"], flag
    controllers = objects[("Deployment", f"{HELM_RELEASE}-controllers")]
    assert "--worker-threads=9" in controllers["spec"]["template"]["spec"]["containers"][0]["args"]
    validating = objects[
        ("ValidatingWebhookConfiguration", f"{HELM_RELEASE}-admission-service-validating")
    ]
    assert [hook["name"] for hook in validating["webhooks"]] == ["validatejob.volcano.sh"]

    def notes(*extra: str) -> str:
        argv = [tools.helm, "install", HELM_RELEASE, CHART, "--dry-run=client", "--namespace",
                HELM_NAMESPACE, "--kubeconfig", str(control_plane.kubeconfig), *extra]  # fmt: skip
        return run(argv, env=HELM_ENV).split("NOTES:", 1)[1]

    warned = notes("--set", "custom.colocation_enable=true", "--set", "basic.agent_image_name=x")
    assert "custom.colocation_enable" in warned.split("WARNING", 1)[1]
    assert "basic.agent_image_name" in warned.split("WARNING", 1)[1]
    # A Volcano values file (keys at Volcano's defaults included) renders without a warning.
    volcano_values = Path(__file__).with_name("volcano-values.yaml")
    assert "WARNING" not in notes("-f", str(volcano_values))
    rendered = run(
        [tools.helm, "template", HELM_RELEASE, CHART, "-f", volcano_values], env=HELM_ENV
    )
    objects = {(d["kind"], d["metadata"]["name"]): d for d in documents(rendered)}
    scheduler = objects[("Deployment", f"{HELM_RELEASE}-scheduler")]
    pod = scheduler["spec"]["template"]["spec"]
    assert "--kube-api-qps=500" in pod["containers"][0]["args"]
    assert pod["tolerations"][0]["key"] == "dedicated"
    assert scheduler["metadata"]["labels"]["team"] == "batch"


# ------------------------------------------------------------------------------ the overlays


def render_overlay(tools: Tools, name: str) -> list[dict[str, Any]]:
    return documents(run([tools.kubectl, "kustomize", REPO_ROOT / "deploy" / "overlays" / name]))


def test_overlays_render_and_the_api_server_accepts_them(
    tools: Tools, control_plane: ControlPlane, tmp_path: Path
) -> None:
    """dev and production pass a server-side dry-run apply (schema, immutable fields,
    PodSecurity); cert-manager replaces the Job with cert-manager's objects (not applied:
    cert-manager's CRDs are not installed here)."""
    with contextlib.suppress(ApiError):
        control_plane.create_namespace("volcano-system")
    for name in ("dev", "production"):
        rendered = render_overlay(tools, name)
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump_all(rendered))
        run([tools.kubectl, "--kubeconfig", control_plane.kubeconfig, "apply", "--server-side",
             "--force-conflicts", "--dry-run=server", "--field-manager=volcano-py-test",
             "-f", path])  # fmt: skip
        deployments = [doc for doc in rendered if doc["kind"] == "Deployment"]
        assert len(deployments) == 3, name
        replicas = {doc["spec"]["replicas"] for doc in deployments}
        assert replicas == ({1} if name == "dev" else {2}), name
    production = render_overlay(tools, "production")
    assert sum(doc["kind"] == "PodDisruptionBudget" for doc in production) == 3
    dev = render_overlay(tools, "dev")
    scheduler = next(
        d for d in dev if d["kind"] == "Deployment" and d["metadata"]["name"] == "volcano-scheduler"
    )
    assert scheduler["spec"]["template"]["spec"]["containers"][0]["args"][-2:] == [
        "--leader-elect=false", "-v=4"
    ]  # fmt: skip
    with_cert_manager = render_overlay(tools, "cert-manager")
    names = {(doc["kind"], doc["metadata"]["name"]) for doc in with_cert_manager}
    assert not any("certgen" in name for _, name in names)
    assert ("Certificate", "volcano-py-webhooks") in names
    for doc in with_cert_manager:
        if doc["kind"].endswith("WebhookConfiguration"):
            annotations = doc["metadata"]["annotations"]
            assert annotations["cert-manager.io/inject-ca-from"] == (
                "volcano-system/volcano-py-webhooks-ca"
            )
