# -*- test-case-name: tests.storage.test_etcd3,tests.storage.test_etcd3_tls -*-
"""The etcd v3 storage backend over the gRPC-JSON gateway; see L{store}."""

from kubetwist.storage.etcd3.client import new_etcd_client, tls_policy
from kubetwist.storage.etcd3.store import Etcd3Storage, EtcdError

__all__ = ["Etcd3Storage", "EtcdError", "new_etcd_client", "tls_policy"]
