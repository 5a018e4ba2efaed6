# -*- test-case-name: tests.storage.test_cacher -*-
"""
The watch cache: upstream C{k8s.io/apiserver/pkg/storage/cacher}.  L{Cacher} wraps any
L{kubetwist.storage.interfaces.IStorage} backend and is one itself.
"""

from kubetwist.storage.cacher.cache_watcher import CacheWatcher
from kubetwist.storage.cacher.cacher import Cacher
from kubetwist.storage.cacher.watch_cache import WatchCache

__all__ = ["CacheWatcher", "Cacher", "WatchCache"]
