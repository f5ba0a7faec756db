"""What the image is: its name, its Debian release and Python, its user, entrypoint and
environment. The manifests, the chart and the docs name the same image
(tests/operator/test_install_manifests.py); the pods' securityContext runs as the same user
(tests/operator/test_pod_security.py)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def package_version() -> str:
    """volcano_py.__version__, read without importing the package (the build runs from any
    Python, not only the project's virtualenv)."""
    text = (ROOT / "volcano_py" / "__init__.py").read_text()
    found = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if found is None:
        raise SystemExit("volcano_py/__init__.py: no __version__ line")
    return found.group(1)


NAME = "volcano-py"
DESCRIPTION = "A Volcano-compatible batch scheduler for Kubernetes, in Python"
LICENSE = "Apache-2.0"

# Debian's stable release and its Python (trixie: 3.13). The image is amd64, the architecture
# of the .debs and wheels it is made of.
DEBIAN_SUITE = "trixie"
DEBIAN_MIRROR = "https://deb.debian.org/debian"
DEBIAN_SECURITY_MIRROR = "https://deb.debian.org/debian-security"
ARCHITECTURE = "amd64"
PYTHON_VERSION = "3.13"
PYTHON = f"/usr/bin/python{PYTHON_VERSION}"

# The runtime's Debian packages; their Depends/Pre-Depends are added transitively. Python's
# interpreter and standard library (python3.13 pulls in -minimal, libpython3.13-stdlib and its
# shared libraries), the CA certificates (HTTPS to Prometheus or an extender), /etc/services
# and /etc/protocols (netbase), Debian's /etc/os-release and directory layout (base-files), and
# the C++ runtime manylinux wheels may link against (numpy's extensions do: libstdc++6; libc6
# and libgcc-s1, the rest of what the manylinux policy allows a wheel to need, come anyway).
DEBIAN_ROOTS = ("python3.13", "libstdc++6", "ca-certificates", "netbase", "base-files")
# Packages a dependency names that a runtime without dpkg never uses: package management and
# maintainer-script helpers (no maintainer script runs: the .debs are only unpacked, as
# distroless does: base-files pre-depends on awk for its postinst), and the openssl
# command-line tool (ca-certificates' postinst uses it; the build writes the bundle it would).
DEBIAN_EXCLUDED = frozenset(
    {
        "dpkg",
        "debconf",
        "debconf-2.0",
        "cdebconf",
        "perl-base",
        "install-info",
        "awk",
        "openssl",
        "readline-common",
        "sensible-utils",
        "debianutils",
        "usrmerge",
        "usr-is-merged",
    }
)

# The unprivileged user and group every process runs as (deploy/'s runAsUser/runAsGroup).
USER_ID = 65532
GROUP_ID = 65532
USER_NAME = "nonroot"
HOME = "/home/nonroot"

# Where the wheels go: Debian's site for locally installed packages, on sys.path by default.
SITE_PACKAGES = f"/usr/local/lib/python{PYTHON_VERSION}/dist-packages"
SCRIPTS = "/usr/local/bin"

ENTRYPOINT = ["volcano-py"]
CMD = ["scheduler", "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf"]
# No bytecode is written at run time (a read-only root filesystem; every .py is compiled at
# build time), output is unbuffered (logs appear as they are written).
ENVIRONMENT = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}


def image_reference() -> str:
    return f"{NAME}:{package_version()}"
