# -*- test-case-name: tests.apis.test_reviews -*-
"""
The C{authorization.k8s.io} API group: upstream C{k8s.io/kubernetes/pkg/apis/authorization}
and C{pkg/registry/authorization}.
"""
