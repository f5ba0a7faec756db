"""The HyperNode auto-discovery configuration (``pkg/controllers/hypernode/api`` and
``config``): the ``volcano-controller.conf`` key of the ``<release>-controller-configmap``
ConfigMap in the controllers' namespace::

    networkTopologyDiscovery:
      - source: label            # label | ufm (upstream also names roce, which it cannot run)
        enabled: true
        interval: 10m            # Go duration; default 1h (ufm polls at this period)
        credentials:
          secretRef: {name: ufm-credentials, namespace: volcano-system}
        config: {...}            # the source's own settings

Read as upstream reads it (gopkg.in/yaml.v2 into Go structs): a duration is a Go duration
string (a bare integer is nanoseconds), a field of the wrong type fails the whole file. Keys
that struct does not have are ignored there; here each is named in a warning, so a typo such
as ``enable: true`` is not silently a disabled source.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import yaml

from volcano_py.api.go_duration import DurationError, parse_go_duration_nanos

NETWORK_TOPOLOGY_SOURCE_LABEL: Final = "volcano.sh/network-topology-source"
DEFAULT_DISCOVERY_INTERVAL: Final = 3600.0
CONFIG_KEY: Final = "volcano-controller.conf"
NAMESPACE_ENV: Final = "KUBE_POD_NAMESPACE"
RELEASE_NAME_ENV: Final = "HELM_RELEASE_NAME"
DEFAULT_NAMESPACE: Final = "volcano-system"
DEFAULT_RELEASE_NAME: Final = "volcano"

_SOURCE_KEYS: Final = frozenset({"source", "enabled", "interval", "credentials", "config"})


class DiscoveryConfigError(ValueError):
    """The configuration cannot be read; the message names the field."""


@dataclass(frozen=True)
class SecretRef:
    name: str
    namespace: str


@dataclass(frozen=True)
class DiscoverySource:
    source: str
    enabled: bool = False
    # Seconds; 0 when unset (``interval_or_default`` gives what the discoverer runs with).
    interval: float = 0.0
    secret_ref: SecretRef | None = None
    config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def interval_or_default(self) -> float:
        return self.interval if self.interval > 0 else DEFAULT_DISCOVERY_INTERVAL


@dataclass(frozen=True)
class NetworkTopologyConfig:
    sources: tuple[DiscoverySource, ...] = ()
    warnings: tuple[str, ...] = ()

    def enabled_sources(self) -> list[str]:
        return [source.source for source in self.sources if source.enabled]

    def source(self, name: str) -> DiscoverySource | None:
        """The first enabled entry for ``name`` (``GetDiscoveryConfig``)."""
        return next((s for s in self.sources if s.source == name and s.enabled), None)


def config_map_location(environ: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """(namespace, name) of the ConfigMap, as vc-controller-manager finds it: its own
    namespace (``KUBE_POD_NAMESPACE``) and ``<HELM_RELEASE_NAME>-controller-configmap``."""
    namespace = environ.get(NAMESPACE_ENV) or DEFAULT_NAMESPACE
    release = environ.get(RELEASE_NAME_ENV) or DEFAULT_RELEASE_NAME
    return namespace, f"{release}-controller-configmap"


def config_from_config_map(config_map: Mapping[str, Any]) -> NetworkTopologyConfig:
    data = config_map.get("data") or {}
    if CONFIG_KEY not in data:
        raise DiscoveryConfigError(f"config key not found in ConfigMap: {CONFIG_KEY}")
    return parse_network_topology_config(str(data[CONFIG_KEY]))


def parse_network_topology_config(text: str) -> NetworkTopologyConfig:
    try:
        # yaml.v2's Unmarshal reads the first document only.
        document = next(yaml.safe_load_all(text), None)
    except yaml.YAMLError as error:
        raise DiscoveryConfigError(f"failed to parse config: {error}") from None
    if document is None:
        return NetworkTopologyConfig()
    if not isinstance(document, Mapping):
        raise DiscoveryConfigError("failed to parse config: the document is not a mapping")
    warnings = [
        f"unknown key {key!r} (ignored)" for key in document if key != "networkTopologyDiscovery"
    ]
    entries = document.get("networkTopologyDiscovery") or []
    if not isinstance(entries, list):
        raise DiscoveryConfigError("networkTopologyDiscovery: must be a list")
    sources = []
    for index, entry in enumerate(entries):
        path = f"networkTopologyDiscovery[{index}]"
        if not isinstance(entry, Mapping):
            raise DiscoveryConfigError(f"{path}: must be a mapping")
        warnings += [
            f"{path}.{key}: unknown key (ignored)" for key in entry if key not in _SOURCE_KEYS
        ]
        sources.append(_source(path, entry))
    return NetworkTopologyConfig(tuple(sources), tuple(warnings))


def _source(path: str, entry: Mapping[str, Any]) -> DiscoverySource:
    source = entry.get("source", "")
    enabled = entry.get("enabled", False)
    if not isinstance(source, str):
        raise DiscoveryConfigError(f"{path}.source: must be a string")
    if not isinstance(enabled, bool):
        raise DiscoveryConfigError(f"{path}.enabled: must be true or false")
    config = entry.get("config") or {}
    if not isinstance(config, Mapping):
        raise DiscoveryConfigError(f"{path}.config: must be a mapping")
    return DiscoverySource(
        source=source,
        enabled=enabled,
        interval=_interval(f"{path}.interval", entry.get("interval")),
        secret_ref=_secret_ref(f"{path}.credentials", entry.get("credentials")),
        config=config,
    )


def _interval(path: str, value: object) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        raise DiscoveryConfigError(f"{path}: must be a duration such as 10m")
    if isinstance(value, int):
        return value / 1e9  # yaml.v2 decodes a bare integer into a Duration as nanoseconds
    try:
        return parse_go_duration_nanos(str(value)) / 1e9
    except DurationError as error:
        raise DiscoveryConfigError(f"{path}: {error}") from None


def _secret_ref(path: str, credentials: object) -> SecretRef | None:
    if credentials is None:
        return None
    if not isinstance(credentials, Mapping):
        raise DiscoveryConfigError(f"{path}: must be a mapping")
    ref = credentials.get("secretRef")
    if ref is None:
        return None
    if not isinstance(ref, Mapping):
        raise DiscoveryConfigError(f"{path}.secretRef: must be a mapping")
    name, namespace = ref.get("name", ""), ref.get("namespace", "")
    if not isinstance(name, str) or not isinstance(namespace, str):
        raise DiscoveryConfigError(f"{path}.secretRef: name and namespace must be strings")
    return SecretRef(name, namespace)
