# -*- test-case-name: tests.storage.test_value -*-
"""
Encryption at rest: upstream C{k8s.io/apiserver/pkg/storage/value} (transformers, the
C{aescbc}/C{aesgcm}/C{secretbox}/C{identity} providers) and
C{pkg/server/options/encryptionconfig} (C{--encryption-provider-config}).

L{load_encryption_config} reads an EncryptionConfiguration into L{ResourceTransformers};
L{kubetwist.storage.kv.KVStorageBase} applies it to every value it writes and reads (its
C{transformer} attribute).
"""

from kubetwist.storage.value.config import (
    EncryptionConfigError,
    load_encryption_config,
    parse_encryption_config,
    with_encryption_config,
)
from kubetwist.storage.value.encrypt import (
    AESCBCTransformer,
    AESGCMTransformer,
    IdentityTransformer,
    SecretboxTransformer,
)
from kubetwist.storage.value.transformer import (
    InternalError,
    ITransformer,
    PrefixTransformers,
    ResourceTransformers,
    TransformError,
    group_resource_for_key,
)

__all__ = [
    "AESCBCTransformer",
    "AESGCMTransformer",
    "EncryptionConfigError",
    "ITransformer",
    "IdentityTransformer",
    "InternalError",
    "PrefixTransformers",
    "ResourceTransformers",
    "SecretboxTransformer",
    "TransformError",
    "group_resource_for_key",
    "load_encryption_config",
    "parse_encryption_config",
    "with_encryption_config",
]
