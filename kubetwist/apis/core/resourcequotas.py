# -*- test-case-name: tests.apis.test_core_resourcequotas -*-
"""
ResourceQuotas: upstream C{pkg/apis/core/v1/defaults.go} (resource lists rounded up),
C{pkg/apis/core/validation} (C{ValidateResourceQuota}, C{ValidateResourceQuotaUpdate},
C{ValidateResourceQuotaStatusUpdate}, C{validateResourceQuotaScopes},
C{validateScopedResourceSelectorRequirement}) and
C{pkg/registry/core/resourcequota/strategy.go}.

Difference left: where upstream reports a whole C{scopeSelector} struct as the bad value
(C{unsupported scope applied to resource}) it prints Go's C{%#v}; here its JSON form.
"""

from __future__ import annotations

import copy

import orjson

from kubetwist.apimachinery.validation import (
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.limitranges import validate_resource_name
from kubetwist.apis.core.podspec_defaults import default_resource_list
from kubetwist.apis.core.podspec_validation import GoValueError, _validate_quantity_value
from kubetwist.apis.core.printers import RESOURCEQUOTA_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime.field import FieldError, Path, invalid, required

__all__ = [
    "RESOURCEQUOTA_STATUS_STRATEGY",
    "RESOURCEQUOTA_STRATEGY",
    "default_resource_quota",
    "validate_resource_quota",
    "validate_resource_quota_status_update",
    "validate_resource_quota_update",
]

_QUOTA_RESOURCES = {
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
    "persistentvolumeclaims", "configmaps", "services.nodeports", "services.loadbalancers",
}
_SCOPES = ["Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
           "CrossNamespacePodAffinity"]
_POD_COMPUTE = {"pods", "cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu",
                "requests.memory"}
_EXISTS_ONLY = {"BestEffort", "NotBestEffort", "Terminating", "NotTerminating",
                "CrossNamespacePodAffinity"}
_CONFLICTS = [("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating")]
_EXIST_MSG = ("must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, "
              "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
              "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity")


def default_resource_quota(obj: dict) -> None:
    """Upstream defaulting: C{spec.hard}, C{status.hard} and C{status.used} rounded up to
    milli units (C{SetDefaults_ResourceList})."""
    for part, key in (("spec", "hard"), ("status", "hard"), ("status", "used")):
        holder = obj.get(part)
        if isinstance(holder, dict) and isinstance(holder.get(key), dict):
            default_resource_list(holder[key])


def _is_quota_resource(name: str) -> bool:
    return name in _QUOTA_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))


def _quota_resource_name(name: str, path: Path) -> list[FieldError]:
    """Upstream C{ValidateResourceQuotaResourceName}."""
    errs = validate_resource_name(name, path)
    if "/" not in name and not _is_quota_resource(name):
        errs.append(invalid(path, name, "must be a standard resource for quota"))
    return errs


def _resource_list(resources: dict | None, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    resources = resources or {}
    for name in sorted(resources):
        errs.extend(_quota_resource_name(name, path.key(name)))
        errs.extend(_validate_quantity_value(name, resources[name], path.key(name)))
    return errs


def _scope_valid_for(scope: str, resource: str) -> bool:
    if scope == "BestEffort":
        return resource == "pods"
    if scope in _SCOPES:
        return resource in _POD_COMPUTE
    return True


def _go_scopes(scopes: list) -> str:
    if scopes is None:
        return "[]core.ResourceQuotaScope(nil)"
    inner = ", ".join(orjson.dumps(str(s)).decode() for s in scopes)
    return "[]core.ResourceQuotaScope{" + inner + "}"


def _validate_scopes(spec: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateResourceQuotaScopes}."""
    scopes = spec.get("scopes") or []
    if not scopes:
        return []
    errs: list[FieldError] = []
    hard = sorted(spec.get("hard") or {})
    sp = path.child("scopes")
    text = _go_scopes(scopes)
    for scope in scopes:
        if scope not in _SCOPES:
            errs.append(GoValueError("Invalid", sp, text, "unsupported scope"))
        for name in hard:
            if _is_quota_resource(name) and not _scope_valid_for(scope, name):
                errs.append(GoValueError("Invalid", sp, text,
                                         "unsupported scope applied to resource"))
    for pair in _CONFLICTS:
        if all(s in scopes for s in pair):
            errs.append(GoValueError("Invalid", sp, text, "conflicting scopes"))
    return errs


def _validate_scope_selector(spec: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateScopedResourceSelectorRequirement}."""
    selector = spec.get("scopeSelector")
    if not isinstance(selector, dict):
        return []
    errs: list[FieldError] = []
    hard = sorted(spec.get("hard") or {})
    mp = path.child("scopeSelector", "matchExpressions")
    names: set[str] = set()
    for req in selector.get("matchExpressions") or []:
        req = req if isinstance(req, dict) else {}
        scope, op = req.get("scopeName") or "", req.get("operator") or ""
        if scope not in _SCOPES:
            errs.append(invalid(mp.child("scopeName"), scope, "unsupported scope"))
        for name in hard:
            if _is_quota_resource(name) and not _scope_valid_for(scope, name):
                errs.append(invalid(mp, selector, "unsupported scope applied to resource"))
        if scope in _EXISTS_ONLY and op != "Exists":
            errs.append(invalid(mp.child("operator"), op, _EXIST_MSG))
        values = req.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                errs.append(required(mp.child("values"), "must be at least one value when "
                                     "`operator` is 'In' or 'NotIn' for scope selector"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                text = "[]string{" + ", ".join(orjson.dumps(str(v)).decode() for v in values) + "}"
                errs.append(GoValueError("Invalid", mp.child("values"), text,
                                         "must be no value when `operator` is 'Exist' or "
                                         "'DoesNotExist' for scope selector"))
        else:
            errs.append(invalid(mp.child("operator"), op, "not a valid selector operator"))
        names.add(scope)
    for pair in _CONFLICTS:
        if all(s in names for s in pair):
            errs.append(GoValueError("Invalid", mp, _go_scopes(spec.get("scopes")),
                                     "conflicting scopes"))
    return errs


def _validate_spec(spec: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateResourceQuotaSpec}."""
    errs = _resource_list(spec.get("hard"), path.child("hard"))
    errs.extend(_validate_scopes(spec, path))
    errs.extend(_validate_scope_selector(spec, path))
    return errs


def _validate_status(status: dict, path: Path) -> list[FieldError]:
    errs = _resource_list(status.get("hard"), path.child("hard"))
    errs.extend(_resource_list(status.get("used"), path.child("used")))
    return errs


def validate_resource_quota(obj: dict) -> list[FieldError]:
    """
    Upstream C{ValidateResourceQuota}: namespaced ObjectMeta; every resource of
    C{spec.hard}, C{status.hard} and C{status.used} a quota resource (C{must be a standard
    resource for quota}) with a non-negative (integer where counted) quantity; valid,
    applicable, non-conflicting C{scopes} and C{scopeSelector}.
    """
    errs = validate_object_meta(obj.get("metadata") or {}, True, name_is_dns_subdomain,
                                Path("metadata"))
    errs.extend(_validate_spec(obj.get("spec") or {}, Path("spec")))
    errs.extend(_validate_status(obj.get("status") or {}, Path("status")))
    return errs


def validate_resource_quota_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateResourceQuotaUpdate}: ObjectMeta update rules, the spec, and
    C{spec.scopes} immutable (as a set: C{field is immutable})."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    nspec = new.get("spec") or {}
    errs.extend(_validate_spec(nspec, Path("spec")))
    if set(nspec.get("scopes") or []) != set((old.get("spec") or {}).get("scopes") or []):
        errs.append(GoValueError("Invalid", Path("spec", "scopes"), _go_scopes(nspec.get("scopes")),
                                 "field is immutable"))
    return errs


def validate_resource_quota_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateResourceQuotaStatusUpdate}: ObjectMeta update rules, a
    C{resourceVersion}, valid C{status.hard} and C{status.used}."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    if not (new.get("metadata") or {}).get("resourceVersion"):
        errs.append(required(Path("resourceVersion")))
    errs.extend(_validate_status(new.get("status") or {}, Path("status")))
    return errs


def prepare_quota_for_create(obj: dict) -> None:
    """Upstream C{resourcequotaStrategy.PrepareForCreate}: the status is cleared (written
    C{{}}, as the struct has no C{omitempty})."""
    obj["status"] = {}


def prepare_quota_for_update(new: dict, old: dict) -> None:
    """Upstream C{PrepareForUpdate}: the stored status is kept."""
    new["status"] = copy.deepcopy(old.get("status") or {})


def prepare_quota_status_for_update(new: dict, old: dict) -> None:
    """Upstream C{resourcequotaStatusStrategy.PrepareForUpdate}: the stored spec is kept."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})


RESOURCEQUOTA_STRATEGY = Strategy(
    kind="ResourceQuota",
    default=default_resource_quota,
    prepare_for_create=prepare_quota_for_create,
    prepare_for_update=prepare_quota_for_update,
    validate=validate_resource_quota,
    validate_update=validate_resource_quota_update,
    table=RESOURCEQUOTA_TABLE,
)

RESOURCEQUOTA_STATUS_STRATEGY = Strategy(
    kind="ResourceQuota",
    default=default_resource_quota,
    prepare_for_create=prepare_quota_for_create,
    prepare_for_update=prepare_quota_status_for_update,
    validate=validate_resource_quota,
    validate_update=validate_resource_quota_status_update,
    table=RESOURCEQUOTA_TABLE,
)
