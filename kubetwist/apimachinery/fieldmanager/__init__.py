# -*- test-case-name: tests.apimachinery.test_fieldmanager -*-
"""
Server-side apply and C{metadata.managedFields}: kubetwist's counterpart of
C{k8s.io/apimachinery/pkg/util/managedfields}, C{k8s.io/apiserver/pkg/endpoints/handlers/
fieldmanager} and C{sigs.k8s.io/structured-merge-diff/v4}.

 - L{fieldpath}: path elements, field sets, the C{fieldsV1} JSON form;
 - L{typed}: the schema view (built-in kinds from L{kubetwist.runtime.types}, custom
   resources from their structural schema);
 - L{merge}: field sets of objects, compare, merge, the apply/update algorithms;
 - L{manager}: the managedFields entries of an object and the handler-facing
   L{manager.FieldManager}.
"""

from kubetwist.apimachinery.fieldmanager.fieldpath import Set
from kubetwist.apimachinery.fieldmanager.manager import (
    FieldManager,
    conflict_error,
    manager_or_user_agent,
    owns_field,
    validate_patch_options,
)

__all__ = [
    "FieldManager",
    "Set",
    "conflict_error",
    "manager_or_user_agent",
    "owns_field",
    "validate_patch_options",
]
