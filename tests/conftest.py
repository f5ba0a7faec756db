"""Suite-wide pytest wiring.

The `cluster` marker (declared in pyproject.toml) means: this test runs against a real
kube-apiserver + etcd + kwok, started from the binaries in ``$VK8S_BIN_DIR`` (built by
``scripts/k8s-test-bins.sh``; ``make test`` / ``make test-cluster`` set the variable). Any test
using the ``control_plane`` fixture is marked automatically.

When the binaries are missing, a cluster test is skipped with the reason, except in CI
(``CI=true``), where it fails: CI must never skip the cluster tests silently.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from e2e.controlplane import BIN_DIR_ENV, BUILD_HINT, bin_dir_from_env, missing_binaries

CLUSTER_FIXTURE = "control_plane"

# scripts/ importable: the tests check the manifests and the built image against the image's
# spec (scripts/imagebuild/spec.py), the one place its user, entrypoint and Python are named.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))


def cluster_unavailable_reason() -> str | None:
    """Why the cluster tests cannot run here, or None when the binaries are present."""
    bin_dir = bin_dir_from_env()
    missing = missing_binaries(bin_dir)
    if not missing:
        return None
    if bin_dir is None:
        where = f"{BIN_DIR_ENV} is not set"
    else:
        where = f"{BIN_DIR_ENV}={bin_dir} lacks {', '.join(missing)}"
    return f"{BUILD_HINT} ({where})"


def running_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # tryfirst: the marker must be on the item before `-m cluster` / `-m "not cluster"` selects.
    for item in items:
        if CLUSTER_FIXTURE in getattr(item, "fixturenames", ()) and not item.get_closest_marker(
            "cluster"
        ):
            item.add_marker(pytest.mark.cluster)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # Runs before any fixture of the item is set up, so no control plane is started in vain.
    if item.get_closest_marker("cluster") is None:
        return
    reason = cluster_unavailable_reason()
    if reason is None:
        return
    if running_in_ci():
        pytest.fail(f"CI=true and the cluster tests cannot run: {reason}", pytrace=False)
    pytest.skip(reason)
