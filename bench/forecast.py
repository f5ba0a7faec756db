"""A start forecast on a cluster dump (issue "When will my job start"): ``volcano-py simulate
DUMP --assume-runtime 1h --until U`` for two values of U, as its own process each, on the dump
shape of ``bench simulate`` (5k nodes, 50k running, 10k pending by default).

The running pods carry ``status.startTime`` (a real dump has it), spread over the hour before
the start in ``--start-buckets`` steps, so with ``--assume-runtime 1h`` they end in that many
waves during the first hour; the pods placed at the start end an hour after they started. The
clock jumps over the quiet cycles between, so the cost follows the number of those events, not
the simulated seconds: a day costs about what six hours cost.

    python -m bench forecast                      # 5k nodes; --until 6h and 24h
    python -m bench forecast --nodes 1000         # the same shape, a fifth the size
    python -m bench forecast --until 2h 24h       # other spans

Prints, per span: the wall time of the whole process, the cycles the span stands for and the
cycles actually run (from the table's header), and how many forecasts (``starts``) it made.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.simulate import dump

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
_HEADER = re.compile(r"Simulated (\d+) scheduling cycle\(s\)(?: \((\d+) run)?")


def forecast_dump(nodes: int, running: int, pending: int, buckets: int) -> dict[str, Any]:
    """``bench simulate``'s dump, its running pods started over the hour before the start."""
    document = dump(nodes, running, pending)
    step = 3600 // max(buckets, 1)
    index = 0
    for item in document["items"]:
        if item.get("kind") == "Pod" and item["spec"].get("nodeName"):
            started = START - dt.timedelta(seconds=step * (1 + index % buckets))
            item["status"]["startTime"] = started.strftime("%Y-%m-%dT%H:%M:%SZ")
            index += 1
    return document


def run_forecast(path: Path, until: str, output: str) -> tuple[float, float, int, str, str]:
    """(wall seconds, CPU seconds, exit status, stdout, stderr) of one forecast as its own
    process. On a shared machine the CPU time is the steadier figure."""
    command = [
        sys.executable,
        "-m",
        "volcano_py",
        "simulate",
        str(path),
        "--assume-runtime",
        "1h",
        "--until",
        until,
        "--format",
        output,
    ]
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    return wall, _children_cpu() - cpu_before, done.returncode, done.stdout, done.stderr[-2000:]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench forecast", description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--running", type=int, help="running pods (default: 10 per node)")
    parser.add_argument("--pending", type=int, help="pending pods (default: 2 per node)")
    parser.add_argument("--start-buckets", type=int, default=6, metavar="N")
    parser.add_argument("--until", nargs="+", default=["6h", "24h"], metavar="DURATION")
    args = parser.parse_args(argv)
    running = args.running if args.running is not None else args.nodes * 10
    pending = args.pending if args.pending is not None else args.nodes * 2
    with tempfile.TemporaryDirectory(prefix="bench-forecast-") as directory:
        path = Path(directory) / "cluster.json"
        document = forecast_dump(args.nodes, running, pending, args.start_buckets)
        path.write_text(json.dumps(document), encoding="utf-8")
        print(
            f"   dump: {args.nodes} nodes, {running} running pods (started in"
            f" {args.start_buckets} waves over the last hour), {pending} pending pods"
        )
        for until in args.until:
            seconds, cpu, code, out, err = run_forecast(path, until, "table")
            if code != 0:
                print(err, file=sys.stderr)
                return 1
            match = _HEADER.search(out)
            stood_for = int(match[1]) if match else 0
            ran = int(match[2]) if match and match[2] else stood_for
            started = out.count(" starts at +")
            print(
                f"   --until {until:>4}: {seconds:6.1f} s wall, {cpu:6.1f} s CPU (whole process,"
                " table output),"
                f" {stood_for} cycles stood for, {ran} run; {started} groups forecast to start"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
