# -*- test-case-name: tests.admission.test_podsecurity -*-
"""
The C{PodSecurity} admission plugin (upstream C{k8s.io/pod-security-admission} and
C{plugin/pkg/admission/security/podsecurity} of v1.32): L{admission} the plugin, L{checks}
the baseline and restricted checks, L{api} levels, versions and namespace policies,
L{config} the C{PodSecurityConfiguration}.
"""

from kubetwist.admission.plugins.podsecurity.admission import PodSecurity
from kubetwist.admission.plugins.podsecurity.config import (
    ConfigurationError,
    PodSecurityConfiguration,
    load_configuration,
)

__all__ = ["PodSecurity", "ConfigurationError", "PodSecurityConfiguration",
           "load_configuration"]
