# -*- test-case-name: tests.storage.test_value -*-
"""
The encryption providers: upstream C{k8s.io/apiserver/pkg/storage/value/encrypt/} C{aes}
(CBC and GCM), C{secretbox} and C{identity}.

Stored layouts (after the C{k8s:enc:<provider>:v1:<key name>:} prefix, which
L{kubetwist.storage.value.transformer.PrefixTransformers} adds and strips):
  - aescbc: a random 16-byte IV, then AES-CBC of the data with PKCS#7 padding;
  - aesgcm: a random 12-byte nonce, then AES-GCM ciphertext and its 16-byte tag, with the
    backend key as additional authenticated data;
  - secretbox: a random 24-byte nonce, then NaCl C{secretbox} (XSalsa20-Poly1305: tag, then
    ciphertext).

AES comes from C{cryptography}; XSalsa20-Poly1305 (which C{cryptography} lacks) from PyNaCl.
Each call works on one object's bytes (microseconds), so it runs inline like JSON encoding.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from zope.interface import implementer

from kubetwist.storage.value.transformer import ENCRYPTED_PREFIX, ITransformer, TransformError

#: AES block size, bytes.
BLOCK_SIZE = 16
#: AES-GCM nonce size, bytes (upstream refuses anything else).
GCM_NONCE_SIZE = 12
#: AES-GCM tag size, bytes.
GCM_TAG_SIZE = 16
#: NaCl secretbox nonce size and overhead (Poly1305 tag), bytes.
SECRETBOX_NONCE_SIZE = 24
SECRETBOX_OVERHEAD = 16
#: Key sizes each provider accepts, bytes (upstream C{aesKeySizes}, C{secretBoxKeySizes}).
AES_KEY_SIZES = (16, 24, 32)
SECRETBOX_KEY_SIZES = (32,)

_SHORT = "the stored data was shorter than the required size"


@implementer(ITransformer)
class IdentityTransformer:
    """
    Upstream C{identity.NewEncryptCheckTransformer}: stores values as they are, and refuses to
    read a value that starts with C{k8s:enc:} (so an C{identity} provider listed first lets
    later providers decrypt older values during a migration away from encryption).
    """

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        if data.startswith(ENCRYPTED_PREFIX):
            raise TransformError("identity transformer tried to read encrypted data")
        return data, False

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        return data


@implementer(ITransformer)
class AESCBCTransformer:
    """
    Upstream C{aes.NewCBCTransformer}: AES-CBC with a random IV and PKCS#7 padding; no
    authentication (a wrong key shows up as bad padding).

    @param key: 16, 24 or 32 bytes.
    @param random: C{n -> n random bytes} (injectable for tests).
    @raise ValueError: a key of another size.
    """

    def __init__(self, key: bytes, random: Callable[[int], bytes] = os.urandom) -> None:
        self._algorithm = algorithms.AES(key)
        self._random = random

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        if len(data) < BLOCK_SIZE:
            raise TransformError(_SHORT)
        iv, body = data[:BLOCK_SIZE], data[BLOCK_SIZE:]
        if len(body) % BLOCK_SIZE != 0:
            raise TransformError("the stored data is not a multiple of the block size")
        decryptor = Cipher(self._algorithm, modes.CBC(iv)).decryptor()
        result = decryptor.update(body) + decryptor.finalize()
        padding = result[-1] if result else 0
        if padding == 0 or padding > len(result):
            raise TransformError("invalid PKCS7 data (empty or not padded)")
        if result[-padding:] != bytes([padding]) * padding:
            raise TransformError("invalid padding on input")
        return result[:-padding], False

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        padding = BLOCK_SIZE - len(data) % BLOCK_SIZE
        iv = self._random(BLOCK_SIZE)
        if len(iv) != BLOCK_SIZE:
            raise TransformError("unable to read sufficient random bytes")
        encryptor = Cipher(self._algorithm, modes.CBC(iv)).encryptor()
        return iv + encryptor.update(data + bytes([padding]) * padding) + encryptor.finalize()


@implementer(ITransformer)
class AESGCMTransformer:
    """
    Upstream C{aes.NewGCMTransformer}: AES-GCM with a random 12-byte nonce; the context (the
    backend key) is authenticated, so a wrong key, tampering or a value moved to another key
    fails with C{cipher: message authentication failed}.

    @param key: 16, 24 or 32 bytes.
    @param random: C{n -> n random bytes} (injectable for tests).
    @raise ValueError: a key of another size.
    """

    def __init__(self, key: bytes, random: Callable[[int], bytes] = os.urandom) -> None:
        self._aead = AESGCM(key)
        self._random = random

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        if len(data) < GCM_NONCE_SIZE:
            raise TransformError(_SHORT)
        try:
            result = self._aead.decrypt(data[:GCM_NONCE_SIZE], data[GCM_NONCE_SIZE:],
                                        context or None)
        except InvalidTag:
            raise TransformError("cipher: message authentication failed") from None
        return result, False

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        nonce = self._random(GCM_NONCE_SIZE)
        if len(nonce) != GCM_NONCE_SIZE:
            raise TransformError("failed to write nonce for AES-GCM: unexpected EOF")
        return nonce + self._aead.encrypt(nonce, data, context or None)


@implementer(ITransformer)
class SecretboxTransformer:
    """
    Upstream C{secretbox.NewSecretboxTransformer}: NaCl secretbox (XSalsa20-Poly1305) with a
    random 24-byte nonce stored first; the context is not authenticated.

    @param key: 32 bytes.
    @param random: C{n -> n random bytes} (injectable for tests).
    @raise ValueError: a key of another size.
    """

    def __init__(self, key: bytes, random: Callable[[int], bytes] = os.urandom) -> None:
        from nacl.secret import SecretBox

        if len(key) != 32:
            raise ValueError(f"expected key size 32 for secretbox provider, got {len(key)}")
        self._box = SecretBox(key)
        self._random = random

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        from nacl.exceptions import CryptoError

        if len(data) < SECRETBOX_OVERHEAD + SECRETBOX_NONCE_SIZE:
            raise TransformError(_SHORT)
        try:
            result = self._box.decrypt(data[SECRETBOX_NONCE_SIZE:],
                                       data[:SECRETBOX_NONCE_SIZE])
        except CryptoError:
            # upstream's message for a failed Open, verbatim
            raise TransformError("output array was not large enough for encryption") from None
        return result, False

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        nonce = self._random(SECRETBOX_NONCE_SIZE)
        if len(nonce) != SECRETBOX_NONCE_SIZE:
            raise TransformError("unable to read sufficient random bytes")
        return bytes(self._box.encrypt(data, nonce))
