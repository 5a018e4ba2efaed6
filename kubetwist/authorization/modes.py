# -*- test-case-name: tests.authorization.test_options -*-
"""
Registration of the C{Node}, C{ABAC} and C{Webhook} authorization modes in
L{MODE_FACTORIES <kubetwist.authorization.MODE_FACTORIES>} (upstream
C{modes.AuthorizationModeChoices}; C{RBAC} registers itself from its own package).
"""

from __future__ import annotations

from kubetwist.authorization import MODE_FACTORIES, abac, node, webhook

MODE_FACTORIES["Node"] = node._factory
MODE_FACTORIES["ABAC"] = abac._factory
MODE_FACTORIES["Webhook"] = webhook._factory
