"""One Volcano Job with many replicas through ``volcano-py simulate`` until nothing changes
(issue "Scale"): the job controller creates the PodGroup, then every pod once the scheduler
admits the group; the scheduler binds them; they start. Reports the whole-process time for
each size and the cost per replica, which must stay flat (nothing quadratic in the pods of a
job). Target: 2000 replicas in at most 3 s.

    python -m bench job-replicas                      # 500, 2000, 8000
    python -m bench job-replicas --replicas 200000    # one size
    python -m bench job-replicas --profile 2000       # cProfile of one size, in-process

Each size gets enough 16-CPU nodes for every 1-CPU replica (one node per 10 replicas), so the
whole job is scheduled and runs.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import objects

SIZES = (500, 2000, 8000)


def job(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "big", "namespace": objects.NAMESPACE},
        "spec": {
            "schedulerName": "volcano",
            "minAvailable": replicas,
            "queue": "default",
            "tasks": [
                {
                    "name": "worker",
                    "replicas": replicas,
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "busybox",
                                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                                }
                            ]
                        }
                    },
                }
            ],
        },
    }


def dump(replicas: int) -> dict[str, Any]:
    nodes = []
    for index in range(max(1, -(-replicas // 10))):
        node = objects.node(f"node-{index:05d}", "16", "64Gi")
        node["apiVersion"] = "v1"
        nodes.append(node)
    return {"apiVersion": "v1", "kind": "List", "items": [*nodes, job(replicas)]}


def write_dump(directory: Path, replicas: int) -> Path:
    path = directory / f"job-{replicas}.json"
    path.write_text(json.dumps(dump(replicas)), encoding="utf-8")
    return path


def run_once(path: Path, timeout: float) -> tuple[float, int, str]:
    command = [sys.executable, "-m", "volcano_py", "simulate", str(path)]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - started, -1, f"no answer within {timeout:.0f} s"
    output = done.stdout if done.returncode == 0 else done.stderr
    return time.perf_counter() - started, done.returncode, output


def _running(report_text: str) -> int:
    """How many pods the report shows running (the job must have got everywhere)."""
    report = json.loads(report_text)
    pods = report.get("pods") or {}
    return sum(1 for entry in pods.values() if entry.get("phase") == "Running")


def profile(path: Path, top: int) -> None:
    from volcano_py.cli.main import main as cli_main

    profiler = cProfile.Profile()
    real_stdout, sys.stdout = sys.stdout, io.StringIO()
    try:
        profiler.runcall(cli_main, ["simulate", str(path)])
    finally:
        sys.stdout = real_stdout
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    print(out.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench job-replicas", description=__doc__)
    parser.add_argument("--replicas", type=int, action="append", help="sizes (repeatable)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per size")
    parser.add_argument("--profile", type=int, metavar="N", help="cProfile N replicas in-process")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-job-replicas-") as directory:
        if args.profile:
            profile(write_dump(Path(directory), args.profile), args.top)
            return 0
        print(f"   {'replicas':>9} {'seconds':>8} {'ms/replica':>11} {'running':>8}")
        status = 0
        for replicas in args.replicas or SIZES:
            path = write_dump(Path(directory), replicas)
            seconds, code, output = run_once(path, args.timeout)
            if code != 0:
                first_line = output.strip().splitlines()[-1] if output.strip() else ""
                print(f"   {replicas:>9} {seconds:8.2f} {'-':>11} exit {code}: {first_line}")
                status = 1
                continue
            per_replica = seconds / replicas * 1000
            print(f"   {replicas:>9} {seconds:8.2f} {per_replica:11.3f} {_running(output):>8}")
    return status


if __name__ == "__main__":
    sys.exit(main())
