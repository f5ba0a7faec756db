"""A real, throw-away Kubernetes control plane on loopback: etcd + kube-apiserver + kwok.

The binaries come from ``scripts/k8s-test-bins.sh`` (built from their Go modules, cached under
``~/.cache/vk8s-bin``); their directory is passed in or read from ``VK8S_BIN_DIR``.

What runs (all as subprocesses in their own sessions, each listening on 127.0.0.1 only):

* etcd with ``--unsafe-no-fsync`` and a data dir in the run's temp dir;
* kube-apiserver with envtest-style flags: our own CA and serving cert (made with openssl),
  token auth (an admin token in ``system:masters`` and a second token for the scheduler user,
  which has no rights until a test binds a role to it), RBAC, the ServiceAccount and
  TaintNodesByCondition admission plugins off (no controller-manager runs to satisfy them);
* kwok out-of-cluster, managing only nodes annotated ``kwok.x-k8s.io/node=fake``: it makes
  those nodes Ready, keeps their leases, and turns bound pods Running.

There is no kube-scheduler, no controller-manager and no kubelet: pods stay Pending until
somebody POSTs ``pods/binding``, exactly the path the scheduler under test uses. Deleting a
namespace leaves it Terminating (no namespace controller); ``purge_namespace`` removes what
matters for scheduling.

``python -m e2e.controlplane`` (``make cluster``) starts one with a few nodes per pool and keeps
it running until Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from kubernetes.client import ApiClient, Configuration

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CRD_DIR = REPO_ROOT / "crds"
BIN_DIR_ENV = "VK8S_BIN_DIR"
BINARIES = ("etcd", "kube-apiserver", "kwok")
BUILD_HINT = "kube-apiserver/etcd/kwok not built: run scripts/k8s-test-bins.sh (needs Go)"

ADMIN_USER = "admin"
SCHEDULER_USER = "volcano-scheduler"
CONTROLLERS_USER = "volcano-py-controllers"
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
POOL_LABEL = "volcano-py.io/pool"
LOOPBACK = "127.0.0.1"
SERVICE_CIDR = "10.96.0.0/24"
POD_CIDR = "10.244.0.0/16"

# Nodes, pods and leases are managed by kwok's built-in "fast" stages.
_KWOK_CONFIG = """\
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options: {}
"""


def load_yaml_documents(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The mapping documents of a YAML file (libyaml's loader when available: CRDs are big)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as stream:
        return [doc for doc in yaml.load_all(stream, Loader=loader) if isinstance(doc, dict)]


class ControlPlaneError(RuntimeError):
    """The control plane could not be started or did not behave; the message carries log tails."""


class ApiError(RuntimeError):
    """A non-2xx answer of the apiserver to `ControlPlane.request`."""

    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.body = body
        try:
            message = json.loads(body).get("message", body)
        except (ValueError, AttributeError):
            message = body
        super().__init__(f"{method} {path} -> {status}: {message}")


def bin_dir_from_env() -> Path | None:
    """The binary directory named by ``VK8S_BIN_DIR``, or None when unset or empty."""
    value = os.environ.get(BIN_DIR_ENV, "").strip()
    return Path(value) if value else None


def missing_binaries(bin_dir: str | os.PathLike[str] | None) -> list[str]:
    """Which of etcd, kube-apiserver and kwok are not executable in `bin_dir` (all if None)."""
    if bin_dir is None or not str(bin_dir):
        return list(BINARIES)
    base = Path(bin_dir)
    return [name for name in BINARIES if not os.access(base / name, os.X_OK)]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


# --------------------------------------------------------------------------------------------
# Node pools


@dataclass(frozen=True, slots=True)
class NodePool:
    """A kind of fake node: its capacity (= allocatable) and labels."""

    name: str
    capacity: Mapping[str, str]
    labels: Mapping[str, str] = field(default_factory=dict)


POOLS: dict[str, NodePool] = {
    "cpu": NodePool(
        name="cpu",
        capacity={"cpu": "32", "memory": "128Gi", "pods": "110", "ephemeral-storage": "500Gi"},
        labels={"node.kubernetes.io/instance-type": "cpu-32x128"},
    ),
    "gpu": NodePool(
        name="gpu",
        capacity={
            "cpu": "64",
            "memory": "512Gi",
            "pods": "110",
            "ephemeral-storage": "1Ti",
            "nvidia.com/gpu": "8",
        },
        labels={
            "node.kubernetes.io/instance-type": "gpu-8xa100",
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
            "nvidia.com/gpu.count": "8",
        },
    ),
    "npu": NodePool(
        name="npu",
        capacity={
            "cpu": "192",
            "memory": "768Gi",
            "pods": "110",
            "ephemeral-storage": "1Ti",
            "huawei.com/Ascend910": "8",
        },
        labels={
            "node.kubernetes.io/instance-type": "npu-8xascend910",
            "accelerator": "huawei-Ascend910",
        },
    ),
}


def node_manifest(
    name: str,
    capacity: Mapping[str, str],
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] = (),
    unschedulable: bool = False,
) -> dict[str, Any]:
    """A Node that kwok manages, with allocatable equal to capacity."""
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [dict(taint) for taint in taints]
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {
                KWOK_ANNOTATION: "fake",
                "node.alpha.kubernetes.io/ttl": "0",
                **(annotations or {}),
            },
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
                **(labels or {}),
            },
        },
        "spec": spec,
        "status": {"capacity": dict(capacity), "allocatable": dict(capacity)},
    }


def node_is_ready(node: Mapping[str, Any]) -> bool:
    conditions = node.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


# --------------------------------------------------------------------------------------------
# Processes


def _tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


class Process:
    """One managed subprocess in its own session, logging to a file.

    It gets SIGKILL when the Python process that started it dies (``setpriv --pdeathsig``
    where available), so a crashed test run leaves no apiserver behind.
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        env: Mapping[str, str],
        stop_timeout: float = 5.0,
    ) -> None:
        self.name = name
        self.stop_timeout = stop_timeout
        self.argv = list(argv)
        self.log_path = log_path
        self.env = dict(env)
        self.popen: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    @property
    def returncode(self) -> int | None:
        return self.popen.poll() if self.popen else None

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def start(self) -> None:
        if self.alive:
            return
        argv = self.argv
        setpriv = shutil.which("setpriv")
        if setpriv and sys.platform.startswith("linux"):
            argv = [setpriv, "--pdeathsig", "KILL", "--", *argv]
        with self.log_path.open("ab") as log:
            log.write(f"\n==== {time.strftime('%H:%M:%S')} start: {' '.join(self.argv)}\n".encode())
            log.flush()
            self.popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )

    def send_signal(self, signum: int) -> None:
        """Send `signum` to the process group (SIGSTOP/SIGCONT make a hung component)."""
        if self.popen is not None and self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signum)

    def pause(self) -> None:
        self.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.send_signal(signal.SIGCONT)

    def stop(self, timeout: float | None = None) -> None:
        """SIGTERM the process group, SIGKILL it after `timeout` (default `stop_timeout`)."""
        if self.popen is None:
            return
        timeout = self.stop_timeout if timeout is None else timeout
        popen = self.popen
        if popen.poll() is None:
            self.send_signal(signal.SIGCONT)
            self.send_signal(signal.SIGTERM)
            try:
                popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.send_signal(signal.SIGKILL)
                popen.wait(5)
        # Children of the group (none expected) must not outlive it either.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(popen.pid, signal.SIGKILL)

    def kill(self) -> None:
        """SIGKILL, no grace: a crash."""
        self.send_signal(signal.SIGKILL)
        if self.popen is not None:
            self.popen.wait(5)

    def tail(self, lines: int = 40) -> str:
        return _tail(self.log_path, lines)

    def listening(self) -> list[tuple[str, int]]:
        """The TCP addresses this process listens on (Linux, read from /proc)."""
        if not self.alive or self.pid is None:
            return []
        return listening_addresses(self.pid)


def _socket_inodes(pid: int) -> set[str]:
    inodes: set[str] = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    with contextlib.suppress(OSError):
        for fd in fd_dir.iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    return inodes


def _decode_proc_address(hex_address: str) -> tuple[str, int]:
    host_hex, port_hex = hex_address.split(":")
    raw = bytes.fromhex(host_hex)
    # /proc/net/tcp* stores each 32-bit word in host (little-endian) order.
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    family = socket.AF_INET if len(words) == 4 else socket.AF_INET6
    host = socket.inet_ntop(family, words)
    if host.startswith("::ffff:") and "." in host:
        host = host[7:]
    return host, int(port_hex, 16)


def listening_addresses(pid: int) -> list[tuple[str, int]]:
    """TCP sockets in LISTEN state owned by `pid`, as (host, port)."""
    inodes = _socket_inodes(pid)
    found: list[tuple[str, int]] = []
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
                cols = line.split()
                if len(cols) > 9 and cols[3] == "0A" and cols[9] in inodes:
                    found.append(_decode_proc_address(cols[1]))
    return sorted(set(found))


# --------------------------------------------------------------------------------------------
# The control plane


def _run(argv: Sequence[str], cwd: Path) -> None:
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ControlPlaneError(f"{' '.join(argv)} failed:\n{result.stderr}")


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    for key in ("NO_PROXY", "no_proxy"):
        existing = [p for p in env.get(key, "").split(",") if p]
        env[key] = ",".join([*existing, "127.0.0.1", "localhost"])
    return env


class ControlPlane:
    """etcd + kube-apiserver + kwok on 127.0.0.1, in a temp dir; a context manager.

    >>> with ControlPlane() as cp:                     # doctest: +SKIP
    ...     cp.create_pool_nodes("gpu", 2)
    ...     client = cp.api_client()

    After `start()`: `server` (https URL), `kubeconfig` (admin), `scheduler_kubeconfig`
    (the scheduler user, no rights until bound), `controllers_kubeconfig` (the controllers
    user, likewise), `ca_file`, `admin_token`, `scheduler_token`,
    `processes` (name -> `Process`), `workdir`, `startup_seconds` (phase -> seconds).
    """

    def __init__(
        self,
        bin_dir: str | os.PathLike[str] | None = None,
        *,
        crd_dir: str | os.PathLike[str] | None = DEFAULT_CRD_DIR,
        workdir: str | os.PathLike[str] | None = None,
        with_kwok: bool = True,
        keep_workdir: bool = False,
        apiserver_args: Sequence[str] = (),
        startup_timeout: float = 90.0,
    ) -> None:
        resolved = Path(bin_dir) if bin_dir is not None else bin_dir_from_env()
        missing = missing_binaries(resolved)
        if resolved is None or missing:
            raise ControlPlaneError(
                f"{BUILD_HINT} ({BIN_DIR_ENV}={resolved or ''!s}; missing: {', '.join(missing)})"
            )
        self.bin_dir: Path = resolved
        self.crd_dir = Path(crd_dir) if crd_dir is not None else None
        self._requested_workdir = Path(workdir) if workdir is not None else None
        self.with_kwok = with_kwok
        self.keep_workdir = keep_workdir
        self.apiserver_args = list(apiserver_args)
        self.startup_timeout = startup_timeout

        self.workdir = Path()
        self.admin_token = secrets.token_hex(16)
        self.scheduler_token = secrets.token_hex(16)
        self.scheduler_user = SCHEDULER_USER
        self.controllers_token = secrets.token_hex(16)
        self.ports: dict[str, int] = {}
        self.processes: dict[str, Process] = {}
        self.startup_seconds: dict[str, float] = {}
        self.installed_crds: list[dict[str, Any]] = []
        # Never route loopback requests through a proxy from the environment.
        self._http = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self._https = self._http
        self._resources: dict[tuple[str, str], tuple[str, bool]] = {}
        self._started = False
        self._owns_workdir = False

    # ---- paths and endpoints

    @property
    def server(self) -> str:
        return f"https://{LOOPBACK}:{self.ports['apiserver']}"

    @property
    def etcd_url(self) -> str:
        return f"http://{LOOPBACK}:{self.ports['etcd_client']}"

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "admin.kubeconfig"

    @property
    def scheduler_kubeconfig(self) -> Path:
        return self.workdir / "scheduler.kubeconfig"

    @property
    def controllers_kubeconfig(self) -> Path:
        """The controllers user (`volcano-py controllers`), no rights until bound."""
        return self.workdir / "controllers.kubeconfig"

    @property
    def ca_file(self) -> Path:
        return self.workdir / "pki" / "ca.crt"

    def env(self) -> dict[str, str]:
        """Environment variables for a client of this cluster (kubectl, helm, our CLI)."""
        return {"KUBECONFIG": str(self.kubeconfig)}

    # ---- lifecycle

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> ControlPlane:
        """Start everything, install the CRDs; raises ControlPlaneError with log tails."""
        if self._started:
            return self
        began = time.monotonic()
        self._prepare_workdir()
        self.startup_seconds["pki"] = time.monotonic() - began
        attempts = 3
        for attempt in range(1, attempts + 1):
            try:
                self._start_processes()
                break
            except ControlPlaneError as error:
                port_clash = any(
                    "address already in use" in p.tail(200) for p in self.processes.values()
                )
                self._stop_processes()
                if not port_clash or attempt == attempts:
                    self._cleanup_workdir()
                    raise
                print(f"control plane: port clash, retrying ({error})", file=sys.stderr)
        self._started = True
        try:
            if self.crd_dir is not None:
                mark = time.monotonic()
                self.install_crds(self.crd_dir)
                self.startup_seconds["crds"] = time.monotonic() - mark
        except BaseException:
            self.stop()
            raise
        self.startup_seconds["total"] = time.monotonic() - began
        return self

    def stop(self) -> None:
        """Kill the processes (kwok, apiserver, etcd) and remove the temp dir."""
        self._stop_processes()
        self._started = False
        self._cleanup_workdir()

    def _prepare_workdir(self) -> None:
        if self._requested_workdir is not None:
            self.workdir = self._requested_workdir
            self.workdir.mkdir(parents=True, exist_ok=True)
            self._owns_workdir = False
        else:
            self.workdir = Path(tempfile.mkdtemp(prefix="vk8s-"))
            self._owns_workdir = True
        # Every run starts from an empty etcd (a reused --workdir keeps only logs and files).
        shutil.rmtree(self.workdir / "etcd", ignore_errors=True)
        (self.workdir / "pki").mkdir(exist_ok=True)
        self._make_pki()
        tokens = self.workdir / "tokens.csv"
        tokens.write_text(
            f'{self.admin_token},{ADMIN_USER},{ADMIN_USER},"system:masters"\n'
            f"{self.scheduler_token},{SCHEDULER_USER},{SCHEDULER_USER}\n"
            f"{self.controllers_token},{CONTROLLERS_USER},{CONTROLLERS_USER}\n"
        )
        tokens.chmod(0o600)
        (self.workdir / "kwok.yaml").write_text(_KWOK_CONFIG)
        self._https = urllib.request.build_opener(
            urllib.request.ProxyHandler({}),
            urllib.request.HTTPSHandler(
                context=ssl.create_default_context(cafile=str(self.ca_file))
            ),
        )

    def _cleanup_workdir(self) -> None:
        if self._owns_workdir and not self.keep_workdir and self.workdir.name:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _make_pki(self) -> None:
        """A CA, a serving cert for 127.0.0.1/localhost, and the service-account key."""
        pki = self.workdir / "pki"
        openssl = shutil.which("openssl")
        if openssl is None:
            raise ControlPlaneError("openssl is needed to make the apiserver's certificates")
        (pki / "serving.ext").write_text(
            "basicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature\n"
            "extendedKeyUsage=serverAuth\n"
            "subjectKeyIdentifier=hash\n"
            "authorityKeyIdentifier=keyid,issuer\n"
            "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,"
            "DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.96.0.1\n"
        )
        # ECDSA P-256 keys: generated in milliseconds (RSA takes ~0.3 s each on a slow core).
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-sha256"]
        _run(
            [openssl, "req", "-x509", *ec, "-days", "30", "-subj", "/CN=vk8s-ca",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
             "-keyout", "ca.key", "-out", "ca.crt"],
            pki,
        )  # fmt: skip
        _run(
            [openssl, "req", *ec, "-subj", "/CN=kube-apiserver",
             "-keyout", "apiserver.key", "-out", "apiserver.csr"],
            pki,
        )  # fmt: skip
        _run(
            [openssl, "x509", "-req", "-sha256", "-days", "30", "-in", "apiserver.csr",
             "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-extfile", "serving.ext", "-out", "apiserver.crt"],
            pki,
        )  # fmt: skip
        _run(
            [openssl, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "sa.key"], pki
        )

    def _start_processes(self) -> None:
        self.processes.clear()
        self.ports = {
            name: free_port() for name in ("etcd_client", "etcd_peer", "apiserver", "kwok")
        }
        env = _child_env()
        logs = self.workdir / "logs"
        logs.mkdir(exist_ok=True)

        mark = time.monotonic()
        # etcd's graceful stop waits ~7 s for the apiserver's gRPC streams; its data is
        # throw-away, so it gets 2 s.
        self.processes["etcd"] = Process(
            "etcd", self._etcd_argv(), logs / "etcd.log", env, stop_timeout=2.0
        )
        self.processes["etcd"].start()
        self._wait(
            "etcd health",
            lambda: self._http_ok(f"{self.etcd_url}/health", expect=b'"health":"true"'),
            timeout=30,
        )
        self.startup_seconds["etcd"] = time.monotonic() - mark

        mark = time.monotonic()
        self.processes["kube-apiserver"] = Process(
            "kube-apiserver", self._apiserver_argv(), logs / "kube-apiserver.log", env
        )
        self.processes["kube-apiserver"].start()
        self.wait_ready()
        self.startup_seconds["kube-apiserver"] = time.monotonic() - mark
        self._write_kubeconfigs()

        if self.with_kwok:
            mark = time.monotonic()
            self.processes["kwok"] = Process("kwok", self._kwok_argv(), logs / "kwok.log", env)
            self.processes["kwok"].start()
            self._wait(
                "kwok health",
                lambda: self._http_ok(f"http://{LOOPBACK}:{self.ports['kwok']}/healthz"),
                timeout=30,
            )
            self.startup_seconds["kwok"] = time.monotonic() - mark

    def _stop_processes(self) -> None:
        for name in ("kwok", "kube-apiserver", "etcd"):
            process = self.processes.get(name)
            if process is not None:
                process.stop()

    # ---- command lines

    def _etcd_argv(self) -> list[str]:
        client = f"http://{LOOPBACK}:{self.ports['etcd_client']}"
        peer = f"http://{LOOPBACK}:{self.ports['etcd_peer']}"
        return [
            str(self.bin_dir / "etcd"),
            "--name=vk8s",
            f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=vk8s={peer}",
            "--unsafe-no-fsync=true",
            "--log-level=warn",
        ]

    def _apiserver_argv(self) -> list[str]:
        pki = self.workdir / "pki"
        port = self.ports["apiserver"]
        return [
            str(self.bin_dir / "kube-apiserver"),
            f"--etcd-servers={self.etcd_url}",
            f"--bind-address={LOOPBACK}",
            f"--advertise-address={LOOPBACK}",
            f"--secure-port={port}",
            f"--cert-dir={pki}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            f"--service-account-issuer=https://{LOOPBACK}:{port}",
            f"--service-account-key-file={pki / 'sa.key'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--token-auth-file={self.workdir / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
            # The default reconciler would write 127.0.0.1 into the `kubernetes` Endpoints,
            # which validation rejects (loopback), logging an error every few seconds.
            "--endpoint-reconciler-type=none",
            # Close open watches on SIGTERM; else shutdown waits 60 s for them (kwok's, ours).
            "--shutdown-watch-termination-grace-period=2s",
            "--allow-privileged=true",
            # A webhook's Service is reached at an address of its EndpointSlice (there is no
            # kube-proxy for a ClusterIP): tests/cluster/test_deploy_install.py points the
            # shipped webhooks Service at the webhooks process this way.
            "--enable-aggregator-routing=true",
            "--profiling=false",
            "--v=1",
            *self.apiserver_args,
        ]

    def _kwok_argv(self) -> list[str]:
        return [
            str(self.bin_dir / "kwok"),
            f"--config={self.workdir / 'kwok.yaml'}",
            f"--kubeconfig={self.kubeconfig}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
            "--manage-nodes-with-label-selector=",
            "--manage-single-node=",
            f"--cidr={POD_CIDR}",
            "--node-ip=10.244.0.1",
            "--node-lease-duration-seconds=40",
            f"--server-address={LOOPBACK}:{self.ports['kwok']}",
        ]

    def _write_kubeconfigs(self) -> None:
        for path, user, token in (
            (self.kubeconfig, ADMIN_USER, self.admin_token),
            (self.scheduler_kubeconfig, SCHEDULER_USER, self.scheduler_token),
            (self.controllers_kubeconfig, CONTROLLERS_USER, self.controllers_token),
        ):
            config = {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "vk8s",
                        "cluster": {
                            "server": self.server,
                            "certificate-authority": str(self.ca_file),
                        },
                    }
                ],
                "users": [{"name": user, "user": {"token": token}}],
                "contexts": [
                    {
                        "name": "vk8s",
                        "context": {"cluster": "vk8s", "user": user, "namespace": "default"},
                    }
                ],
                "current-context": "vk8s",
            }
            path.write_text(yaml.safe_dump(config, sort_keys=False))
            path.chmod(0o600)

    # ---- waiting and diagnostics

    def logs(self, lines: int = 40) -> str:
        """The last `lines` lines of each process's log."""
        parts = []
        for name, process in self.processes.items():
            state = "running" if process.alive else f"exited {process.returncode}"
            parts.append(f"---- {name} ({state}) {process.log_path}\n{process.tail(lines)}")
        return "\n".join(parts)

    def _wait(self, what: str, probe: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            for process in self.processes.values():
                if not process.alive:
                    raise ControlPlaneError(
                        f"{process.name} exited (code {process.returncode})"
                        f" while waiting for {what}\n{self.logs()}"
                    )
            if probe():
                return
            if time.monotonic() > deadline:
                raise ControlPlaneError(
                    f"timed out after {timeout:.0f}s waiting for {what}\n{self.logs()}"
                )
            time.sleep(0.1)

    def _http_ok(self, url: str, *, expect: bytes | None = None, token: str | None = None) -> bool:
        request = urllib.request.Request(url)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            opener = self._https if url.startswith("https") else self._http
            with opener.open(request, timeout=5) as response:
                body: bytes = response.read()
                return response.status == 200 and (expect is None or expect in body)
        except (OSError, urllib.error.URLError, ssl.SSLError):
            return False

    def wait_ready(self, timeout: float | None = None) -> None:
        """Wait for the apiserver's /readyz (also after a restart)."""
        self._wait(
            "kube-apiserver /readyz",
            lambda: self._http_ok(f"{self.server}/readyz", token=self.admin_token),
            timeout=timeout or self.startup_timeout,
        )

    def restart(self, name: str, *, kill: bool = False) -> None:
        """Stop (or SIGKILL) one component and start it again on the same ports and data."""
        process = self.processes[name]
        if kill:
            process.kill()
        else:
            process.stop()
        process.start()
        if name == "kube-apiserver":
            self.wait_ready()
            self.wait_crds_served()
        elif name == "etcd":
            self._wait(
                "etcd health",
                lambda: self._http_ok(f"{self.etcd_url}/health", expect=b'"health":"true"'),
                timeout=30,
            )

    def listening(self) -> dict[str, list[tuple[str, int]]]:
        """Each process's listening TCP addresses (to prove they are all on loopback)."""
        return {name: process.listening() for name, process in self.processes.items()}

    # ---- API access

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, str] | None = None,
        token: str | None = None,
        content_type: str = "application/json",
        timeout: float = 30.0,
    ) -> Any:
        """One JSON request to the apiserver as admin (or as `token`); raises ApiError."""
        url = self.server + path
        if params:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(params)
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Authorization", f"Bearer {token or self.admin_token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", content_type)
        try:
            with self._https.open(request, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")
            raise ApiError(method, path, error.code, detail) from None
        return json.loads(raw) if raw else None

    def configuration(self, token: str | None = None) -> Configuration:
        """A kubernetes-client Configuration for this cluster (admin unless `token`)."""
        from kubernetes.client import Configuration

        config = Configuration()
        config.host = self.server
        config.ssl_ca_cert = str(self.ca_file)
        config.verify_ssl = True
        config.api_key = {"authorization": f"Bearer {token or self.admin_token}"}
        config.proxy = None  # never route loopback through an environment proxy
        return config

    def api_client(self, token: str | None = None) -> ApiClient:
        """A kubernetes-client ApiClient (close it, or use it as a context manager)."""
        from kubernetes.client import ApiClient

        return ApiClient(self.configuration(token))

    def resource_path(
        self, api_version: str, kind: str, namespace: str | None = None, name: str | None = None
    ) -> str:
        """The REST path of a kind (found through discovery), e.g. ("scheduling.volcano.sh/
        v1beta1", "PodGroup", "ns") -> /apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups.
        A namespaced kind without `namespace` gives the all-namespaces path."""
        key = (api_version, kind)
        if key not in self._resources:
            base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            for resource in self.request("GET", base)["resources"]:
                if "/" not in resource["name"]:
                    entry = (resource["name"], bool(resource["namespaced"]))
                    self._resources[(api_version, resource["kind"])] = entry
            if key not in self._resources:
                raise ControlPlaneError(f"the apiserver serves no {kind} in {api_version}")
        plural, namespaced = self._resources[key]
        base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        path = (
            f"{base}/namespaces/{namespace}/{plural}"
            if namespaced and namespace
            else (f"{base}/{plural}")
        )
        return f"{path}/{name}" if name else path

    def create(self, manifest: Mapping[str, Any], namespace: str | None = None) -> dict[str, Any]:
        """POST one manifest as written (any kind the apiserver serves, our CRDs included);
        a namespaced object goes to `namespace`, else to its own metadata.namespace or
        "default". Returns the created object."""
        api_version, kind = manifest["apiVersion"], manifest["kind"]
        target = namespace or manifest.get("metadata", {}).get("namespace") or "default"
        path = self.resource_path(api_version, kind, target)
        created: dict[str, Any] = self.request("POST", path, manifest)
        return created

    # ---- CRDs

    def install_crds(self, crd_dir: str | os.PathLike[str], timeout: float = 60.0) -> list[str]:
        """Create (or update) every CRD in `crd_dir`/*.yaml and wait until each is Established
        and its resources are served. Returns the CRD names."""
        documents = [
            doc
            for path in sorted(Path(crd_dir).glob("*.y*ml"))
            for doc in load_yaml_documents(path)
            if doc.get("kind") == "CustomResourceDefinition"
        ]
        base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        for doc in documents:
            name = doc["metadata"]["name"]
            try:
                self.request("POST", base, doc)
            except ApiError as error:
                if error.status != 409:
                    raise
                current = self.request("GET", f"{base}/{name}")
                version = current["metadata"]["resourceVersion"]
                doc = {**doc, "metadata": {**doc["metadata"], "resourceVersion": version}}
                self.request("PUT", f"{base}/{name}", doc)
        names = [doc["metadata"]["name"] for doc in documents]
        self.wait_crds_established(names, timeout)
        self.installed_crds.extend(doc for doc in documents if doc not in self.installed_crds)
        self.wait_crds_served(timeout)
        if documents:
            self._warm_up_custom_resources(documents[0])
        return names

    def _warm_up_custom_resources(self, crd: Mapping[str, Any]) -> None:
        """The apiserver's first write of any custom object costs ~2 s (lazy set-up); pay it
        now with a server-side dry run, so tests' timings don't include it."""
        spec = crd["spec"]
        version = next(v["name"] for v in spec["versions"] if v.get("served", True))
        api_version = f"{spec['group']}/{version}"
        namespace = "default" if spec.get("scope") == "Namespaced" else None
        body = {"apiVersion": api_version, "kind": spec["names"]["kind"],
                "metadata": {"name": "vk8s-warm-up"}}  # fmt: skip
        path = self.resource_path(api_version, spec["names"]["kind"], namespace)
        with contextlib.suppress(ApiError):  # invalid is fine: the set-up happened
            self.request("POST", path, body, params={"dryRun": "All"})

    def wait_crds_served(self, timeout: float = 60.0) -> None:
        """Wait until a LIST of every installed custom resource answers 200 (right after
        /readyz the apiserver may still answer 404 or 429 "storage is (re)initializing")."""
        for doc in self.installed_crds:
            spec = doc["spec"]
            for version in spec.get("versions", []):
                if version.get("served", True):
                    path = f"/apis/{spec['group']}/{version['name']}/{spec['names']['plural']}"
                    self._wait(f"{path} served", functools.partial(self._served, path), timeout)

    def _served(self, path: str) -> bool:
        try:
            self.request("GET", path, params={"limit": "1"})
        except ApiError:
            return False
        return True

    def wait_crds_established(self, names: Iterable[str], timeout: float = 60.0) -> None:
        base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        pending = set(names)

        def probe() -> bool:
            for name in list(pending):
                crd = self.request("GET", f"{base}/{name}")
                conditions = crd.get("status", {}).get("conditions") or []
                if any(
                    c.get("type") == "Established" and c.get("status") == "True" for c in conditions
                ):
                    pending.discard(name)
            return not pending

        self._wait(f"CRDs Established ({', '.join(sorted(pending))})", probe, timeout)

    # ---- nodes

    def create_node(
        self,
        name: str,
        capacity: Mapping[str, str],
        *,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, str]] = (),
        unschedulable: bool = False,
    ) -> dict[str, Any]:
        """Create one kwok node (allocatable = capacity); returns the created Node JSON."""
        body = node_manifest(
            name,
            capacity,
            labels=labels,
            annotations=annotations,
            taints=taints,
            unschedulable=unschedulable,
        )
        created: dict[str, Any] = self.request("POST", "/api/v1/nodes", body)
        return created

    def create_pool_nodes(
        self,
        pool: str | NodePool,
        count: int,
        *,
        prefix: str | None = None,
        labels: Mapping[str, str] | None = None,
        capacity: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, str]] = (),
        wait: bool = True,
        timeout: float = 60.0,
    ) -> list[str]:
        """Create `count` nodes of a pool ("cpu", "gpu", "npu" or a NodePool), named
        ``<prefix>-<pool>-<i>`` (prefix defaults to none), labelled ``volcano-py.io/pool``;
        `capacity` overrides entries of the pool's. Waits until they are Ready unless told not."""
        node_pool = POOLS[pool] if isinstance(pool, str) else pool
        stem = f"{prefix}-{node_pool.name}" if prefix else node_pool.name
        names = [f"{stem}-{index}" for index in range(count)]
        for name in names:
            self.create_node(
                name,
                {**node_pool.capacity, **(capacity or {})},
                labels={POOL_LABEL: node_pool.name, **node_pool.labels, **(labels or {})},
                taints=taints,
            )
        if wait:
            self.wait_nodes_ready(names, timeout)
        return names

    def wait_nodes_ready(
        self, names: Iterable[str], timeout: float = 60.0
    ) -> dict[str, dict[str, Any]]:
        """Wait until kwok reports every named node Ready; returns them by name."""
        pending = set(names)
        ready: dict[str, dict[str, Any]] = {}

        def probe() -> bool:
            nodes = self.request("GET", "/api/v1/nodes")["items"]
            for node in nodes:
                name = node["metadata"]["name"]
                if name in pending and node_is_ready(node):
                    ready[name] = node
                    pending.discard(name)
            return not pending

        self._wait("kwok nodes Ready", probe, timeout)
        return ready

    def delete_node(self, name: str) -> None:
        with contextlib.suppress(ApiError):
            self.request("DELETE", f"/api/v1/nodes/{name}")

    # ---- namespaces

    def create_namespace(self, name: str, labels: Mapping[str, str] | None = None) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": dict(labels or {})},
        }
        self.request("POST", "/api/v1/namespaces", body)

    def open_queues(self, *names: str, timeout: float = 30.0) -> None:
        """Set each Queue without a state Open, as the queue controller does (for a scheduler
        run with no controllers): the proportion and capacity plugins, Volcano's and ours,
        allocate nothing in a queue whose state is not Open. Waits up to ``timeout`` for a
        queue to exist (the scheduler creates root and default as it starts)."""
        for name in names:
            path = f"/apis/scheduling.volcano.sh/v1beta1/queues/{name}"
            deadline = time.monotonic() + timeout
            while True:
                try:
                    queue = self.request("GET", path)
                    break
                except ApiError as error:
                    if error.status != 404 or time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            if not (queue.get("status") or {}).get("state"):
                self.request(
                    "PATCH",
                    f"{path}/status",
                    {"status": {"state": "Open"}},
                    content_type="application/merge-patch+json",
                )

    def purge_namespace(self, name: str) -> None:
        """Delete the namespace, then its pods (grace 0, no kubelet waits for them) and its
        custom objects of our namespaced CRDs. It stays Terminating (no namespace controller
        runs), but nothing in it occupies node capacity or asks a scheduler for anything.

        The namespace goes first, as the namespace controller does it: once Terminating it
        takes no new object, so a controller still running (a test's processes stop after
        its namespace fixture) cannot recreate a pod or a PodGroup behind the purge. Such a
        straggler lived on and every later scheduler wrote events about it, answered 403
        ("being terminated"), which least-privilege checks count."""
        with contextlib.suppress(ApiError):
            self.request("DELETE", f"/api/v1/namespaces/{name}")
        zero = {"gracePeriodSeconds": "0"}
        with contextlib.suppress(ApiError):
            # Hundreds of pods (the fault tests' 500-pod job) on a busy machine take longer
            # than a request's usual 30 s to delete.
            self.request(
                "DELETE", f"/api/v1/namespaces/{name}/pods", params=zero, timeout=180.0
            )
        for crd in self.installed_crds:
            spec = crd["spec"]
            if spec.get("scope") != "Namespaced":
                continue
            version = next((v["name"] for v in spec.get("versions", []) if v.get("storage")), None)
            if version is None:
                continue
            path = f"/apis/{spec['group']}/{version}/namespaces/{name}/{spec['names']['plural']}"
            with contextlib.suppress(ApiError):
                self.request("DELETE", path)


# --------------------------------------------------------------------------------------------
# make cluster


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m e2e.controlplane",
        description="Run etcd + kube-apiserver + kwok on 127.0.0.1 with our CRDs and fake "
        "nodes, until Ctrl-C.",
    )
    parser.add_argument("--bin-dir", default=None, help=f"binaries (default: ${BIN_DIR_ENV})")
    parser.add_argument("--crd-dir", default=str(DEFAULT_CRD_DIR))
    parser.add_argument(
        "--workdir",
        default=None,
        help="put logs, kubeconfigs and etcd data here and keep them at exit "
        "(default: a temp dir, removed at exit; etcd data is always fresh)",
    )
    parser.add_argument("--cpu-nodes", type=int, default=3)
    parser.add_argument("--gpu-nodes", type=int, default=2)
    parser.add_argument("--npu-nodes", type=int, default=2)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        plane = ControlPlane(args.bin_dir, crd_dir=args.crd_dir, workdir=args.workdir)
    except ControlPlaneError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        with plane:
            crds = ", ".join(doc["metadata"]["name"] for doc in plane.installed_crds) or "none"
            nodes: list[str] = []
            for pool, count in (
                ("cpu", args.cpu_nodes),
                ("gpu", args.gpu_nodes),
                ("npu", args.npu_nodes),
            ):
                if count > 0:
                    nodes += plane.create_pool_nodes(pool, count, wait=False)
            plane.wait_nodes_ready(nodes)
            timing = ", ".join(f"{k} {v:.1f}s" for k, v in plane.startup_seconds.items())
            print(f"control plane up at {plane.server} ({timing})")
            print(f"CRDs: {crds}")
            print(f"kwok nodes Ready: {', '.join(nodes) or 'none'}")
            print(f"logs: {plane.workdir / 'logs'}")
            print(
                f"scheduler user kubeconfig ({SCHEDULER_USER}, no RBAC rights yet): "
                f"{plane.scheduler_kubeconfig}"
            )
            print(f"KUBECONFIG={plane.kubeconfig}")
            print(f"export KUBECONFIG={plane.kubeconfig}")
            print("Ctrl-C to stop.", flush=True)
            while not stop.wait(1.0):
                for process in plane.processes.values():
                    if not process.alive:
                        print(f"{process.name} exited:\n{plane.logs()}", file=sys.stderr)
                        return 1
    except ControlPlaneError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print("control plane stopped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
