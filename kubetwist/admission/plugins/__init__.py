# -*- test-case-name: tests.admission.test_plugins -*-
"""Built-in admission plugins: upstream C{k8s.io/kubernetes/plugin/pkg/admission}."""
