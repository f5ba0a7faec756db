"""A fluent builder for the cluster of one test session (upstream's ``uthelper`` with the
``util.Build*`` helpers, in one chain)::

    outcome = (
        Cluster()
        .node("n1", cpu="4", memory="8Gi")
        .queue("q1")
        .job("j1", queue="q1", replicas=2, cpu="1", memory="1Gi")
        .run(actions=["enqueue", "allocate"], plugins={"gang": ["enableJobReady"]})
    )
    outcome.expect_binds({"default/j1-0": "n1", "default/j1-1": "n1"})

Every method adds raw Kubernetes objects (the dicts of :mod:`volcano_py.testing.objects`), so
the session sees what a watch would deliver. Pods are named ``<namespace>/<name>`` in binds
and evictions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.framework.conf import SchedulerConf, parse_conf
from volcano_py.framework.plugin import PluginBuilder
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry
from volcano_py.testing.objects import (
    build_node,
    build_pod,
    build_pod_group,
    build_priority_class,
    build_queue,
    resource_list,
)
from volcano_py.testing.session import (
    KindAndObject,
    Outcome,
    PluginFlags,
    run_session,
    tiers_of,
)


class Cluster:
    """Nodes, queues, PodGroups and pods for one session; each method returns the builder."""

    def __init__(self) -> None:
        self.objects: list[KindAndObject] = []

    def add(self, kind: str, obj: dict[str, Any]) -> Cluster:
        """Any raw object (a HyperNode, a PodDisruptionBudget...)."""
        self.objects.append((kind, obj))
        return self

    def node(
        self,
        name: str,
        cpu: str = "4",
        memory: str = "8Gi",
        *,
        pods: str = "110",
        labels: Mapping[str, str] | None = None,
        taints: list[dict[str, Any]] | None = None,
        unschedulable: bool = False,
        **scalars: str,
    ) -> Cluster:
        """A node with this allocatable (``pods`` as the kubelet's default; other resources
        by keyword, names with dots or slashes via ``**{"nvidia.com/gpu": "8"}``)."""
        allocatable = resource_list(cpu, memory, pods=pods, **scalars)
        return self.add(
            "Node",
            build_node(name, allocatable, labels, taints=taints, unschedulable=unschedulable),
        )

    def queue(self, name: str, weight: int = 1, **fields: Any) -> Cluster:
        """A Queue; ``fields`` as :func:`~volcano_py.testing.objects.build_queue` takes them
        (``capability=``, ``deserved=``, ``guarantee=``, ``state=``, ``parent=``...)."""
        return self.add("Queue", build_queue(name, weight, **fields))

    def priority_class(self, name: str, value: int, global_default: bool = False) -> Cluster:
        return self.add("PriorityClass", build_priority_class(name, value, global_default))

    def pod_group(
        self,
        name: str,
        *,
        queue: str = "default",
        min_member: int = 1,
        namespace: str = "default",
        phase: str = "Inqueue",
        **fields: Any,
    ) -> Cluster:
        """A PodGroup; ``fields`` as :func:`~volcano_py.testing.objects.build_pod_group`."""
        return self.add(
            "PodGroup", build_pod_group(name, namespace, queue, min_member, phase=phase, **fields)
        )

    def pod(
        self,
        name: str,
        *,
        group: str = "",
        cpu: str | None = "1",
        memory: str | None = "1Gi",
        node: str = "",
        phase: str = "",
        namespace: str = "default",
        labels: Mapping[str, str] | None = None,
        node_selector: Mapping[str, str] | None = None,
        scalars: Mapping[str, str] | None = None,
        **fields: Any,
    ) -> Cluster:
        """A pod of PodGroup ``group``; Running when it has a ``node``, else Pending.
        ``fields`` as :func:`~volcano_py.testing.objects.build_pod` (``priority=``...)."""
        requests = resource_list(cpu, memory, **dict(scalars or {}))
        phase = phase or ("Running" if node else "Pending")
        return self.add(
            "Pod",
            build_pod(
                namespace, name, node, phase, requests, group, labels, node_selector, **fields
            ),
        )

    def job(
        self,
        name: str,
        *,
        queue: str = "default",
        replicas: int = 1,
        min_member: int | None = None,
        cpu: str | None = "1",
        memory: str | None = "1Gi",
        namespace: str = "default",
        phase: str = "Inqueue",
        scalars: Mapping[str, str] | None = None,
        **pod_fields: Any,
    ) -> Cluster:
        """A PodGroup ``name`` (minMember ``min_member``, default all replicas) and its pending
        pods ``<name>-0`` .. ``<name>-<replicas - 1>``."""
        self.pod_group(
            name,
            queue=queue,
            min_member=replicas if min_member is None else min_member,
            namespace=namespace,
            phase=phase,
        )
        for index in range(replicas):
            self.pod(
                f"{name}-{index}",
                group=name,
                cpu=cpu,
                memory=memory,
                namespace=namespace,
                scalars=scalars,
                **pod_fields,
            )
        return self

    def run(
        self,
        actions: Sequence[str] = ("enqueue", "allocate"),
        plugins: PluginFlags | Sequence[PluginFlags] | None = None,
        *,
        arguments: Mapping[str, Mapping[str, Any]] | None = None,
        conf: SchedulerConf | str | None = None,
        extra_plugins: Mapping[str, PluginBuilder] | None = None,
        seed: int = 0,
    ) -> SessionOutcome:
        """Run one session. Either ``conf`` (a :class:`SchedulerConf` or the text of a
        volcano-scheduler.conf; its actions and tiers are used) or ``actions`` with
        ``plugins`` (plugin -> the enable flags to turn on, one tier; or a list of tiers) and
        their ``arguments``. ``extra_plugins`` adds builders by name, such as plugins loaded
        with :func:`volcano_py.scheduler.plugins_dir.load_plugins_dir`."""
        if conf is None:
            session_conf = SchedulerConf(
                actions=list(actions), tiers=tiers_of(plugins or {}, arguments)
            )
        elif isinstance(conf, str):
            session_conf = parse_conf(conf, BUILTIN_ACTIONS, source="Cluster.run(conf=...)")
        else:
            session_conf = conf
        registry = PluginRegistry(extra_plugins)
        outcome = run_session(self.objects, session_conf, registry, seed)
        return SessionOutcome(
            outcome.binder,
            outcome.evictor,
            outcome.status,
            outcome.recorder,
            outcome.session,
            outcome.cache,
        )


class SessionOutcome(Outcome):
    """An :class:`Outcome` with assertions that name what differs."""

    def expect_binds(self, expected: Mapping[str, str]) -> SessionOutcome:
        """Exactly these binds (``namespace/pod`` -> node) were sent."""
        if self.binds != dict(expected):
            raise AssertionError(f"binds {self.binds} != expected {dict(expected)}")
        return self

    def expect_bind_count(self, expected: int) -> SessionOutcome:
        if len(self.binds) != expected:
            raise AssertionError(f"{len(self.binds)} binds ({self.binds}), expected {expected}")
        return self

    def expect_evicted(self, expected: Sequence[str]) -> SessionOutcome:
        """Exactly these pods were evicted (in any order)."""
        if Counter(self.evicted) != Counter(expected):
            raise AssertionError(f"evicted {self.evicted} != expected {list(expected)}")
        return self

    def expect_pipelined(self, expected: Mapping[str, str]) -> SessionOutcome:
        """Exactly these tasks (``namespace/pod`` -> node) are pipelined at session close."""
        if self.pipelined != dict(expected):
            raise AssertionError(f"pipelined {self.pipelined} != expected {dict(expected)}")
        return self
