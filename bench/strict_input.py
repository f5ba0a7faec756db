"""What the API server's checks cost ``volcano-py simulate`` on a cluster dump (issue 16):
strict field validation (unknown and wrongly typed fields) and the metadata rules, over the
dump of ``bench.simulate`` (by default 5k nodes, 50k running and 10k pending pods, their
PodGroups and queues), every object as the input reader checks it.

    python -m bench strict-input               # the 5k-node dump
    python -m bench strict-input --nodes 1000  # the same shape, scaled down
"""

from __future__ import annotations

import argparse
import json
import time

from bench.simulate import dump
from volcano_py.models.object_meta_rules import metadata_problems
from volcano_py.models.registry import model_for
from volcano_py.models.strict_fields import core_problems, core_type_of, custom_problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench strict-input", description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    arguments = parser.parse_args(argv)
    nodes = arguments.nodes
    # Through JSON, as the reader gets it (no object shared between documents).
    items = json.loads(json.dumps(dump(nodes, 10 * nodes, 2 * nodes)))["items"]
    started = time.perf_counter()
    refused = 0
    for obj in items:
        model = model_for(obj["apiVersion"], obj["kind"])
        if model is not None:
            problems = custom_problems(obj, model)
        else:
            core_type = core_type_of(obj["apiVersion"], obj["kind"])
            problems = core_problems(obj, core_type) if core_type else []
        refused += bool(problems or metadata_problems(obj))
    elapsed = time.perf_counter() - started
    print(f"   {len(items)} objects checked in {elapsed:.2f} s"
          f" ({elapsed / len(items) * 1e6:.1f} us each); refused: {refused}")
    return 1 if refused else 0
