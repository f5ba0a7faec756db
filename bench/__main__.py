"""``python -m bench [--list] [NAME [ARGS...]]``: run every registered benchmark (``make bench``),
or only NAME with its own arguments (``python -m bench node_matrix --quick``)."""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable
from typing import cast

from bench import CLUSTER_MODULES, MODULES

USAGE = __doc__ or ""


def run_module(name: str, argv: list[str]) -> int:
    module = importlib.import_module(f"bench.{name}")
    entry = cast("Callable[[list[str]], int]", module.main)
    print(f"== bench.{name} {' '.join(argv)}".rstrip())
    started = time.perf_counter()
    code = entry(argv)
    print(f"   ({time.perf_counter() - started:.1f} s)\n")
    return code


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        print(USAGE.strip())
        print(f"\nbenchmarks: {', '.join(MODULES)}")
        print(f"on the local control plane (not in `make bench`): {', '.join(CLUSTER_MODULES)}")
        return 0
    if args and args[0] == "--list":
        print("\n".join(MODULES))
        return 0
    if not args:
        codes = [run_module(name, []) for name in MODULES]
        return max(codes, default=0)
    # ``job-replicas`` on the command line is the module ``bench.job_replicas``.
    name, rest = args[0].replace("-", "_"), args[1:]
    if name not in MODULES + CLUSTER_MODULES:
        known = ", ".join(MODULES + CLUSTER_MODULES)
        print(f"unknown benchmark {name!r}; known: {known}", file=sys.stderr)
        return 2
    return run_module(name, rest)


if __name__ == "__main__":
    sys.exit(main())
