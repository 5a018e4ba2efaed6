# -*- test-case-name: tests.admission.test_builtin -*-
"""
The C{DefaultIngressClass} plugin: upstream
C{plugin/pkg/admission/network/defaultingressclass}.  An Ingress created without
C{spec.ingressClassName} (and without the C{kubernetes.io/ingress.class} annotation) gets the
default IngressClass's name (annotated C{ingressclass.kubernetes.io/is-default-class: "true"};
the newest one when there are several).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from zope.interface import implementer

from kubetwist.admission.interfaces import IMutationInterface
from kubetwist.admission.plugins.storage import newest_first

__all__ = ["DefaultIngressClass"]

IS_DEFAULT_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"
#: Upstream C{networkingv1beta1.AnnotationIngressClass}.
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"


@implementer(IMutationInterface)
class DefaultIngressClass:
    name = "DefaultIngressClass"

    def __init__(self, list_classes: Callable[[], Awaitable[list[dict]]]) -> None:
        self.list_classes = list_classes

    def handles(self, operation: str) -> bool:
        return operation == "CREATE"

    async def admit(self, a: Any) -> None:
        if a.resource.group != "networking.k8s.io" or a.resource.resource != "ingresses" \
                or a.subresource or not isinstance(a.object, dict):
            return
        spec = a.object.setdefault("spec", {})
        annotations = (a.object.get("metadata") or {}).get("annotations") or {}
        if spec.get("ingressClassName") is not None or INGRESS_CLASS_ANNOTATION in annotations:
            return
        defaults = [c for c in await self.list_classes()
                    if ((c.get("metadata") or {}).get("annotations") or {}).get(
                        IS_DEFAULT_ANNOTATION) == "true"]
        if defaults:
            spec["ingressClassName"] = newest_first(defaults)[0]["metadata"]["name"]
