# -*- test-case-name: tests.runtime.test_protobuf_kinds -*-
"""
Field tables of C{k8s.io/api/apidiscovery/v2beta1} as of Kubernetes v1.32: the same shapes as
L{kubetwist.runtime.types.apidiscovery_v2}, in their own protobuf package.

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

from kubetwist.runtime.types import apidiscovery_v2

PACKAGE = "io.k8s.api.apidiscovery.v2beta1"

GROUP = "apidiscovery.k8s.io"
VERSION = "v2beta1"

KINDS = apidiscovery_v2.KINDS

PROTOBUF_ONLY = True

TYPES = apidiscovery_v2.TYPES
