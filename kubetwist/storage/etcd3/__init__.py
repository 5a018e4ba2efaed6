# -*- test-case-name: tests.storage.test_etcd3,tests.storage.test_etcd3_gateway -*-
"""The etcd v3 storage backend over the gRPC-JSON gateway; see L{store}."""

from kubetwist.storage.etcd3.store import Etcd3Storage, EtcdError

__all__ = ["Etcd3Storage", "EtcdError"]
