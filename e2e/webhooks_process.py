"""``python -m volcano_py webhooks`` as a subprocess: the scheduler's wrapper with the other
subcommand, its HTTPS port and a serving certificate for 127.0.0.1 signed by a fresh CA
(``openssl`` CLI, as the control plane's own PKI)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from e2e.controlplane import ControlPlaneError, free_port
from e2e.scheduler_process import SchedulerProcess


def make_serving_certificate(directory: Path) -> tuple[Path, Path, Path]:
    """(ca.crt, tls.crt, tls.key) in ``directory``: a CA and a serving certificate for
    IP 127.0.0.1 and localhost. Raises ControlPlaneError without ``openssl``."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise ControlPlaneError("openssl is needed to make the webhook's certificate")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "serving.ext").write_text(
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
    )
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-sha256"]
    steps = [
        [openssl, "req", "-x509", *ec, "-days", "2", "-subj", "/CN=volcano-py-webhooks-ca",
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
         "-keyout", "ca.key", "-out", "ca.crt"],
        [openssl, "req", *ec, "-subj", "/CN=volcano-py-webhooks",
         "-keyout", "tls.key", "-out", "tls.csr"],
        [openssl, "x509", "-req", "-sha256", "-days", "2", "-in", "tls.csr",
         "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
         "-extfile", "serving.ext", "-out", "tls.crt"],
    ]  # fmt: skip
    for argv in steps:
        result = subprocess.run(argv, cwd=directory, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise ControlPlaneError(f"{' '.join(argv)} failed:\n{result.stderr}")
    return directory / "ca.crt", directory / "tls.crt", directory / "tls.key"


class WebhooksProcess(SchedulerProcess):
    """The webhooks on 127.0.0.1:``port`` over HTTPS (``url(path)``), with HTTP ``/readyz``
    on the health port as the other processes."""

    def __init__(
        self,
        kubeconfig: Path,
        workdir: Path,
        args: Sequence[str] = (),
        *,
        label: str = "webhooks",
    ) -> None:
        super().__init__(kubeconfig, workdir, args, label=label)
        self.ca_file, cert, key = make_serving_certificate(workdir / f"{label}-pki")
        self.port = free_port()
        self.argv[self.argv.index("scheduler")] = "webhooks"
        # The webhooks' --listen-address is where the webhooks listen (as upstream's);
        # /metrics has its own flag there, and vc-webhook-manager has no --enable-metrics.
        self.argv = [
            f"--metrics-address={arg.split('=', 1)[1]}"
            if arg.startswith("--listen-address=")
            else arg
            for arg in self.argv
            if arg != "--enable-metrics=true"
        ]
        self.argv[self.argv.index("webhooks") + 1 : self.argv.index("webhooks") + 1] = [
            f"--tls-cert-file={cert}",
            f"--tls-private-key-file={key}",
            "--webhook-address=127.0.0.1",
            f"--port={self.port}",
        ]

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"
