# -*- test-case-name: tests.registry.test_rest -*-
"""
The namespaces storage: upstream C{pkg/registry/core/namespace/storage} C{REST}, a Store
without C{DeleteCollection} (deleting every namespace at once is not served: discovery lists
no C{deletecollection} and C{DELETE /api/v1/namespaces} is 405).
"""

from __future__ import annotations

from zope.interface import implementer_only

from kubetwist.registry.generic.store import Store
from kubetwist.registry.rest import (
    ICreater,
    IGracefulDeleter,
    ILister,
    IPatcher,
    IScoper,
    IWatcher,
)


@implementer_only(IScoper, ILister, IWatcher, ICreater, IPatcher, IGracefulDeleter)
class NamespaceStore(Store):
    """The generic Store for namespaces, serving every verb but C{deletecollection}."""
