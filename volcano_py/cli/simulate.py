"""`volcano-py simulate`: the real scheduler, offline, over objects from YAML files."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from volcano_py.api.types import DEFAULT_SCHEDULER_NAME
from volcano_py.framework.conf import ConfError, SchedulerConf
from volcano_py.framework.conf_check import load_conf, load_default_conf
from volcano_py.scheduler.cycle import freeze_long_lived, gc_paused
from volcano_py.scheduler.plugins_dir import PluginsDirError, plugins_with_dir
from volcano_py.scheduler.registry import PluginRegistry
from volcano_py.sim.engine import Simulation
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
        help="run exactly N scheduling cycles (default: until nothing changes, at most 20)",
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


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    if args.cycles is not None and args.cycles < 1:
        print("error: --cycles: expected a positive number of cycles", file=sys.stderr)
        return 2
    try:
        # A dump is hundreds of thousands of long-lived dicts: the cyclic collector would
        # scan them all over and over while they are built (it tripled the time of loading).
        with gc_paused():
            names = _scheduler_names(args.scheduler_name)
            inputs = read_inputs(load_documents(args.files, seed=args.seed), names)
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
            )
            simulation.load(inputs.objects, owned=True)
    except (SimInputError, ConfError, PluginsDirError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    freeze_long_lived()
    simulation.run(args.cycles)
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
        text = render_table(report) if args.format == "table" else render_json(report)
    sys.stdout.write(text)
    return 0
