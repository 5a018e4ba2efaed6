# -*- test-case-name: tests.server.test_filters -*-
"""The request context the filters fill: defined in L{kubetwist.endpoints.request} (upstream
C{k8s.io/apiserver/pkg/endpoints/request}), where the handlers read it too."""

from kubetwist.endpoints.request import CONTEXT_ATTR, RequestContext, attach, context_of

__all__ = ["CONTEXT_ATTR", "RequestContext", "attach", "context_of"]
