"""`volcano-py simulate`: the real scheduler, offline, over objects from YAML files."""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

from volcano_py.api.types import DEFAULT_SCHEDULER_NAME
from volcano_py.controllers.cronjob import format_time
from volcano_py.framework.conf import ConfError, SchedulerConf
from volcano_py.framework.conf_check import load_conf, load_default_conf
from volcano_py.metrics import recording_off
from volcano_py.models.duration import DurationError, parse_duration
from volcano_py.scheduler.cycle import gc_paused
from volcano_py.scheduler.plugins_dir import PluginsDirError, plugins_with_dir
from volcano_py.scheduler.registry import PluginRegistry
from volcano_py.sim.clock import DEFAULT_PERIOD, DEFAULT_START, ClockError, SimClock, parse_start
from volcano_py.sim.collector import CycleCollector
from volcano_py.sim.engine import Simulation
from volcano_py.sim.hypernode_discovery import add_discovered_hyper_nodes
from volcano_py.sim.inputs import read_inputs
from volcano_py.sim.loader import SimInputError, load_documents
from volcano_py.sim.report import build_report, render_json, render_table
from volcano_py.sim.yaml_output import render_yaml

HELP = "run the scheduler offline over Kubernetes/Volcano YAML and print what it did"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="YAML/JSON files, or - for stdin")
    parser.add_argument(
        "--conf",
        help="a volcano-scheduler.conf (default: a ConfigMap in the"
        " input holding one, else Volcano's built-in default)",
    )
    parser.add_argument(
        "--cycles",
        type=int,
        help="run exactly N scheduling cycles (default: until nothing changes and no timed"
        " event but a CronJob schedule is left)",
    )
    parser.add_argument(
        "--until",
        metavar="DURATION",
        help="run until this much simulated time has passed since --start (Go duration: 90s,"
        " 30m, 2h; inclusive), jumping over the cycles in which nothing can change",
    )
    parser.add_argument(
        "--start",
        metavar="RFC3339",
        help="the simulated clock's start (default 2026-01-01T00:00:00Z)",
    )
    parser.add_argument(
        "--schedule-period",
        metavar="DURATION",
        help="time between scheduling cycles, as vc-scheduler's flag (default 1s)",
    )
    parser.add_argument(
        "--assume-runtime",
        metavar="DURATION",
        help="a running pod without a volcano-py.sim/run-* annotation finishes this long after"
        " its status.startTime (default: it runs forever)",
    )
    parser.add_argument(
        "--format",
        choices=("json", "table", "yaml"),
        default="json",
        help="json (the report), table (for people) or yaml (the final state of every object,"
        " as one kind: List, valid input)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for random tie-breaks")
    parser.add_argument(
        "--plugins-dir",
        metavar="DIR",
        help="load the Python plugins in DIR too, as `volcano-py scheduler --plugins-dir`",
    )
    parser.add_argument(
        "--scheduler-name",
        action="append",
        metavar="NAME",
        help="the scheduler's name, as vc-scheduler's flag (repeatable; default volcano): pods"
        " of other schedulers are never placed but hold what they use; the first name is what"
        " a Volcano Job without schedulerName gets",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 2 on any warning (an input kind not simulated; in the conf an unknown key"
        " or argument, a wrongly typed value)",
    )


def _warning(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _conf(
    path: str | None, conf_text: str | None, conf_source: str, registry: PluginRegistry
) -> SchedulerConf:
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as error:
            raise SimInputError(f"{path}: cannot read: {error.strerror or error}") from error
        return load_conf(text, registry, source=path, emit=_warning)
    if conf_text is not None:
        return load_conf(conf_text, registry, source=conf_source, emit=_warning)
    return load_default_conf(registry, emit=_warning)


def _scheduler_names(given: list[str] | None) -> list[str]:
    """``--scheduler-name`` values, in order, without repeats; ``volcano`` when none."""
    names = list(dict.fromkeys(given or [DEFAULT_SCHEDULER_NAME]))
    for name in names:
        if not name.strip():
            raise SimInputError("--scheduler-name: expected a scheduler name, got ''")
    return names


def _strict_failure(*warning_lists: list[str]) -> int:
    """--strict: any warning so far (each already printed) ends the run with exit 2."""
    count = sum(len(warnings) for warnings in warning_lists)
    if not count:
        return 0
    print(f"error: --strict: {count} warning(s) above", file=sys.stderr)
    return 2


@dataclass(frozen=True)
class _Timing:
    clock: SimClock
    until: float | None
    assume_runtime: float | None


class _FlagError(ValueError):
    pass


def _duration(flag: str, text: str | None, *, positive: bool = False) -> float | None:
    if text is None:
        return None
    try:
        seconds = parse_duration(text)
    except DurationError as error:
        raise _FlagError(f"{flag}: {error}") from None
    if seconds < 0:
        raise _FlagError(f"{flag}: a duration cannot be negative, got {text!r}")
    if positive and seconds == 0:
        raise _FlagError(f"{flag}: must be positive, got {text!r}")
    return seconds


def _timing(args: argparse.Namespace) -> _Timing:
    """The clock flags, checked: exit 2 naming the flag when one is wrong."""
    if args.cycles is not None and args.cycles < 1:
        raise _FlagError("--cycles: expected a positive number of cycles")
    if args.cycles is not None and args.until is not None:
        raise _FlagError("--cycles and --until: give one (a number of cycles or a span of time)")
    start = DEFAULT_START
    if args.start is not None:
        try:
            start = parse_start(args.start)
        except ClockError as error:
            raise _FlagError(f"--start: {error}") from None
    if args.until is not None:
        try:
            until = parse_duration(args.until)
        except DurationError as error:
            raise _FlagError(f"--until: {error}") from None
        if until < 0:
            raise _FlagError(
                f"--until: {args.until!r} ends before --start ({format_time(start)}):"
                " expected a duration >= 0"
            )
    else:
        until = None
    period = _duration("--schedule-period", args.schedule_period, positive=True)
    runtime = _duration("--assume-runtime", args.assume_runtime)
    return _Timing(SimClock(start, period or DEFAULT_PERIOD), until, runtime)


def run(args: argparse.Namespace) -> int:
    # No /metrics here and no metric in the report: the per-job series and per-task
    # observations a live scheduler records are not (metrics/recording.py).
    with recording_off():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    try:
        timing = _timing(args)
    except _FlagError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        # A dump is hundreds of thousands of long-lived dicts: the cyclic collector would
        # scan them all over and over while they are built (it tripled the time of loading).
        with gc_paused():
            names = _scheduler_names(args.scheduler_name)
            inputs = read_inputs(load_documents(args.files, seed=args.seed), names)
            add_discovered_hyper_nodes(inputs, args.seed)
            registry = plugins_with_dir(args.plugins_dir)
            conf = _conf(args.conf, inputs.conf_text, inputs.conf_source, registry)
            if args.strict and _strict_failure(inputs.warnings, conf.diagnostics.warnings):
                return 2
            simulation = Simulation(
                conf,
                registry,
                scheduler_names=frozenset(names),
                job_scheduler_name=names[0],
                seed=args.seed,
                clock=timing.clock,
                assume_runtime=timing.assume_runtime,
            )
            simulation.load(inputs.objects, owned=True)
            # Frozen once loaded, and after each cycle: see sim/collector.py.
            collector = simulation.collector = CycleCollector()
            collector.after_load()
    except (SimInputError, ConfError, PluginsDirError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        return _run_and_report(args, timing, conf, simulation)
    finally:
        collector.close()


def _run_and_report(
    args: argparse.Namespace, timing: _Timing, conf: SchedulerConf, simulation: Simulation
) -> int:
    simulation.run(args.cycles, timing.until)
    if simulation.stopped_early is not None:
        _warning(simulation.stopped_early)
        if args.strict and _strict_failure([simulation.stopped_early]):
            return 2
    # A wrongly typed argument is only seen when a plugin or action reads it.
    if args.strict and _strict_failure(conf.diagnostics.warnings):
        return 2
    if args.format == "yaml":
        with gc_paused():
            text = render_yaml(simulation.cluster)
        sys.stdout.write(text)
        return 0
    with gc_paused():  # the report is a few hundred thousand new small objects
        report = build_report(simulation)
        text = (
            render_table(report, simulation.clock, timing.until)
            if args.format == "table"
            else render_json(report)
        )
    sys.stdout.write(text)
    return 0
