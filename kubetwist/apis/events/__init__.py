# -*- test-case-name: tests.apis.test_events -*-
"""
The C{events.k8s.io} API group: upstream C{k8s.io/kubernetes/pkg/apis/events} and
C{pkg/registry/events} (events.k8s.io/v1 Events served from the core/v1 event storage).
"""
