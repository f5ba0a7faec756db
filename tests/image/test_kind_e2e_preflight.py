"""`make e2e` (scripts/kind-e2e.sh) needs a container engine kind can run its nodes in: with
none answering it stops before building or creating anything, exit 3, saying what is missing
and what proves the install without one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _stub(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def _run(tmp_path: Path, docker_body: str | None) -> subprocess.CompletedProcess[str]:
    stubs = tmp_path / "bin"
    stubs.mkdir()
    marker = tmp_path / "touched"
    for tool in ("kind", "kubectl"):
        _stub(stubs, tool, f"echo {tool} >> {marker}")
    if docker_body is not None:
        _stub(stubs, "docker", docker_body)
    _stub(stubs, "python-stub", f"echo build >> {marker}")
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "HOME": str(tmp_path),
           "IMAGE": "volcano-py:test", "IMAGE_ARCHIVE": str(tmp_path / "image.tar"),
           "PYTHON": str(stubs / "python-stub")}  # fmt: skip
    done = subprocess.run(["bash", str(ROOT / "scripts" / "kind-e2e.sh")], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert not marker.exists(), "nothing is built, created or loaded before the checks pass"
    return done


def test_stops_early_when_no_engine_answers(tmp_path: Path) -> None:
    done = _run(tmp_path, "echo 'Cannot connect to the Docker daemon' >&2; exit 1")
    assert done.returncode == 3
    assert "no docker engine answers" in done.stderr
    assert "make test-deploy" in done.stderr and "Cannot connect" in done.stderr


def test_stops_early_without_docker(tmp_path: Path) -> None:
    if any(Path(d, "docker").exists() for d in ("/usr/bin", "/bin")):
        pytest.skip("a docker in /usr/bin or /bin would be found (the stubs' PATH includes them)")
    done = _run(tmp_path, None)
    assert done.returncode == 3
    assert "docker is not on PATH" in done.stderr
