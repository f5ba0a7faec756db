"""What a session gets from the cache: its own copy of the cluster."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.dra import DraSnapshot
from volcano_py.api.hypernode import HyperNodeTree
from volcano_py.api.job import JobInfo
from volcano_py.api.namespace import NamespaceInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.node_usage import NodeUsage
from volcano_py.api.numa import NumatopoInfo
from volcano_py.api.queue import QueueInfo


@dataclass(slots=True)
class ClusterSnapshot:
    jobs: dict[str, JobInfo]
    # Ready nodes only; ``node_list`` is their order, and node i owns row i of ``matrix``.
    nodes: dict[str, NodeInfo]
    node_list: list[str]
    matrix: NodeMatrix
    queues: dict[str, QueueInfo]
    priority_classes: dict[str, int] = field(default_factory=dict)
    # Real load of the nodes that have metrics (``NodeInfo.ResourceUsage``); others have none.
    node_usage: dict[str, NodeUsage] = field(default_factory=dict)
    hyper_nodes: list[Mapping[str, Any]] = field(default_factory=list)
    pod_disruption_budgets: list[Mapping[str, Any]] = field(default_factory=list)
    # The HyperNode tree over ``node_list`` (shared, never mutated); None without HyperNodes.
    hyper_node_tree: HyperNodeTree | None = None
    # ResourceQuota statuses of every namespace that has one, by namespace.
    namespace_info: dict[str, NamespaceInfo] = field(default_factory=dict)
    # The Numatopology of each ready node that has one, by node name (immutable, shared).
    numa_info: dict[str, NumatopoInfo] = field(default_factory=dict)
    # ``device-config.yaml`` of every ConfigMap that has one, by ``namespace/name`` (the
    # device configuration deviceshare reads, as upstream reads it from the API).
    device_configs: dict[str, str] = field(default_factory=dict)
    # MindCluster's device-info, NodeD and ClusterD ConfigMaps, raw, by ``namespace/name``.
    mindcluster_config_maps: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    # DRA objects (devices, classes, claims), or None when the cluster has none: a cluster
    # without DRA pays nothing for it.
    dra: DraSnapshot | None = None
