"""``--ca-cert-file``: put the CA into the webhook configurations (vc-webhook-manager's
``addCaCertForWebhook``), so the API server can verify the webhooks' serving certificate.

Volcano's chart creates one configuration per webhook path, named
``volcano-admission-service`` + the path with ``/`` as ``-`` (``/jobs/mutate`` ->
``volcano-admission-service-jobs-mutate``): a MutatingWebhookConfiguration for a ``/mutate``
path, a ValidatingWebhookConfiguration for a ``/validate`` one. As upstream, each is waited
for (it may be created after this process starts), then every webhook in it whose
``clientConfig.caBundle`` differs gets the CA, in one update.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from collections.abc import Iterable
from typing import Any, Final

from volcano_py.runtime.apiclient import ApiError, KubeApi

log = logging.getLogger(__name__)

NAME_PREFIX: Final = "volcano-admission-service"
_API: Final = "/apis/admissionregistration.k8s.io/v1"


def configuration_url(path: str) -> str:
    kind = "mutatingwebhookconfigurations" if path.endswith("/mutate") else (
        "validatingwebhookconfigurations"
    )  # fmt: skip
    return f"{_API}/{kind}/{NAME_PREFIX}{path.replace('/', '-')}"


async def _wait_for(api: KubeApi, url: str, timeout: float, interval: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        try:
            found: dict[str, Any] = await api.request("GET", url)
            return found
        except ApiError as error:
            if not error.not_found or time.monotonic() >= deadline:
                raise
            log.info("waiting for %s to exist", url.rsplit("/", 1)[1])
        await asyncio.sleep(interval)


async def inject_ca_bundle(
    api: KubeApi,
    paths: Iterable[str],
    ca_pem: bytes,
    *,
    timeout: float = 300.0,
    interval: float = 1.0,
) -> list[str]:
    """Set the CA on the configurations of ``paths``; the names of those updated. Raises
    ApiError when one is still missing after ``timeout`` or cannot be read or written."""
    bundle = base64.b64encode(ca_pem).decode()
    updated = []
    for path in paths:
        url = configuration_url(path)
        configuration = await _wait_for(api, url, timeout, interval)
        changed = False
        for webhook in configuration.get("webhooks") or []:
            client = webhook.setdefault("clientConfig", {})
            if client.get("caBundle") != bundle:
                client["caBundle"] = bundle
                changed = True
        if changed:
            await api.request("PUT", url, configuration)
            updated.append(url.rsplit("/", 1)[1])
    if updated:
        log.info("set the CA of %s", ", ".join(updated))
    return updated
