"""vcctl's connection to the API server, and API errors worded as client-go words them.

``--master``/``-s`` and ``--kubeconfig``/``-k`` work as upstream's ``util.BuildConfig``
(client-go's deferred loading rules): the kubeconfig named by ``-k``, else ``KUBECONFIG`` or
``~/.kube/config``, else the in-cluster service account; ``-s`` overrides the server, and alone
(no kubeconfig anywhere) it is enough: requests then go out without credentials.

Requests go through the project's own `KubeApi` (the client of the live processes), one
event loop per command.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar
from urllib.parse import quote

from volcano_py.runtime.apiclient import JSON, MERGE_PATCH, ApiError, ClusterAccess, KubeApi

T = TypeVar("T")


class CommandError(Exception):
    """A failure the command reports as upstream's ``util.CheckError`` does:
    ``Failed to <verb> <noun>: <message>``, exit status 255."""


def cluster_access(master: str, kubeconfig: str) -> ClusterAccess:
    # KUBECONFIG read now, not when the kubernetes package was imported (its default).
    path = kubeconfig or os.environ.get("KUBECONFIG", "")
    try:
        access = ClusterAccess.load(path or None)
    except Exception as error:
        if kubeconfig or not master:
            detail = str(error) or type(error).__name__
            if not kubeconfig:
                detail = (
                    "no configuration has been provided, try setting KUBERNETES_MASTER "
                    f"environment variable ({detail})"
                )
            raise CommandError(f"invalid configuration: {detail}") from None
        access = ClusterAccess(server="")
    if not master:
        return access
    if "://" not in master:
        # client-go: a bare host:port is https when TLS is configured, else http.
        secure = bool(access.ca_file or access.cert_file or access.server.startswith("https"))
        master = ("https://" if secure else "http://") + master
    return replace(access, server=master.rstrip("/"))


class Client:
    """The few calls vcctl makes; every failure becomes a `CommandError`."""

    def __init__(self, api: KubeApi) -> None:
        self.api = api

    @property
    def server(self) -> str:
        return self.api.access.server

    async def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = JSON,
        params: Mapping[str, str] | None = None,
    ) -> Any:
        try:
            return await self.api.request(
                method, path, body, params=params, content_type=content_type
            )
        except ApiError as error:
            raise CommandError(self.describe(error, params)) from None
        except ValueError as error:
            raise CommandError(f"the API server's answer is not JSON: {error}") from None

    def describe(self, error: ApiError, params: Mapping[str, str] | None = None) -> str:
        """client-go's wording: the Status message, or ``Get "url": <cause>``."""
        if error.status == 0:
            query = "?" + "&".join(f"{k}={quote(v)}" for k, v in params.items()) if params else ""
            cause = error.message.split(": ", 1)[-1]
            return f'{error.method.capitalize()} "{self.server}{error.path}{query}": {cause}'
        if error.message:
            return error.message
        if error.status == 404:
            return "the server could not find the requested resource"
        return (
            f'an error on the server ("{error.status}") has prevented the request from succeeding'
        )

    async def get(self, path: str) -> dict[str, Any]:
        found: dict[str, Any] = await self._call("GET", path) or {}
        return found

    async def list(self, path: str, label_selector: str = "") -> list[dict[str, Any]]:
        params = {"labelSelector": label_selector} if label_selector else None
        answer = await self._call("GET", path, params=params) or {}
        items: list[dict[str, Any]] = answer.get("items") or []
        return items

    async def create(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        created: dict[str, Any] = await self._call("POST", path, dict(body)) or {}
        return created

    async def delete(self, path: str) -> None:
        await self._call("DELETE", path)

    async def merge_patch(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        patched: dict[str, Any] = (
            await self._call("PATCH", path, dict(body), content_type=MERGE_PATCH) or {}
        )
        return patched


def run_with_client(master: str, kubeconfig: str, work: Callable[[Client], Awaitable[T]]) -> T:
    """Connect as upstream's ``BuildConfig`` does, then run ``work`` on one event loop."""
    access = cluster_access(master, kubeconfig)

    async def session() -> T:
        if not access.server:
            raise CommandError(
                "invalid configuration: no configuration has been provided, try setting "
                "KUBERNETES_MASTER environment variable"
            )
        async with KubeApi(access, qps=50.0, burst=100, user_agent="vcctl") as api:
            return await work(Client(api))

    return asyncio.run(session())
