# -*- test-case-name: tests.apiextensions.test_cel -*-
"""
CEL as Kubernetes uses it (upstream C{k8s.io/apiserver/pkg/cel}), shared by CRD validation
rules (L{kubetwist.apiextensions.schema.cel}), admission policies
(L{kubetwist.apis.admissionregistration.validation}) and the authentication and
authorization configuration files: the Kubernetes function library and environment
(L{kubetwist.cel.library}), the cost model (L{kubetwist.cel.cost}) and cel-go's error text.
"""

from __future__ import annotations

import re

_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")


def strip_status(text: str) -> str:
    """
    A CEL library error as cel-go words it: the binding's status code prefix
    (C{INVALID_ARGUMENT: }) and suffix (C{ [INVALID_ARGUMENT]}) removed from C{text}.
    """
    return _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", text.strip(), count=1))
