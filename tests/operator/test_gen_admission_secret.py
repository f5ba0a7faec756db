"""`volcano-py gen-admission-secret`'s certificate and caBundle patch: the serving certificate
verifies against the CA for the Service's DNS names under TLS (a real handshake on 127.0.0.1
with the name the API server uses), a kept Secret is judged as the Job would judge it, and
the caBundle patch touches only the webhooks lacking the CA. (Against the API server, as its
ServiceAccount: tests/cluster/test_deploy_install.py.)"""

from __future__ import annotations

import base64
import datetime
import socket
import ssl
import tempfile
import threading
from pathlib import Path

import pytest

from volcano_py.cli.main import main
from volcano_py.operator.webhooks.admission_secret import ca_bundle_patch
from volcano_py.operator.webhooks.certgen import (
    ServingCertificate,
    make_serving_certificate,
    service_dns_names,
    still_good,
)

NAMES = service_dns_names("volcano-py-webhooks", "volcano-system")


def test_dns_names_include_the_one_the_api_server_uses() -> None:
    assert "volcano-py-webhooks.volcano-system.svc" in NAMES
    assert NAMES[0] == "volcano-py-webhooks"


def _handshake(made: ServingCertificate, server_name: str) -> None:
    """A TLS handshake: a server with the serving certificate, a client trusting only the CA
    and checking ``server_name`` (as the API server calling a webhook Service)."""
    with tempfile.TemporaryDirectory() as directory:
        cert, key, ca = (Path(directory) / name for name in ("tls.crt", "tls.key", "ca.crt"))
        cert.write_bytes(made.tls_crt)
        key.write_bytes(made.tls_key)
        ca.write_bytes(made.ca_crt)
        server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server.load_cert_chain(cert, key)
        client = ssl.create_default_context(cafile=str(ca))
        listener = socket.create_server(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        errors: list[BaseException] = []

        def serve() -> None:
            connection, _ = listener.accept()
            try:
                with server.wrap_socket(connection, server_side=True) as tls:
                    tls.recv(1)
            except (ssl.SSLError, OSError) as error:
                errors.append(error)

        thread = threading.Thread(target=serve)
        thread.start()
        try:
            with (
                socket.create_connection(("127.0.0.1", port)) as raw,
                client.wrap_socket(raw, server_hostname=server_name) as tls,
            ):
                tls.sendall(b"x")
        finally:
            thread.join(5)
            listener.close()


def test_serving_certificate_verifies_against_its_ca_for_the_service_name() -> None:
    made = make_serving_certificate(NAMES, days=30)
    _handshake(made, "volcano-py-webhooks.volcano-system.svc")
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(made, "other.volcano-system.svc")


def test_a_good_secret_is_kept_and_each_flaw_named() -> None:
    made = make_serving_certificate(NAMES, days=365)
    assert still_good(made, NAMES, min_days_left=30) == ""
    other = make_serving_certificate(NAMES, days=365)
    mixed = ServingCertificate(other.ca_crt, made.tls_crt, made.tls_key)
    assert still_good(mixed, NAMES, min_days_left=30) == "tls.crt is not signed by ca.crt"
    wrong_key = ServingCertificate(made.ca_crt, made.tls_crt, other.tls_key)
    assert still_good(wrong_key, NAMES, min_days_left=30) == "tls.key is not the key of tls.crt"
    assert (
        still_good(made, [*NAMES, "x.y.svc"], min_days_left=30) == "tls.crt does not name x.y.svc"
    )
    assert "expires on" in still_good(made, NAMES, min_days_left=400)
    later = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=2)
    assert still_good(made, NAMES, min_days_left=1, now=later) == "it is not valid yet"
    assert still_good(ServingCertificate(b"", b"", b""), NAMES, min_days_left=1).startswith(
        "unreadable"
    )


def test_bad_validity_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        make_serving_certificate(NAMES, days=0)
    with pytest.raises(ValueError, match="DNS name"):
        make_serving_certificate([], days=1)


def test_ca_bundle_patch_sets_only_what_differs_and_tests_each_name() -> None:
    bundle = base64.b64encode(b"CA").decode()
    configuration = {"webhooks": [
        {"name": "a.volcano.sh", "clientConfig": {"caBundle": bundle}},
        {"name": "b.volcano.sh", "clientConfig": {"service": {"name": "s"}}},
        {"name": "c.volcano.sh"},
    ]}  # fmt: skip
    assert ca_bundle_patch(configuration, bundle) == [
        {"op": "test", "path": "/webhooks/1/name", "value": "b.volcano.sh"},
        {"op": "add", "path": "/webhooks/1/clientConfig/caBundle", "value": bundle},
        {"op": "test", "path": "/webhooks/2/name", "value": "c.volcano.sh"},
        {"op": "add", "path": "/webhooks/2/clientConfig", "value": {}},
        {"op": "add", "path": "/webhooks/2/clientConfig/caBundle", "value": bundle},
    ]
    assert ca_bundle_patch({"webhooks": configuration["webhooks"][:1]}, bundle) == []


def test_cli_refuses_a_validity_within_the_renewal_window(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["gen-admission-secret", "--service=s", "--namespace=n", "--secret=x",
            "--validity-days=10", "--renew-days=30"]  # fmt: skip
    assert main(argv) == 2
    assert "--validity-days 10 must exceed --renew-days 30" in capsys.readouterr().err
