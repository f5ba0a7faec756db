"""The webhooks' serving certificate, made for them: a private CA and a serving certificate it
signs for the webhook Service's DNS names (what upstream chart's admission-init Job makes with
openssl, here with the ``cryptography`` package). The API server verifies the serving
certificate against the CA, which goes into each webhook configuration's caBundle.

ECDSA P-256 keys (quick to make, accepted by every API server since 1.0).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True, slots=True)
class ServingCertificate:
    """PEM bytes: the CA certificate, the serving certificate and its private key."""

    ca_crt: bytes
    tls_crt: bytes
    tls_key: bytes


def service_dns_names(service: str, namespace: str) -> list[str]:
    """The names a client may use for the Service; the API server uses
    ``<service>.<namespace>.svc``."""
    return [
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.cluster.local",
    ]


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _key_usage(*, signs_certificates: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=signs_certificates,
        crl_sign=signs_certificates,
        encipher_only=False,
        decipher_only=False,
    )


def make_serving_certificate(
    dns_names: list[str], *, days: int, now: datetime.datetime | None = None
) -> ServingCertificate:
    """A fresh CA and a serving certificate for ``dns_names`` signed by it, both valid for
    ``days`` from ``now`` (an hour earlier, for clocks behind ours)."""
    if not dns_names:
        raise ValueError("a serving certificate needs at least one DNS name")
    if days < 1:
        raise ValueError(f"validity of {days} days: must be at least 1")
    start = (now or datetime.datetime.now(datetime.UTC)) - datetime.timedelta(hours=1)
    end = start + datetime.timedelta(days=days, hours=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name(f"{dns_names[0]}-ca")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(signs_certificates=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    serving = (
        x509.CertificateBuilder()
        .subject_name(_name(dns_names[0]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(signs_certificates=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName(name) for name in dns_names]),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return ServingCertificate(
        ca_crt=ca.public_bytes(serialization.Encoding.PEM),
        tls_crt=serving.public_bytes(serialization.Encoding.PEM),
        tls_key=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


def still_good(
    found: ServingCertificate,
    dns_names: list[str],
    *,
    min_days_left: int,
    now: datetime.datetime | None = None,
) -> str:
    """Why ``found`` must be replaced ("" when it can be kept): unreadable, not signed by
    its CA, not naming every one of ``dns_names``, not matching its key, or fewer than
    ``min_days_left`` days of validity left."""
    moment = now or datetime.datetime.now(datetime.UTC)
    try:
        ca = x509.load_pem_x509_certificate(found.ca_crt)
        serving = x509.load_pem_x509_certificate(found.tls_crt)
        key = serialization.load_pem_private_key(found.tls_key, password=None)
    except ValueError as error:
        return f"unreadable ({error})"
    try:
        serving.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return "tls.crt is not signed by ca.crt"
    if key.public_key() != serving.public_key():
        return "tls.key is not the key of tls.crt"
    try:
        names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return "tls.crt has no subjectAltName"
    missing = sorted(set(dns_names) - set(names.value.get_values_for_type(x509.DNSName)))
    if missing:
        return f"tls.crt does not name {', '.join(missing)}"
    ends = min(serving.not_valid_after_utc, ca.not_valid_after_utc)
    if ends - moment < datetime.timedelta(days=min_days_left):
        return f"it expires on {ends:%Y-%m-%d}, within {min_days_left} days"
    if max(serving.not_valid_before_utc, ca.not_valid_before_utc) > moment:
        return "it is not valid yet"
    return ""
