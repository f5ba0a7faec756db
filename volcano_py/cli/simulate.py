"""`volcano-py simulate`: the real scheduler, offline, over objects from YAML files."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from volcano_py.framework.conf import ConfError, SchedulerConf, default_conf, parse_conf
from volcano_py.scheduler.plugins_dir import PluginsDirError, plugins_with_dir
from volcano_py.scheduler.registry import BUILTIN_ACTIONS
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


def _conf(path: str | None, conf_text: str | None, conf_source: str) -> SchedulerConf:
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as error:
            raise SimInputError(f"{path}: cannot read: {error.strerror or error}") from error
        return parse_conf(text, BUILTIN_ACTIONS, source=path)
    if conf_text is not None:
        return parse_conf(conf_text, BUILTIN_ACTIONS, source=conf_source)
    return default_conf(BUILTIN_ACTIONS)


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    if args.cycles is not None and args.cycles < 1:
        print("error: --cycles: expected a positive number of cycles", file=sys.stderr)
        return 2
    try:
        inputs = read_inputs(load_documents(args.files))
        conf = _conf(args.conf, inputs.conf_text, inputs.conf_source)
        plugins = plugins_with_dir(args.plugins_dir)
        simulation = Simulation(conf, plugins, seed=args.seed)
        simulation.load(inputs.objects)
    except (SimInputError, ConfError, PluginsDirError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    simulation.run(args.cycles)
    if args.format == "yaml":
        sys.stdout.write(render_yaml(simulation.cluster))
        return 0
    report = build_report(simulation)
    sys.stdout.write(render_table(report) if args.format == "table" else render_json(report))
    return 0
