# -*- test-case-name: tests.apis.test_admissionregistration -*-
"""admissionregistration.k8s.io: upstream C{pkg/apis/admissionregistration} and
C{pkg/registry/admissionregistration}."""
