"""The local control plane a live bench runs on (kube-apiserver + etcd + kwok, the binaries of
``scripts/k8s-test-bins.sh``): one place for the start-up every live bench shares."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from e2e.controlplane import ControlPlane, bin_dir_from_env

# Room for a scheduler's binds and a bench's creates in flight at once.
APISERVER_ARGS = ("--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000")


def bins_missing(make_target: str) -> bool:
    """True, after saying how to run the bench, when ``VK8S_BIN_DIR`` is not set."""
    if bin_dir_from_env() is not None:
        return False
    print(f"VK8S_BIN_DIR is not set: run via `make {make_target}`", file=sys.stderr)
    return True


@contextmanager
def local_plane(prefix: str, keep: bool) -> Iterator[tuple[ControlPlane, Path]]:
    """A running control plane in a new work dir (``prefix``...), and the work dir; both gone
    afterwards unless ``keep``."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    plane = ControlPlane(
        workdir=workdir / "cp", keep_workdir=keep, apiserver_args=list(APISERVER_ARGS)
    )
    try:
        with plane:
            yield plane, workdir
    finally:
        if keep:
            print(f"work dir kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
