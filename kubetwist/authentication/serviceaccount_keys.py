# -*- test-case-name: tests.authentication.test_serviceaccount -*-
"""
The service-account token keys: upstream C{k8s.io/client-go/util/keyutil} (C{PublicKeysFromFile},
C{PrivateKeyFromFile}) as kube-apiserver reads C{--service-account-signing-key-file} and
C{--service-account-key-file}, and C{pkg/serviceaccount/jwt.go keyIDFromPublicKey} (the C{kid}).

With no key files kubetwist generates an RSA 2048 key pair (C{sa.key}, C{sa.pub}) in the
certificate directory once and reuses it, as a kubeadm-made cluster has one.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

#: The generated key pair's file names in the certificate directory (kubeadm's names).
SA_KEY_FILE = "sa.key"
SA_PUB_FILE = "sa.pub"


def key_id(public_key: Any) -> str:
    """
    Upstream C{keyIDFromPublicKey}: the unpadded base64url SHA-256 of the public key's PKIX DER.

    @param public_key: an RSA or ECDSA public key (C{cryptography}).
    @return: 43 characters.
    """
    der = public_key.public_bytes(serialization.Encoding.DER,
                                  serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


def _pem_blocks(data: bytes) -> list[bytes]:
    blocks = []
    start = 0
    while True:
        begin = data.find(b"-----BEGIN ", start)
        if begin < 0:
            return blocks
        end_marker = data.find(b"-----END ", begin)
        if end_marker < 0:
            return blocks
        end = data.find(b"-----", end_marker + 9)
        if end < 0:
            return blocks
        blocks.append(data[begin:end + 5] + b"\n")
        start = end + 5


def private_key_from_bytes(data: bytes, path: str = "key") -> Any:
    """
    Upstream C{keyutil.ParsePrivateKeyPEM}: the first RSA or ECDSA private key of a PEM file.

    @raise ValueError: C{data does not contain a valid RSA or ECDSA private key}.
    """
    for block in _pem_blocks(data):
        if b"PRIVATE KEY" not in block.split(b"\n", 1)[0]:
            continue
        try:
            key = serialization.load_pem_private_key(block, password=None)
        except (ValueError, TypeError):
            continue
        if isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
            return key
    raise ValueError(f"data in {path} does not contain a valid RSA or ECDSA private key")


def public_keys_from_bytes(data: bytes, path: str = "key") -> list[Any]:
    """
    Upstream C{keyutil.ParsePublicKeysPEM}: every RSA/ECDSA public key of a PEM file, taken from
    public keys, private keys and certificates alike, in file order.

    @raise ValueError: C{data does not contain any valid RSA or ECDSA public keys}.
    """
    keys = []
    for block in _pem_blocks(data):
        head = block.split(b"\n", 1)[0]
        try:
            if b"CERTIFICATE" in head:
                key = x509.load_pem_x509_certificate(block).public_key()
            elif b"PRIVATE KEY" in head:
                key = serialization.load_pem_private_key(block, password=None).public_key()
            elif b"PUBLIC KEY" in head:
                key = serialization.load_pem_public_key(block)
            else:
                continue
        except (ValueError, TypeError):
            continue
        if isinstance(key, (rsa.RSAPublicKey, ec.EllipticCurvePublicKey)):
            keys.append(key)
    if not keys:
        raise ValueError(f"data in {path} does not contain any valid RSA or ECDSA public keys")
    return keys


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"open {path}: {(e.strerror or str(e)).lower()}") from None


def generate_key_pair(cert_dir: str) -> tuple[str, str]:
    """
    C{<cert_dir>/sa.key} (RSA 2048, PKCS#1 PEM, mode 0600) and C{sa.pub} (PKIX PEM), created
    when missing, else kept as they are.

    @return: C{(private key path, public key path)}.
    """
    key_path = os.path.join(cert_dir, SA_KEY_FILE)
    pub_path = os.path.join(cert_dir, SA_PUB_FILE)
    if not os.path.exists(key_path):
        os.makedirs(cert_dir, exist_ok=True)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        if os.path.exists(pub_path):
            os.unlink(pub_path)
    if not os.path.exists(pub_path):
        key = private_key_from_bytes(_read(key_path), key_path)
        with open(pub_path, "wb") as f:
            f.write(key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return key_path, pub_path


@dataclass
class ServiceAccountKeys:
    """
    @ivar signing_key: the private key tokens are signed with (RSA or ECDSA).
    @ivar public_keys: the keys tokens are verified with (the signing key's public key first).
    """

    signing_key: Any
    public_keys: list[Any] = field(default_factory=list)


def load_service_account_keys(signing_key_file: str = "", key_files: Sequence[str] = (),
                              cert_dir: str = "") -> ServiceAccountKeys:
    """
    The keys as kube-apiserver takes them from its flags: C{--service-account-signing-key-file}
    signs; C{--service-account-key-file} (repeatable) verifies, defaulting to the signing key
    file.  With neither, the generated C{sa.key}/C{sa.pub} of C{cert_dir} (L{generate_key_pair}).
    Blocking file work: call at start-up.

    @raise ValueError: an unreadable file or one without a usable key (one line naming it).
    """
    if not signing_key_file and not key_files:
        signing_key_file, pub = generate_key_pair(cert_dir)
        key_files = [pub]
    if not signing_key_file:
        raise ValueError("service-account-signing-key-file is required")
    signing = private_key_from_bytes(_read(signing_key_file), signing_key_file)
    publics: list[Any] = []
    for path in key_files or [signing_key_file]:
        publics.extend(public_keys_from_bytes(_read(path), path))
    own = key_id(signing.public_key())
    if own not in {key_id(k) for k in publics}:
        publics.insert(0, signing.public_key())
    return ServiceAccountKeys(signing, publics)


__all__ = [
    "SA_KEY_FILE", "SA_PUB_FILE", "ServiceAccountKeys", "generate_key_pair", "key_id",
    "load_service_account_keys", "private_key_from_bytes", "public_keys_from_bytes",
]
