# -*- test-case-name: tests.apis.test_certificates -*-
"""certificates.k8s.io: upstream C{pkg/apis/certificates} and C{pkg/registry/certificates}."""
