# -*- test-case-name: tests.apis.test_reviews -*-
"""
The C{authentication.k8s.io} API group: upstream C{k8s.io/kubernetes/pkg/apis/authentication}
and C{pkg/registry/authentication}.
"""
