"""hyperNode-controller's label discovery in ``simulate``: an input holding vc-controller-
manager's ``volcano-system/volcano-controller-configmap`` with the ``label`` source enabled
gets the HyperNodes that source would make from the input's nodes, before the first cycle, as
a cluster running the controller has them. The input's own HyperNodes of that source are
updated or replaced as the live controller would; other HyperNodes are left alone.

Names carry upstream's random five-character suffix drawn from ``--seed``, so a run repeats.
The ``ufm`` source's result is what the input says: a cluster dump holds the HyperNodes it
discovered (labelled with that source), and simulate does not call UFM, as it reads node
usage from the input rather than from Prometheus. Any other source is unsupported (a
warning), as upstream's controller logs.
"""

from __future__ import annotations

import random
import sys

from volcano_py.controllers import raw
from volcano_py.controllers.hypernode_config import (
    DiscoveryConfigError,
    config_from_config_map,
    config_map_location,
)
from volcano_py.controllers.hypernode_label_discovery import (
    LabelTopology,
    discover_from_labels,
    parse_label_topology,
    random_suffix,
)
from volcano_py.controllers.hypernode_objects import reconcile
from volcano_py.sim.inputs import SimInput
from volcano_py.sim.loader import SimInputError


def add_discovered_hyper_nodes(inputs: SimInput, seed: int) -> None:
    """Apply label discovery to ``inputs.objects`` (in place); warnings are added to
    ``inputs.warnings`` and printed; a configuration that cannot be read is an error."""
    namespace, name = config_map_location({})
    config_map = next(
        (
            obj
            for obj in inputs.objects
            if obj.get("kind") == "ConfigMap"
            and raw.name(obj) == name
            and raw.namespace(obj) == namespace
        ),
        None,
    )
    if config_map is None:
        return
    where = f"ConfigMap {namespace}/{name}"
    try:
        config = config_from_config_map(config_map)
    except DiscoveryConfigError as error:
        raise SimInputError(f"{where}: {error}") from None
    notes = [f"{where}: {warning}" for warning in config.warnings]
    for source in config.enabled_sources():
        if source not in ("label", "ufm"):
            notes.append(f"{where}: unsupported discoverer type: {source}")
    label = config.source("label")
    if label is not None:
        topology = parse_label_topology(label.config)
        notes += [f"{where}: {problem} (this type is left out)" for problem in topology.problems]
        _apply_label_discovery(inputs, topology, seed)
    for note in notes:
        inputs.warnings.append(note)
        print(f"warning: {note}", file=sys.stderr)


def _apply_label_discovery(inputs: SimInput, topology: LabelTopology, seed: int) -> None:
    nodes = [obj for obj in inputs.objects if obj.get("kind") == "Node"]
    existing = [obj for obj in inputs.objects if obj.get("kind") == "HyperNode"]
    node_labels = {raw.name(node): raw.labels_of(node) for node in nodes}
    rng = random.Random(f"hypernode-label/{seed}")
    discovered = discover_from_labels(topology, node_labels, existing, lambda: random_suffix(rng))
    changes = reconcile("label", discovered, existing)
    replaced = {raw.name(updated): updated for _current, updated in changes.update}
    deleted = set(changes.delete)
    kept = []
    for obj in inputs.objects:
        if obj.get("kind") == "HyperNode":
            if raw.name(obj) in deleted:
                continue
            obj = replaced.get(raw.name(obj), obj)
        kept.append(obj)
    inputs.objects[:] = [*kept, *changes.create]
