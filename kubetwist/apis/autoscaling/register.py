# -*- test-case-name: tests.apis.test_autoscaling -*-
"""
The autoscaling group: upstream C{pkg/registry/autoscaling/rest} (horizontal pod autoscalers
with their C{status} subresource, served as autoscaling/v2 and autoscaling/v1 from one storage
in v2, upstream's storage version, under C{/registry/horizontalpodautoscalers}) and the registry
strategies of C{pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go}.

autoscaling/v1 is C{V1_RESOURCES}, C{V1_STRATEGIES} (the v2 strategies run on the converted
object, see L{kubetwist.registry.generic.versioned.hub_strategy}) and C{V1_CONVERTERS}.
"""

from __future__ import annotations

from kubetwist.apis.autoscaling import hpa, v1
from kubetwist.apis.autoscaling.printers import HPA_TABLE
from kubetwist.registry.generic.versioned import HubConversion, VersionConverter, hub_strategy
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "V1_CONVERTERS", "V1_RESOURCES",
           "V1_STRATEGIES", "VERSION"]

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

V1_RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler",
                 "horizontalpodautoscaler", short_names=["hpa"], categories=["all"],
                 subresources=["status"]),
]

_V1_CONVERSION = HubConversion(v1.hpa_v1_to_v2, v1.hpa_v2_to_v1)

V1_STRATEGIES: dict[str, Strategy] = {
    name: hub_strategy(strategy, _V1_CONVERSION, v1.default_hpa_v1)
    for name, strategy in STRATEGIES.items()
}

V1_CONVERTERS: dict[str, VersionConverter] = {
    "horizontalpodautoscalers": _V1_CONVERSION.converter,
}
