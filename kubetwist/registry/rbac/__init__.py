# -*- test-case-name: tests.registry.test_rbac_escalation,tests.registry.test_rbac_bootstrap -*-
"""RBAC registry behaviour: the bootstrap policy hook and escalation prevention."""
