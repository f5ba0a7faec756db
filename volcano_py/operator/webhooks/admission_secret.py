"""`volcano-py gen-admission-secret`, the cluster side: the serving certificate's Secret and the
caBundle of the webhook configurations, as upstream chart's admission-init Job (its
gen-admission-secret.sh) and vc-webhook-manager's ``addCaCertForWebhook`` do between them.

* The Secret (type kubernetes.io/tls: ``tls.crt``, ``tls.key``, ``ca.crt``) is kept when it
  is still good for the Service (signed by its CA, naming the Service, far from expiry), so
  re-running the Job (every ``helm upgrade``, every ``kubectl apply`` after its TTL) changes
  nothing; else a new CA and certificate replace it.
* Each named webhook configuration is waited for (it may be applied after the Job starts),
  then every webhook in it whose caBundle differs gets the CA, in one JSON patch that first
  tests each webhook's name (a concurrent edit fails the patch instead of being overwritten).

The Job's ServiceAccount needs exactly: get/update of that Secret, create of Secrets in its
namespace, get/patch of those configurations (deploy/base/webhooks-certgen.yaml).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from volcano_py.operator.webhooks.certgen import (
    ServingCertificate,
    make_serving_certificate,
    service_dns_names,
    still_good,
)
from volcano_py.runtime.apiclient import ApiError, KubeApi

log = logging.getLogger(__name__)

_ADMISSION: Final = "/apis/admissionregistration.k8s.io/v1"
KINDS: Final = {
    "mutating": "mutatingwebhookconfigurations",
    "validating": "validatingwebhookconfigurations",
}

# What the Job's ServiceAccount may do (deploy/base/webhooks-certgen.yaml; tests/operator keeps
# the manifest equal): verbs on any Secret of its namespace, on its own Secret by name, and on
# each of the webhook configurations it is given, by name.
SECRETS_VERBS: Final = frozenset({"create"})  # create cannot be narrowed by name
OWN_SECRET_VERBS: Final = frozenset({"get", "update"})
CONFIGURATION_VERBS: Final = frozenset({"get", "patch"})


@dataclass(frozen=True, slots=True)
class SecretRequest:
    service: str
    namespace: str
    secret: str
    days: int = 3650
    min_days_left: int = 30


def _decode(data: dict[str, str], key: str) -> bytes:
    return base64.b64decode(data.get(key, ""))


def _secret_body(request: SecretRequest, made: ServingCertificate) -> dict[str, Any]:
    encode = {
        "ca.crt": made.ca_crt, "tls.crt": made.tls_crt, "tls.key": made.tls_key,
    }  # fmt: skip
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": request.secret,
            "namespace": request.namespace,
            "labels": {"app.kubernetes.io/managed-by": "volcano-py-gen-admission-secret"},
        },
        "type": "kubernetes.io/tls",
        "data": {key: base64.b64encode(value).decode() for key, value in encode.items()},
    }


async def ensure_secret(api: KubeApi, request: SecretRequest) -> bytes:
    """The Secret holding a serving certificate good for the Service; the CA's PEM."""
    url = f"/api/v1/namespaces/{request.namespace}/secrets/{request.secret}"
    names = service_dns_names(request.service, request.namespace)
    try:
        current: dict[str, Any] | None = await api.request("GET", url)
    except ApiError as error:
        if not error.not_found:
            raise
        current = None
    if current is not None:
        data = current.get("data") or {}
        found = ServingCertificate(
            _decode(data, "ca.crt"), _decode(data, "tls.crt"), _decode(data, "tls.key")
        )
        why = still_good(found, names, min_days_left=request.min_days_left)
        if not why:
            log.info("secret %s/%s is still good; kept", request.namespace, request.secret)
            return found.ca_crt
        log.info("secret %s/%s replaced: %s", request.namespace, request.secret, why)
    made = make_serving_certificate(names, days=request.days)
    body = _secret_body(request, made)
    if current is None:
        await api.request("POST", f"/api/v1/namespaces/{request.namespace}/secrets", body)
        log.info("secret %s/%s created for %s", request.namespace, request.secret, names[2])
    else:
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        await api.request("PUT", url, body)
    return made.ca_crt


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


def ca_bundle_patch(configuration: dict[str, Any], bundle: str) -> list[dict[str, Any]]:
    """The JSON patch setting ``bundle`` on every webhook lacking it ([] when none does)."""
    patch: list[dict[str, Any]] = []
    for index, webhook in enumerate(configuration.get("webhooks") or []):
        client = webhook.get("clientConfig") or {}
        if client.get("caBundle") == bundle:
            continue
        path = f"/webhooks/{index}"
        patch.append({"op": "test", "path": f"{path}/name", "value": webhook["name"]})
        if "clientConfig" not in webhook:
            patch.append({"op": "add", "path": f"{path}/clientConfig", "value": {}})
        patch.append({"op": "add", "path": f"{path}/clientConfig/caBundle", "value": bundle})
    return patch


async def inject_ca(
    api: KubeApi,
    configurations: Sequence[tuple[str, str]],
    ca_pem: bytes,
    *,
    timeout: float = 300.0,
    interval: float = 1.0,
) -> list[str]:
    """Set the CA on each (kind, name) configuration, kind "mutating" or "validating"; the
    names of those changed. Raises ApiError when one is still missing after ``timeout``."""
    bundle = base64.b64encode(ca_pem).decode()
    changed = []
    for kind, name in configurations:
        url = f"{_ADMISSION}/{KINDS[kind]}/{name}"
        patch = ca_bundle_patch(await _wait_for(api, url, timeout, interval), bundle)
        if patch:
            await api.request("PATCH", url, patch, content_type="application/json-patch+json")
            changed.append(name)
    log.info("caBundle set on %s", ", ".join(changed) if changed else "nothing (all current)")
    return changed
