"""``python -m volcano_py scheduler`` as a subprocess with its own ports and log file: started,
probed over HTTP (``/healthz``, ``/readyz``, ``/metrics``) and stopped. Shared by the cluster
tests (``tests/cluster/test_scheduler_*``) and the end-to-end bench (``bench.e2e``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Self

from prometheus_client.parser import text_string_to_metric_families

from e2e.controlplane import REPO_ROOT, free_port

REQUESTS_METRIC = "rest_client_requests_total"
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class SchedulerProcess:
    """The scheduler with ``kubeconfig``, ``args`` after the address flags, and, with ``conf``,
    that text as its ``--scheduler-conf`` file (``conf_path``, rewrite it to reload).
    ``source``: the source tree whose ``volcano_py`` runs (its working directory, first on
    its path): another commit's export, for a before/after comparison."""

    def __init__(
        self,
        kubeconfig: Path,
        workdir: Path,
        args: Sequence[str] = (),
        *,
        conf: str | None = None,
        label: str = "scheduler",
        source: Path = REPO_ROOT,
    ) -> None:
        self.label = label
        self.source = source
        self.metrics_port = free_port()
        self.health_port = free_port()
        self.log_path = workdir / f"{label}-{secrets.token_hex(2)}.log"
        self.conf_path: Path | None = None
        if conf is not None:
            self.conf_path = workdir / f"{label}-volcano-scheduler.conf"
            self.conf_path.write_text(conf)
        self.argv = [
            sys.executable, "-m", "volcano_py", "scheduler", f"--kubeconfig={kubeconfig}",
            "--enable-metrics=true", "--enable-healthz=true",
            f"--listen-address=127.0.0.1:{self.metrics_port}",
            f"--healthz-address=127.0.0.1:{self.health_port}",
            *([f"--scheduler-conf={self.conf_path}"] if self.conf_path else []),
            *args,
        ]  # fmt: skip
        self.process: subprocess.Popen[bytes] | None = None
        self.started = 0.0  # time.monotonic() at the last start()

    def start(self) -> Self:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.source,
                env=env,
                start_new_session=True,
            )
        self.started = time.monotonic()
        return self

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def returncode(self) -> int | None:
        return self.process.poll() if self.process is not None else None

    # -------------------------------------------------------------------------- endpoints

    def get(self, path: str, port: int | None = None, timeout: float = 5.0) -> tuple[int, str]:
        """``(status, body)`` of a GET on the health port (or ``port``); 0 if unreachable."""
        url = f"http://127.0.0.1:{port or self.health_port}{path}"
        try:
            with _NO_PROXY.open(url, timeout=timeout) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError as error:
            return 0, str(error)

    def wait_for(self, what: str, check: Callable[[], bool], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check():
                return
            if not self.alive:
                raise AssertionError(
                    f"{self.label} exited ({self.returncode}) waiting for {what}\n{self.log()}"
                )
            time.sleep(0.1)
        raise AssertionError(f"{self.label}: timed out waiting for {what}\n{self.log()}")

    def wait_ready(self, timeout: float = 30.0) -> None:
        self.wait_for("/readyz", lambda: self.get("/readyz")[0] == 200, timeout)

    async def ready(self) -> bool:
        """``/readyz`` answers 200 (for an asyncio poll); raises if the process exited."""
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(
                f"{self.label} exited ({self.process.returncode}); see {self.log_path}"
            )
        return (await asyncio.to_thread(self.get, "/readyz"))[0] == 200

    # -------------------------------------------------------------------------- metrics

    def metrics(self, timeout: float = 5.0) -> list[tuple[str, dict[str, str], float]]:
        status, text = self.get("/metrics", self.metrics_port, timeout)
        if status != 200:
            raise AssertionError(f"{self.label}: GET /metrics answered {status}: {text}")
        return [
            (sample.name, dict(sample.labels), sample.value)
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        ]

    def metric(self, name: str, **labels: str) -> float:
        """The sum of the samples of ``name`` whose labels include ``labels``."""
        return sum(
            value
            for sample, sample_labels, value in self.metrics()
            if sample == name and all(sample_labels.get(k) == v for k, v in labels.items())
        )

    def requests(self, resource: str, verb: str, code: str | None = None) -> float:
        """API requests the scheduler made, by resource and verb (and response code)."""
        wanted = {"resource": resource, "verb": verb}
        if code is not None:
            wanted["code"] = code
        return self.metric(REQUESTS_METRIC, **wanted)

    def request_counts(self) -> dict[tuple[str, str], float]:
        """All its API requests, by ``(verb, resource)``."""
        counts: dict[tuple[str, str], float] = {}
        for name, labels, value in self.metrics():
            if name == REQUESTS_METRIC:
                key = (labels["verb"], labels["resource"])
                counts[key] = counts.get(key, 0.0) + value
        return counts

    def forbidden(self) -> list[dict[str, str]]:
        """The label sets of its requests answered 403."""
        return [
            labels
            for name, labels, value in self.metrics()
            if name == REQUESTS_METRIC and labels.get("code") == "403" and value
        ]

    # -------------------------------------------------------------------------- stopping

    def kill(self) -> None:
        if self.alive:
            assert self.process is not None
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def terminate(self, timeout: float = 20.0) -> int:
        """SIGTERM and its exit code; killed and an error if it outlasts ``timeout``."""
        assert self.process is not None
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
            raise AssertionError(f"{self.label} did not stop on SIGTERM\n{self.log()}") from None

    def stop(self, timeout: float = 20.0) -> None:
        """Like `terminate` if it runs, but never an error: a slow exit is just killed."""
        if self.alive:
            with contextlib.suppress(AssertionError):
                self.terminate(timeout)

    def log(self, lines: int | None = 60) -> str:
        """The last ``lines`` lines of its log (all with None)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        kept = text.splitlines()[-lines:] if lines else text.splitlines()
        return f"---- {self.label} log\n" + "\n".join(kept)
