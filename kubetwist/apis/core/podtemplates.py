# -*- test-case-name: tests.apis.test_core_podtemplates -*-
"""
PodTemplates: upstream C{pkg/apis/core/v1/defaults.go} (the pod template walk of
C{SetObjectDefaults_PodTemplate}), C{pkg/apis/core/validation} (C{ValidatePodTemplate},
C{ValidatePodTemplateUpdate}) and C{pkg/registry/core/podtemplate/strategy.go}.
"""

from __future__ import annotations

from kubetwist.apimachinery.validation import (
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core import pod_warnings
from kubetwist.apis.core.podspec_defaults import default_pod_template_spec
from kubetwist.apis.core.podspec_validation import validate_pod_template_spec
from kubetwist.apis.core.printers import PODTEMPLATE_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime.field import FieldError, Path

__all__ = [
    "PODTEMPLATE_STRATEGY",
    "default_pod_template",
    "validate_pod_template",
    "validate_pod_template_update",
]


def default_pod_template(obj: dict) -> None:
    """Upstream C{SetObjectDefaults_PodTemplate}: C{template} defaulted as every pod template
    (L{default_pod_template_spec}); a missing C{template} stays absent."""
    tpl = obj.get("template")
    if isinstance(tpl, dict):
        default_pod_template_spec(tpl)


def validate_pod_template(obj: dict) -> list[FieldError]:
    """
    Upstream C{ValidatePodTemplate}: namespaced ObjectMeta with a DNS-subdomain name, then
    C{ValidatePodTemplateSpec} of C{template} (errors under C{template.*}).
    """
    errs = validate_object_meta(obj.get("metadata") or {}, True, name_is_dns_subdomain,
                                Path("metadata"))
    errs.extend(validate_pod_template_spec(obj.get("template"), Path("template")))
    return errs


def validate_pod_template_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidatePodTemplateUpdate}: ObjectMeta update rules and the new template."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    errs.extend(validate_pod_template_spec(new.get("template"), Path("template")))
    return errs


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def prepare_pod_template_for_create(obj: dict) -> None:
    """Upstream C{podTemplateStrategy.PrepareForCreate}: C{metadata.generation} is 1."""
    _meta(obj)["generation"] = 1


def prepare_pod_template_for_update(new: dict, old: dict) -> None:
    """Upstream C{podTemplateStrategy.PrepareForUpdate}: the generation is bumped when the
    template changed, kept otherwise."""
    gen = (old.get("metadata") or {}).get("generation") or 0
    if (new.get("template") or {}) != (old.get("template") or {}):
        gen += 1
    _meta(new)["generation"] = gen


PODTEMPLATE_STRATEGY = Strategy(
    kind="PodTemplate",
    default=default_pod_template,
    prepare_for_create=prepare_pod_template_for_create,
    prepare_for_update=prepare_pod_template_for_update,
    validate=validate_pod_template,
    validate_update=validate_pod_template_update,
    table=PODTEMPLATE_TABLE,
    warnings=lambda obj: pod_warnings.pod_template_warnings(Path("template"), obj.get("template")),
)
