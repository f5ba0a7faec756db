"""The whole ``volcano-py simulate`` process on a cluster dump, as a new user runs it
(issue "Scale"): a ``kubectl get -o json``-shaped ``kind: List`` of nodes, running pods and
pending pods, generated deterministically into a temporary directory.

Reports the wall time of the subprocess (target: at most 5 s at 5k nodes / 50k running /
10k pending) and a cProfile breakdown in-process: load (read + parse + check the file),
controllers, scheduling sessions, report.

    python -m bench simulate                  # 5k nodes, 50k running, 10k pending
    python -m bench simulate --nodes 1000     # the same shape, scaled down
    python -m bench simulate --no-profile     # only the subprocess time
    python -m bench simulate --yaml           # the same dump as YAML (libyaml)

The shape: nodes of 16 CPU / 64Gi; running pods of 1 CPU / 1Gi, 10 per node, in Running
PodGroups of 10 (what Volcano Jobs leave behind); pending pods of 1 CPU / 1Gi, half in Inqueue
PodGroups of 10 and half bare ``schedulerName: volcano`` pods (the PodGroup controller gives
each its own PodGroup); four queues.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import objects

GROUP_SIZE = 10
QUEUES = ("default", "q1", "q2", "q3")


def _queue(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1, "reclaimable": True},
    }


def _pod_group(name: str, queue: str, phase: str) -> dict[str, Any]:
    group = objects.pod_group(name, GROUP_SIZE, phase, queue=queue)
    group["apiVersion"] = "scheduling.volcano.sh/v1beta1"
    return group


def _pod(name: str, group: str | None, node: str = "") -> dict[str, Any]:
    pod = objects.pod(name, group or "", node=node)
    pod["apiVersion"] = "v1"
    if group is None:
        del pod["metadata"]["annotations"]
    return pod


def dump(nodes: int, running: int, pending: int) -> dict[str, Any]:
    """The cluster as one ``kind: List``; the same arguments give the same list."""
    items: list[dict[str, Any]] = [_queue(name) for name in QUEUES]
    for index in range(nodes):
        node = objects.node(f"node-{index:05d}", "16", "64Gi")
        node["apiVersion"] = "v1"
        items.append(node)
    for group_index in range(running // GROUP_SIZE):
        group = f"running-{group_index:05d}"
        items.append(_pod_group(group, QUEUES[group_index % len(QUEUES)], "Running"))
        for member in range(GROUP_SIZE):
            pod_index = group_index * GROUP_SIZE + member
            items.append(_pod(f"{group}-{member}", group, node=f"node-{pod_index % nodes:05d}"))
    grouped = pending // 2 // GROUP_SIZE * GROUP_SIZE
    for group_index in range(grouped // GROUP_SIZE):
        group = f"pending-{group_index:05d}"
        items.append(_pod_group(group, QUEUES[group_index % len(QUEUES)], "Inqueue"))
        items.extend(_pod(f"{group}-{member}", group) for member in range(GROUP_SIZE))
    items.extend(_pod(f"bare-{index:05d}", None) for index in range(pending - grouped))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def write_dump(directory: Path, nodes: int, running: int, pending: int, as_yaml: bool) -> Path:
    document = dump(nodes, running, pending)
    if as_yaml:
        import yaml

        path = directory / "cluster.yaml"
        path.write_text(yaml.dump(document, Dumper=yaml.CSafeDumper), encoding="utf-8")
    else:
        path = directory / "cluster.json"
        path.write_text(json.dumps(document), encoding="utf-8")
    return path


def time_subprocess(path: Path) -> tuple[float, int, str]:
    """Wall time of ``volcano-py simulate PATH`` as its own process, its status and stderr."""
    command = [sys.executable, "-m", "volcano_py", "simulate", str(path)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done.returncode, done.stderr[-2000:]


def _phases() -> list[tuple[str, Callable[..., Any]]]:
    from volcano_py.sim.engine import Simulation
    from volcano_py.sim.inputs import read_inputs
    from volcano_py.sim.loader import load_documents
    from volcano_py.sim.report import build_report, render_json

    return [
        ("load: read + parse", load_documents),
        ("load: check + default", read_inputs),
        ("load: into the simulated cluster", Simulation.load),
        ("controllers", Simulation._run_controllers),
        ("kubelet stand-in (advance pods)", Simulation._advance_pods),
        ("report", build_report),
        ("report: render", render_json),
    ]


def breakdown(path: Path) -> None:
    """Run simulate in-process with wall-clock timers around each phase (no profiler, so
    the figures add up to the real time); the session is what the cycles spend outside the
    controllers and the kubelet stand-in."""
    from volcano_py.cli.main import main as cli_main
    from volcano_py.sim import engine, inputs, loader, report
    from volcano_py.sim.engine import Simulation

    spent: dict[str, float] = {}

    def timed(label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - started

        return wrapper

    from volcano_py.cli import simulate as cli_simulate

    patches = [
        (cli_simulate, "load_documents", "load: read + parse", loader.load_documents),
        (cli_simulate, "read_inputs", "load: check + default", inputs.read_inputs),
        (Simulation, "load", "load: into the simulated cluster", Simulation.load),
        (Simulation, "_run_controllers", "controllers", Simulation._run_controllers),
        (Simulation, "_advance_pods", "kubelet stand-in", Simulation._advance_pods),
        (Simulation, "run", "cycles", Simulation.run),
        (cli_simulate, "build_report", "report: build", report.build_report),
        (cli_simulate, "render_json", "report: render", report.render_json),
    ]
    for owner, name, label, function in patches:
        setattr(owner, name, timed(label, function))
    real_stdout, sys.stdout = sys.stdout, io.StringIO()
    started = time.perf_counter()
    try:
        cli_main(["simulate", str(path)])
    finally:
        total = time.perf_counter() - started
        sys.stdout = real_stdout
        for owner, name, _label, function in patches:
            setattr(owner, name, function)
    del engine
    spent["session (cycles - controllers - kubelet)"] = (
        spent.get("cycles", 0.0)
        - spent.get("controllers", 0.0)
        - spent.get("kubelet stand-in", 0.0)
    )
    print(f"   in-process, wall clock: {total:.2f} s")
    for label, seconds in spent.items():
        if label != "cycles":
            print(f"   {label:<42} {seconds:7.2f} s")


def profile(path: Path, top: int) -> None:
    """Run simulate in-process under cProfile; print the cumulative time of each phase."""
    from volcano_py.cli.main import main as cli_main

    profiler = cProfile.Profile()
    sink = io.StringIO()
    real_stdout = sys.stdout
    sys.stdout = sink
    started = time.perf_counter()
    try:
        profiler.runcall(cli_main, ["simulate", str(path)])
    finally:
        sys.stdout = real_stdout
    total = time.perf_counter() - started
    stats = pstats.Stats(profiler)
    entries: dict[tuple[str, int, str], Any] = stats.stats  # type: ignore[attr-defined]

    def cumulative(function: Callable[..., Any]) -> float:
        code = function.__code__
        key = (code.co_filename, code.co_firstlineno, code.co_name)
        return float(entries[key][3]) if key in entries else 0.0

    from volcano_py.framework.session import close_session, open_session
    from volcano_py.scheduler.registry import new_action

    print(f"   in-process under cProfile: {total:.2f} s (profiling slows Python code ~2x)")
    for label, function in _phases():
        print(f"   {label:<36} {cumulative(function):7.2f} s")
    session = cumulative(open_session) + cumulative(close_session)
    actions = sum(
        float(value[3])
        for key, value in entries.items()
        if key[2] == "execute" and "/actions/" in key[0]
    )
    print(f"   {'session (open + actions + close)':<36} {session + actions:7.2f} s")
    del new_action
    if top:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
        print(out.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench simulate", description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--running", type=int, help="running pods (default: 10 per node)")
    parser.add_argument("--pending", type=int, help="pending pods (default: 2 per node)")
    parser.add_argument("--yaml", action="store_true", help="write the dump as YAML")
    parser.add_argument("--no-profile", action="store_true", help="skip the cProfile run")
    parser.add_argument("--top", type=int, default=0, help="print the N costliest functions")
    args = parser.parse_args(argv)
    running = args.running if args.running is not None else args.nodes * 10
    pending = args.pending if args.pending is not None else args.nodes * 2
    with tempfile.TemporaryDirectory(prefix="bench-simulate-") as directory:
        path = write_dump(Path(directory), args.nodes, running, pending, args.yaml)
        size = os.path.getsize(path) / 1e6
        print(
            f"   dump: {args.nodes} nodes, {running} running pods, {pending} pending pods"
            f" ({path.name}, {size:.0f} MB)"
        )
        seconds, code, stderr = time_subprocess(path)
        print(f"   volcano-py simulate (whole process): {seconds:.2f} s, exit {code}")
        if code != 0:
            print(stderr, file=sys.stderr)
            return 1
        breakdown(path)
        if not args.no_profile:
            profile(path, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
