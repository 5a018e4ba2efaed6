# -*- test-case-name: tests.apis.test_autoscaling -*-
"""
The autoscaling/v2 group-version: upstream C{pkg/registry/autoscaling/rest} (horizontal pod
autoscalers with their C{status} subresource; autoscaling/v1 is not served) and the registry
strategies of C{pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go}.
"""

from __future__ import annotations

from kubetwist.apis.autoscaling import hpa
from kubetwist.apis.autoscaling.printers import HPA_TABLE
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "autoscaling"
VERSION = "v2"

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "horizontalpodautoscalers", "HorizontalPodAutoscaler",
                 "horizontalpodautoscaler", short_names=["hpa"], categories=["all"],
                 subresources=["status"]),
]

_HPA = dict(kind="HorizontalPodAutoscaler", group=GROUP, default=hpa.default_hpa,
            prepare_for_create=hpa.prepare_hpa_for_create, validate=hpa.validate_hpa,
            table=HPA_TABLE)

STRATEGIES: dict[str, Strategy] = {
    "horizontalpodautoscalers": Strategy(**_HPA, prepare_for_update=hpa.prepare_hpa_for_update,
                                         validate_update=hpa.validate_hpa_update),
    "horizontalpodautoscalers/status": Strategy(
        **_HPA, prepare_for_update=hpa.prepare_hpa_status_for_update,
        validate_update=hpa.validate_hpa_status_update),
}
