"""HyperNodes from NVIDIA UFM: the ``ufm`` discovery source
(``pkg/controllers/hypernode/discovery/ufm``), the part that needs no network.

UFM's ``/ufmRest/resources/ports`` lists InfiniBand ports. A port whose ``description``
contains ``Computer`` links a host (``system_name``, the node) to a leaf switch
(``peer_node_name``). Leaf switches that share a host are one group (hosts with two rails
join their leaves); each group becomes a tier-1 HyperNode ``leaf-hn-<i>`` of its hosts, and
one tier-2 ``spine-hn`` holds them all.

The request itself (basic auth from a Secret, TLS, a 30 s timeout, a 100 MiB answer at most)
is made by the live controller, ``operator/controllers/hypernodes.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.controllers.hypernode_config import NETWORK_TOPOLOGY_SOURCE_LABEL
from volcano_py.controllers.hypernode_objects import build_hyper_node

SOURCE: Final = "ufm"
PORTS_PATH: Final = "/ufmRest/resources/ports"
MAX_BODY_BYTES: Final = 100 << 20
REQUEST_TIMEOUT: Final = 30.0
SPINE_NAME: Final = "spine-hn"


class UfmDataError(ValueError):
    """UFM's answer is not the list of ports expected; the message says what is wrong."""


def ports_url(endpoint: str) -> str:
    """The endpoint with UFM's ports path; ``https://`` when it names no scheme."""
    base = endpoint.rstrip("/")
    if not base.startswith(("http://", "https://")):
        base = f"https://{base}"
    return base + PORTS_PATH


@dataclass
class _Leaf:
    name: str
    hosts: set[str] = field(default_factory=set)


def host_ports(data: object) -> list[tuple[str, str]]:
    """(leaf switch, host) for each host-facing port of UFM's answer."""
    if not isinstance(data, list):
        raise UfmDataError(f"expected a JSON list of ports, got {type(data).__name__}")
    links = []
    for index, port in enumerate(data):
        if not isinstance(port, Mapping):
            raise UfmDataError(f"port {index}: expected an object")
        if "Computer" not in str(port.get("description") or ""):
            continue
        links.append((str(port.get("peer_node_name") or ""), str(port.get("system_name") or "")))
    return links


def leaf_groups(links: Iterable[tuple[str, str]]) -> list[set[str]]:
    """The hosts of each group of leaves joined by shared hosts, leaves taken by name."""
    leaves: dict[str, _Leaf] = {}
    leaves_of_host: dict[str, set[str]] = {}
    for leaf, host in links:
        leaves.setdefault(leaf, _Leaf(leaf)).hosts.add(host)
        leaves_of_host.setdefault(host, set()).add(leaf)
    groups: list[set[str]] = []
    seen: set[str] = set()
    for first in sorted(leaves):
        if first in seen:
            continue
        hosts: set[str] = set()
        pending = [first]
        seen.add(first)
        while pending:
            leaf = pending.pop()
            hosts |= leaves[leaf].hosts
            for host in leaves[leaf].hosts:
                for related in leaves_of_host[host] - seen:
                    seen.add(related)
                    pending.append(related)
        groups.append(hosts)
    return groups


def discover_from_ufm(data: object) -> list[dict[str, Any]]:
    """The HyperNodes UFM's ports answer describes: ``leaf-hn-<i>`` per leaf group, and
    ``spine-hn`` above them when there is any."""
    labels = {NETWORK_TOPOLOGY_SOURCE_LABEL: SOURCE}
    groups = leaf_groups(host_ports(data))
    leaves = [
        build_hyper_node(f"leaf-hn-{index}", 1, sorted(hosts), member_type="Node", labels=labels)
        for index, hosts in enumerate(groups)
    ]
    if not leaves:
        return []
    spine = build_hyper_node(
        SPINE_NAME,
        2,
        [leaf["metadata"]["name"] for leaf in leaves],
        member_type="HyperNode",
        labels=labels,
    )
    return [*leaves, spine]
