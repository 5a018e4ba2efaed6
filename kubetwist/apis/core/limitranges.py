# -*- test-case-name: tests.apis.test_core_limitranges -*-
"""
LimitRanges: upstream C{pkg/apis/core/v1/defaults.go} (C{SetDefaults_LimitRangeItem}),
C{pkg/apis/core/validation} (C{ValidateLimitRange}) and
C{pkg/registry/core/limitrange/strategy.go}.

Difference left: where upstream reports a C{resource.Quantity} as the bad value it prints
Go's C{%#v} of the struct; here the canonical quantity text is printed.
"""

from __future__ import annotations

from kubetwist.apimachinery.validation import (
    is_qualified_name,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.podspec_defaults import default_resource_list
from kubetwist.apis.core.podspec_validation import (
    _STANDARD_RESOURCES,
    _is_hugepages,
    _overcommit_allowed,
    _validate_container_resource_name,
)
from kubetwist.apis.core.printers import LIMITRANGE_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime.field import FieldError, Path, duplicate, forbidden, invalid, required
from kubetwist.runtime.quantity import Quantity, QuantityError, parse_quantity

__all__ = [
    "LIMITRANGE_STRATEGY",
    "default_limit_range",
    "validate_limit_range",
    "validate_limit_range_update",
    "validate_resource_name",
]

_LIST_FIELDS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")
_STANDARD_LIMIT_TYPES = {"Pod", "Container", "PersistentVolumeClaim"}


def default_limit_range(obj: dict) -> None:
    """
    Upstream C{SetDefaults_LimitRangeItem} for every C{spec.limits[*]} of type C{Container}:
    C{default} takes each C{max} it lacks, then C{defaultRequest} each C{default} and then
    each C{min} it lacks (empty maps are not written); every resource list is rounded up to
    milli units.
    """
    for item in (obj.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict):
            continue
        for key in _LIST_FIELDS:
            if isinstance(item.get(key), dict):
                default_resource_list(item[key])
        if item.get("type") != "Container":
            continue
        default = dict(item.get("default") or {})
        request = dict(item.get("defaultRequest") or {})
        for source, target in (("max", default), ("default", None), ("min", request)):
            if target is None:
                for name, value in default.items():
                    request.setdefault(name, value)
                continue
            for name, value in (item.get(source) or {}).items():
                target.setdefault(name, value)
        if default:
            item["default"] = default
        if request:
            item["defaultRequest"] = request


def validate_resource_name(name: str, path: Path) -> list[FieldError]:
    """Upstream C{validateResourceName}: a qualified name, and standard when unprefixed
    (C{must be a standard resource type or fully qualified})."""
    errs = [invalid(path, name, m) for m in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name and name not in _STANDARD_RESOURCES and not _is_hugepages(name) \
            and not name.startswith("requests.hugepages-"):
        errs.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    return errs


def _type_name(value: str, path: Path) -> list[FieldError]:
    errs = [invalid(path, value, m) for m in is_qualified_name(value)]
    if errs:
        return errs
    if "/" not in value and value not in _STANDARD_LIMIT_TYPES:
        return [invalid(path, value, "must be a standard limit type or fully qualified")]
    return []


def _resource_name(limit_type: str, name: str, path: Path) -> list[FieldError]:
    if limit_type in ("Pod", "Container"):
        return _validate_container_resource_name(name, path)
    return validate_resource_name(name, path)


def _q(raw: object) -> Quantity | None:
    try:
        return parse_quantity(raw)
    except (QuantityError, ValueError, TypeError):
        return None


def _go_percent_f(value: float) -> str:
    """Go's C{%f}: six decimals."""
    return f"{value:f}"


def _validate_item(item: dict, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    ltype = item.get("type") or ""
    lists: dict[str, dict[str, Quantity]] = {k: {} for k in _LIST_FIELDS}
    keys: set[str] = set()

    def collect(field: str) -> None:
        raw = item.get(field) or {}
        for name in sorted(raw):
            errs.extend(_resource_name(ltype, name, path.child(field).key(name)))
            keys.add(name)
            q = _q(raw[name])
            if q is not None:
                lists[field][name] = q

    collect("max")
    collect("min")
    if ltype == "Pod":
        if item.get("default"):
            errs.append(forbidden(path.child("default"),
                                  "may not be specified when `type` is 'Pod'"))
        if item.get("defaultRequest"):
            errs.append(forbidden(path.child("defaultRequest"),
                                  "may not be specified when `type` is 'Pod'"))
    else:
        collect("default")
        collect("defaultRequest")
    if ltype == "PersistentVolumeClaim" and "storage" not in (item.get("min") or {}) \
            and "storage" not in (item.get("max") or {}):
        errs.append(required(path.child("limits"), "either minimum or maximum storage value "
                             "is required, but neither was provided"))
    collect("maxLimitRequestRatio")
    for k in sorted(keys):
        mn, mx = lists["min"].get(k), lists["max"].get(k)
        df, dr = lists["default"].get(k), lists["defaultRequest"].get(k)
        ratio = lists["maxLimitRequestRatio"].get(k)
        if mn is not None and mx is not None and mn.cmp(mx) > 0:
            errs.append(invalid(path.child("min").key(k), str(mn),
                                f"min value {mn} is greater than max value {mx}"))
        if dr is not None and mn is not None and mn.cmp(dr) > 0:
            errs.append(invalid(path.child("defaultRequest").key(k), str(dr),
                                f"min value {mn} is greater than default request value {dr}"))
        if dr is not None and mx is not None and dr.cmp(mx) > 0:
            errs.append(invalid(path.child("defaultRequest").key(k), str(dr),
                                f"default request value {dr} is greater than max value {mx}"))
        if dr is not None and df is not None and dr.cmp(df) > 0:
            errs.append(invalid(path.child("defaultRequest").key(k), str(dr),
                                f"default request value {dr} is greater than default limit "
                                f"value {df}"))
        if df is not None and mn is not None and mn.cmp(df) > 0:
            errs.append(invalid(path.child("default").key(k), str(mn),
                                f"min value {mn} is greater than default value {df}"))
        if df is not None and mx is not None and df.cmp(mx) > 0:
            errs.append(invalid(path.child("default").key(k), str(mx),
                                f"default value {df} is greater than max value {mx}"))
        if ratio is not None and ratio.value < 1:
            errs.append(invalid(path.child("maxLimitRequestRatio").key(k), str(ratio),
                                f"ratio {ratio} is less than 1"))
        if ratio is not None and mn is not None and mx is not None and mn.value != 0:
            limit = float(mx.value / mn.value)
            if float(ratio.value) > limit:
                errs.append(invalid(path.child("maxLimitRequestRatio").key(k), str(ratio),
                                    f"ratio {ratio} is greater than max/min = "
                                    f"{_go_percent_f(limit)}"))
        if not _overcommit_allowed(k) and df is not None and dr is not None and df.cmp(dr) != 0:
            errs.append(invalid(path.child("defaultRequest").key(k), str(dr),
                                f"default value {df} must equal to defaultRequest value {dr} "
                                f"in {k}"))
    return errs


def validate_limit_range(obj: dict) -> list[FieldError]:
    """
    Upstream C{ValidateLimitRange}: namespaced ObjectMeta; per C{spec.limits[i]}: a standard
    or qualified C{type}, unique types (C{Duplicate value}), resource names valid for the
    type, no C{default}/C{defaultRequest} for C{Pod}, a storage bound for
    C{PersistentVolumeClaim}, and the ordering C{min <= defaultRequest <= default <= max},
    C{1 <= maxLimitRequestRatio <= max/min}.
    """
    errs = validate_object_meta(obj.get("metadata") or {}, True, name_is_dns_subdomain,
                                Path("metadata"))
    path = Path("spec", "limits")
    seen: set[str] = set()
    for i, item in enumerate((obj.get("spec") or {}).get("limits") or []):
        item = item if isinstance(item, dict) else {}
        ip = path.index(i)
        ltype = item.get("type") or ""
        errs.extend(_type_name(ltype, ip.child("type")))
        if ltype in seen:
            errs.append(duplicate(ip.child("type"), ltype))
        seen.add(ltype)
        errs.extend(_validate_item(item, ip))
    return errs


def validate_limit_range_update(new: dict, old: dict) -> list[FieldError]:
    """The strategy's C{ValidateUpdate}: L{validate_limit_range} of the new object, then the
    ObjectMeta update rules upstream's C{rest.BeforeUpdate} applies to every kind."""
    errs = validate_limit_range(new)
    errs.extend(validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                            Path("metadata")))
    return errs


LIMITRANGE_STRATEGY = Strategy(
    kind="LimitRange",
    default=default_limit_range,
    validate=validate_limit_range,
    validate_update=validate_limit_range_update,
    table=LIMITRANGE_TABLE,
)
