"""The live HyperNode controller (``pkg/controllers/hypernode``): network topology
auto-discovery and each HyperNode's ``status.nodeCount``.

Discovery is configured by the ``volcano-controller.conf`` key of the
``<release>-controller-configmap`` ConfigMap in the controllers' namespace
(``controllers/hypernode_config.py``); a change to it stops the sources no longer enabled and
restarts the enabled ones. Two sources run, as upstream's:

* ``label``: HyperNodes from node labels, rediscovered whenever a node's topology labels
  change, a labelled node comes or goes, or a HyperNode is deleted;
* ``ufm``: HyperNodes from NVIDIA UFM's REST API, polled every ``interval`` (default 1h) with
  the user name and password of the Secret ``credentials.secretRef`` names.

Each result replaces that source's HyperNodes (those labelled
``volcano.sh/network-topology-source=<source>``): new ones created, changed ones updated, the
rest deleted; HyperNodes made by hand or by another source are never touched. Any other
source (upstream's configuration example names ``roce``, which it cannot run either) is
logged as unsupported.

All work goes through one keyed queue, so one source's discovery and its writes never
overlap: ``config`` (reload), ``start/<source>`` (start a source; one that fails is retried
with backoff), ``label`` (rediscover), ``result/ufm`` (apply the latest poll), ``status/<name>``
(node count).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
from collections.abc import Callable, Mapping
from typing import Any, Final

import aiohttp

from volcano_py.controllers import raw
from volcano_py.controllers.hypernode_config import (
    DiscoveryConfigError,
    DiscoverySource,
    NetworkTopologyConfig,
    config_from_config_map,
    config_map_location,
)
from volcano_py.controllers.hypernode_label_discovery import SOURCE as LABEL_SOURCE
from volcano_py.controllers.hypernode_label_discovery import (
    LabelTopology,
    discover_from_labels,
    parse_label_topology,
    random_suffix,
)
from volcano_py.controllers.hypernode_objects import member_node_count, reconcile
from volcano_py.controllers.hypernode_ufm_discovery import (
    MAX_BODY_BYTES,
    REQUEST_TIMEOUT,
    UfmDataError,
    discover_from_ufm,
    ports_url,
)
from volcano_py.controllers.hypernode_ufm_discovery import SOURCE as UFM_SOURCE
from volcano_py.operator.controllers.ports import ApiRequests
from volcano_py.operator.controllers.store import ObjectStore
from volcano_py.operator.controllers.workqueue import KeyedWorkQueue, RetryLater
from volcano_py.operator.informer import HYPER_NODE
from volcano_py.runtime.apiclient import ApiError

log = logging.getLogger(__name__)

CONFIG_KEY: Final = "config"
LABEL_KEY: Final = "label"
SUPPORTED_SOURCES: Final = (LABEL_SOURCE, UFM_SOURCE)


class UfmSourceError(ValueError):
    """The ufm source cannot start; the message says which setting is missing."""


class HyperNodeController:
    def __init__(
        self,
        api: ApiRequests,
        store: ObjectStore,
        *,
        may_work: Callable[[], bool] = lambda: True,
        environ: Mapping[str, str] = os.environ,
        name_suffix: Callable[[], str] = random_suffix,
    ) -> None:
        self.api = api
        self.store = store
        self.name_suffix = name_suffix
        self.config_namespace, self.config_name = config_map_location(environ)
        self.queue: KeyedWorkQueue[None] = KeyedWorkQueue(
            "hypernode", self._handle, workers=1, may_work=may_work
        )
        self.config = NetworkTopologyConfig()
        self.label_topology: LabelTopology | None = None
        self.pollers: dict[str, asyncio.Task[None]] = {}
        self.pending_results: dict[str, list[dict[str, Any]]] = {}  # the latest ufm poll

    # ---- events

    @property
    def config_map_key(self) -> str:
        return f"{self.config_namespace}/{self.config_name}"

    def wants_config_map(self, key: str) -> bool:
        return key == self.config_map_key

    def start(self) -> None:
        """Load the configuration once the informers have listed (``manager.Start``)."""
        self.queue.add(CONFIG_KEY, None)

    def on_config_map(self) -> None:
        self.queue.add(CONFIG_KEY, None)

    def on_node(
        self, event_type: str, old: Mapping[str, Any] | None, node: Mapping[str, Any]
    ) -> None:
        topology = self.label_topology
        if topology is None:
            return
        labels = topology.topology_labels(raw.labels_of(node))
        if event_type == "MODIFIED" and old is not None:
            changed = labels != topology.topology_labels(raw.labels_of(old))
        else:  # a node with topology labels came or went
            changed = bool(labels)
        if changed:
            self.queue.add(LABEL_KEY, None)

    def on_hyper_node(self, event_type: str, hyper_node: Mapping[str, Any]) -> None:
        if event_type == "DELETED":
            if self.label_topology is not None:
                self.queue.add(LABEL_KEY, None)
            return
        self.queue.add(f"status/{raw.name(hyper_node)}", None)

    def stop(self) -> None:
        for source in list(self.pollers):
            self._stop_source(source)

    # ---- work

    async def _handle(self, key: str, _requests: list[None]) -> None:
        if key == CONFIG_KEY:
            self._load_config()
        elif key.startswith("start/"):
            await self._start_source(key.removeprefix("start/"))
        elif key == LABEL_KEY:
            await self._discover_labels()
        elif key.startswith("result/"):
            source = key.removeprefix("result/")
            discovered = self.pending_results.get(source)
            if discovered is not None and source in self.pollers:
                await self._apply(source, discovered)  # on failure kept, and retried
            if self.pending_results.get(source) is discovered:
                self.pending_results.pop(source, None)
        elif key.startswith("status/"):
            await self._sync_node_count(key.removeprefix("status/"))

    def _load_config(self) -> None:
        config_map = self.store.get("ConfigMap", self.config_map_key)
        try:
            config = (
                config_from_config_map(config_map)
                if config_map is not None
                else NetworkTopologyConfig()
            )
        except DiscoveryConfigError as error:
            # As upstream: a configuration that cannot be read is retried, the running
            # sources keep running meanwhile.
            raise RetryLater(f"ConfigMap {self.config_map_key}: {error}") from None
        for warning in config.warnings:
            log.warning("ConfigMap %s: %s", self.config_map_key, warning)
        for source in set(self.config.enabled_sources()) - set(config.enabled_sources()):
            log.info("Stopping network discovery source %s", source)
            self._stop_source(source)
        self.config = config
        for source in config.enabled_sources():
            self._stop_source(source)
            self.queue.add(f"start/{source}", None)

    def _stop_source(self, source: str) -> None:
        if source == LABEL_SOURCE:
            self.label_topology = None
        poller = self.pollers.pop(source, None)
        if poller is not None:
            poller.cancel()

    async def _start_source(self, name: str) -> None:
        source = self.config.source(name)
        if source is None:
            return  # disabled again since
        if name == LABEL_SOURCE:
            topology = parse_label_topology(source.config)
            for problem in topology.problems:
                log.error("network discovery source label: %s (this type is left out)", problem)
            self.label_topology = topology
            self.queue.add(LABEL_KEY, None)
        elif name == UFM_SOURCE:
            try:
                endpoint, username, password = await self._ufm_settings(source)
            except UfmSourceError as error:
                raise RetryLater(f"network discovery source ufm cannot start: {error}") from None
            poller = asyncio.create_task(
                self._poll_ufm(source, endpoint, username, password), name="ufm discovery"
            )
            poller.add_done_callback(_log_failure)
            self.pollers[name] = poller
        else:
            log.error("unsupported discoverer type: %s (volcano-py runs label and ufm)", name)
            return
        log.info("Started network topology discoverer %s", name)

    # ---- label

    async def _discover_labels(self) -> None:
        topology = self.label_topology
        if topology is None:
            return
        node_labels = {name: raw.labels_of(node) for name, node in self.store.items("Node")}
        existing = [hyper_node for _, hyper_node in self.store.items("HyperNode")]
        discovered = discover_from_labels(topology, node_labels, existing, self.name_suffix)
        await self._apply(LABEL_SOURCE, discovered)

    # ---- ufm

    async def _ufm_settings(self, source: DiscoverySource) -> tuple[str, str, str]:
        endpoint = source.config.get("endpoint")
        if not isinstance(endpoint, str) or not endpoint:
            raise UfmSourceError("config.endpoint is not set")
        if source.secret_ref is None:
            raise UfmSourceError("credentials.secretRef is not set")
        ref = source.secret_ref
        path = f"/api/v1/namespaces/{ref.namespace}/secrets/{ref.name}"
        try:
            secret = await self.api.request("GET", path)
        except ApiError as error:
            raise UfmSourceError(
                f"cannot read Secret {ref.namespace}/{ref.name}: {error}"
            ) from None
        data = secret.get("data") or {}
        credentials = []
        for field_name in ("username", "password"):
            if not data.get(field_name):
                raise UfmSourceError(f"{field_name} not found in Secret {ref.namespace}/{ref.name}")
            credentials.append(base64.b64decode(data[field_name]).decode())
        return endpoint, credentials[0], credentials[1]

    async def _poll_ufm(
        self, source: DiscoverySource, endpoint: str, username: str, password: str
    ) -> None:
        skip_verify = source.config.get("insecureSkipVerify") is True
        if skip_verify:
            log.warning(
                "network discovery source ufm: TLS certificate verification is disabled"
                " (insecureSkipVerify); do not use this in production"
            )
        url = ports_url(endpoint)
        token = base64.b64encode(f"{username}:{password}".encode()).decode()
        headers = {"Authorization": f"Basic {token}"}
        timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)
        connector = aiohttp.TCPConnector(ssl=not skip_verify)
        async with aiohttp.ClientSession(
            headers=headers, timeout=timeout, connector=connector
        ) as http:
            while True:
                try:
                    discovered = discover_from_ufm(await _fetch_json(http, url))
                except (aiohttp.ClientError, TimeoutError, UfmDataError, ValueError) as error:
                    log.error("network discovery source ufm: %s: %s", url, error)
                else:
                    self._apply_later(UFM_SOURCE, discovered)
                await asyncio.sleep(source.interval_or_default)

    def _apply_later(self, source: str, discovered: list[dict[str, Any]]) -> None:
        """Hand a poll's result to the queue, so its writes never overlap another's."""
        self.pending_results[source] = discovered
        self.queue.add(f"result/{source}", None)

    # ---- writes

    async def _apply(self, source: str, discovered: list[dict[str, Any]]) -> None:
        existing = [hyper_node for _, hyper_node in self.store.items("HyperNode")]
        changes = reconcile(source, discovered, existing)
        collection = HYPER_NODE.collection_path
        for hyper_node in changes.create:
            name = raw.name(hyper_node)
            log.info("Creating HyperNode %s (source %s)", name, source)
            await self._write("POST", collection, hyper_node)
        for _current, updated in changes.update:
            log.info("Updating HyperNode %s (source %s)", raw.name(updated), source)
            await self._write("PUT", f"{collection}/{raw.name(updated)}", updated)
        for name in changes.delete:
            log.info("Deleting HyperNode %s (source %s)", name, source)
            try:
                await self.api.request("DELETE", f"{collection}/{name}")
            except ApiError as error:
                if not error.not_found:
                    raise RetryLater(f"delete HyperNode {name}: {error}") from None
            self.store.apply("HyperNode", "DELETED", {"metadata": {"name": name}}, False)

    async def _write(self, method: str, path: str, body: Mapping[str, Any]) -> None:
        try:
            reply = await self.api.request(method, path, body)
        except ApiError as error:
            raise RetryLater(f"{method} {path}: {error}") from None
        if isinstance(reply, Mapping):
            # Seen at once: a rediscovery before the watch delivers it must not name it anew.
            self.store.apply("HyperNode", "MODIFIED", reply, False)

    async def _sync_node_count(self, name: str) -> None:
        hyper_node = self.store.get("HyperNode", name)
        if hyper_node is None:
            return
        node_labels = {node: raw.labels_of(obj) for node, obj in self.store.items("Node")}
        count = member_node_count(hyper_node, node_labels)
        status = dict(hyper_node.get("status") or {})
        if status.get("nodeCount") == count:
            return
        status["nodeCount"] = count
        body = {**hyper_node, "status": status}
        await self._write("PUT", f"{HYPER_NODE.collection_path}/{name}/status", body)


async def _fetch_json(http: aiohttp.ClientSession, url: str) -> object:
    async with http.get(url) as response:
        if response.status != 200:
            raise UfmDataError(f"unexpected status code: {response.status} {response.reason}")
        body = await response.content.read(MAX_BODY_BYTES + 1)
        if len(body) > MAX_BODY_BYTES:
            raise UfmDataError(f"the answer is larger than {MAX_BODY_BYTES} bytes")
        return json.loads(body)


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("%s stopped: %r", task.get_name(), task.exception())
