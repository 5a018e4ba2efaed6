# -*- test-case-name: tests.test_app -*-
"""
The composition root's old place: it moved to L{kubetwist.app}, next to L{kubetwist.tap} (a
generic server package does not assemble the servers above it).  This re-export keeps the
tests of work done in parallel importing C{kubetwist.server.run}; once they import
C{kubetwist.app}, delete this module and its entry in C{tests/test_imports.py}'s C{PENDING}.
"""

from kubetwist.app import (  # noqa: F401
    Assembled,
    KubeAPIService,
    ShuttingDown,
    assemble,
    host_address,
    storage_health_check,
)

__all__ = ["Assembled", "KubeAPIService", "ShuttingDown", "assemble", "host_address",
           "storage_health_check"]
