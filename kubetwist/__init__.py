# -*- test-case-name: tests.test_tap -*-
"""
kubetwist: a Kubernetes API server (the kube-apiserver v1.32 API level) written in Python on
Twisted.  Run it as C{twistd kubeapi} or C{python -m kubetwist}; build extension API servers
and tests from its packages.
"""

#: kubetwist's own release (the package version); the Kubernetes API level it serves is
#: L{kubetwist.tap.KUBERNETES_VERSION}.
__version__ = "0.1.0"
