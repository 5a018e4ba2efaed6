# -*- test-case-name: tests.apiextensions.test_validation -*-
"""
CustomResourceDefinition validation and defaulting: upstream
C{k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go},
C{pkg/apis/apiextensions/v1/defaults.go}, C{pkg/apihelpers/helpers.go} (API approval) and
C{k8s.io/apiserver/pkg/util/webhook/validation.go} (conversion webhook client config).

Upstream validates the I{internal} form of a v1 CRD, into which the v1 conversion moves
per-version C{schema}, C{subresources}, C{additionalPrinterColumns} and C{selectableFields}
to the spec's top level when every version has the same value.  Error paths follow that form:
C{spec.validation.openAPIV3Schema...} for a CRD whose versions share one schema,
C{spec.versions[i].schema.openAPIV3Schema...} otherwise.  The helpers here also answer the
per-version questions the serving code asks (storage version, schema, subresources, columns).
"""

from __future__ import annotations

import copy
import unicodedata
from typing import Any
from urllib.parse import urlsplit

from kubetwist.apiextensions import schemaops
from kubetwist.apimachinery import validation as v
from kubetwist.runtime import field as fe
from kubetwist.runtime.field import FieldError, Path

GROUP = "apiextensions.k8s.io"
APPROVAL_ANNOTATION = "api-approved.kubernetes.io"
MAX_SELECTABLE_FIELDS = 8
PRINTER_COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"]
PRINTER_COLUMN_FORMATS = ["byte", "date", "date-time", "double", "float", "int32", "int64",
                          "password"]
_ROOT_ALLOWED_WITH_STATUS = {
    "description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
    "uniqueItems", "multipleOf", "required", "items", "properties", "externalDocs", "example",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-validations",
}
_ROOT_ALLOWED_GO = ("[Description Type Format Title Maximum ExclusiveMaximum Minimum "
                    "ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems "
                    "MultipleOf Required Items Properties ExternalDocs Example "
                    "XPreserveUnknownFields XValidations]")


# --- per-version accessors (upstream apihelpers) ---------------------------------------------
def versions(crd: dict) -> list[dict]:
    return [x for x in ((crd.get("spec") or {}).get("versions") or []) if isinstance(x, dict)]


def storage_version(crd: dict) -> str:
    """The name of the version marked C{storage: true} (C{""} if none)."""
    for ver in versions(crd):
        if ver.get("storage"):
            return ver.get("name", "")
    return ""


def served_versions(crd: dict) -> list[str]:
    return [ver.get("name", "") for ver in versions(crd) if ver.get("served")]


def version_of(crd: dict, name: str) -> dict | None:
    for ver in versions(crd):
        if ver.get("name") == name:
            return ver
    return None


def schema_of(crd: dict, name: str) -> dict | None:
    """The C{openAPIV3Schema} of version C{name}, or C{None}."""
    ver = version_of(crd, name) or {}
    return ((ver.get("schema") or {}).get("openAPIV3Schema")) or None


def subresources_of(crd: dict, name: str) -> dict:
    """C{{"status": {}, "scale": {...}}} of version C{name} (C{{}} when none)."""
    return dict((version_of(crd, name) or {}).get("subresources") or {})


def columns_of(crd: dict, name: str) -> list[dict]:
    return list((version_of(crd, name) or {}).get("additionalPrinterColumns") or [])


def selectable_fields_of(crd: dict, name: str) -> list[dict]:
    return list((version_of(crd, name) or {}).get("selectableFields") or [])


def condition(crd: dict, type_: str) -> dict | None:
    for c in (crd.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return c
    return None


def is_condition_true(crd: dict, type_: str) -> bool:
    c = condition(crd, type_)
    return bool(c and c.get("status") == "True")


# --- defaulting ---------------------------------------------------------------------------------
def default_crd(crd: dict) -> None:
    """Upstream C{SetDefaults_CustomResourceDefinition}: names.singular, names.listKind,
    C{conversion: {strategy: None}}, webhook service port 443, status.storedVersions."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict):
        if not names.get("singular") and names.get("kind"):
            names["singular"] = str(names["kind"]).lower()
        if not names.get("listKind") and names.get("kind"):
            names["listKind"] = f"{names['kind']}List"
    conversion = spec.get("conversion")
    if conversion is None:
        spec["conversion"] = {"strategy": "None"}
    elif isinstance(conversion, dict):
        svc = ((conversion.get("webhook") or {}).get("clientConfig") or {}).get("service")
        if isinstance(svc, dict) and svc.get("port") is None:
            svc["port"] = 443
    status = crd.get("status")
    if isinstance(status, dict) and not status.get("storedVersions"):
        sv = storage_version(crd)
        if sv:
            status["storedVersions"] = [sv]


# --- API approval (apihelpers) --------------------------------------------------------------------
def is_protected_community_group(group: str) -> bool:
    return group in ("k8s.io", "kubernetes.io") or group.endswith(".k8s.io") or \
        group.endswith(".kubernetes.io")


def api_approval_state(annotations: dict | None) -> tuple[str, str]:
    """Upstream C{GetAPIApprovalState}: C{(state, reason)}, state in C{Missing Bypassed
    Approved Invalid}."""
    value = (annotations or {}).get(APPROVAL_ANNOTATION, "")
    if not value:
        return "Missing", (f'protected groups must have approval annotation '
                           f'"{APPROVAL_ANNOTATION}", see '
                           f'https://github.com/kubernetes/enhancements/pull/1111')
    if value.startswith("unapproved"):
        return "Bypassed", f'not approved: "{value}"'
    parts = urlsplit(value)
    if parts.scheme and parts.netloc and value.startswith(parts.scheme + ":"):
        return "Approved", f"approved in {value}"
    return "Invalid", (f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}" '
                       'with either a URL or a reason starting with "unapproved", see '
                       'https://github.com/kubernetes/enhancements/pull/1111')


def _validate_api_approval(new: dict, old: dict | None) -> list[FieldError]:
    group = (new.get("spec") or {}).get("group", "")
    if not is_protected_community_group(group):
        return []
    new_ann = (new.get("metadata") or {}).get("annotations") or {}
    state, reason = api_approval_state(new_ann)
    if old is not None:
        old_state, _ = api_approval_state((old.get("metadata") or {}).get("annotations"))
        if old_state == state:
            return []
    path = Path("metadata", "annotations").key(APPROVAL_ANNOTATION)
    if state == "Missing":
        return [fe.required(path, reason)]
    if state == "Invalid":
        return [fe.invalid(path, new_ann.get(APPROVAL_ANNOTATION, ""), reason)]
    return []


# --- the rules ------------------------------------------------------------------------------------
def _identical(values: list[Any]) -> bool:
    return bool(values) and all(x == values[0] for x in values)


class _Layout:
    """Where each per-version field lives in upstream's internal form."""

    def __init__(self, spec: dict) -> None:
        vs = [x for x in spec.get("versions") or [] if isinstance(x, dict)]
        self.schema_top = _identical([x.get("schema") for x in vs])
        self.sub_top = _identical([x.get("subresources") for x in vs])
        self.cols_top = _identical([x.get("additionalPrinterColumns") or None for x in vs])
        self.sel_top = _identical([x.get("selectableFields") or None for x in vs])


def _dns1035(path: Path, value: str, prefix: str = "") -> list[FieldError]:
    errs = v.is_dns1035_label(value)
    if errs:
        return [fe.invalid(path, value, prefix + ",".join(errs))]
    return []


def validate_names(names: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateCustomResourceDefinitionNames}."""
    errs: list[FieldError] = []
    for key in ("plural", "singular"):
        val = names.get(key) or ""
        if val:
            errs += _dns1035(path.child(key), val)
    for key in ("kind", "listKind"):
        val = names.get(key) or ""
        if val and v.is_dns1035_label(val.lower()):
            errs.append(fe.invalid(path.child(key), val, "may have mixed case, but should "
                                   "otherwise match: " + ",".join(v.is_dns1035_label(val.lower()))))
    for i, short in enumerate(names.get("shortNames") or []):
        errs += _dns1035(path.child("shortNames").index(i), short)
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.append(fe.invalid(path.child("listKind"), names.get("listKind"),
                               "kind and listKind may not be the same"))
    for i, cat in enumerate(names.get("categories") or []):
        errs += _dns1035(path.child("categories").index(i), cat)
    return errs


def _simple_json_path(s: str, path: Path) -> list[FieldError]:
    if not s:
        return [fe.invalid(path, s, "must not be empty")]
    if s[0] != ".":
        return [fe.invalid(path, s, "must be a simple json path starting with .")]
    return []


def validate_column(col: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateCustomResourceColumnDefinition}."""
    errs: list[FieldError] = []
    types = ",".join(PRINTER_COLUMN_TYPES)
    if not col.get("name"):
        errs.append(fe.required(path.child("name"), ""))
    if not col.get("type"):
        errs.append(fe.required(path.child("type"), f"must be one of {types}"))
    elif col["type"] not in PRINTER_COLUMN_TYPES:
        errs.append(fe.invalid(path.child("type"), col["type"], f"must be one of {types}"))
    if col.get("format") and col["format"] not in PRINTER_COLUMN_FORMATS:
        errs.append(fe.invalid(path.child("format"), col["format"],
                               f"must be one of {','.join(PRINTER_COLUMN_FORMATS)}"))
    if not col.get("jsonPath"):
        errs.append(fe.required(path.child("JSONPath"), ""))
    else:
        errs += _simple_json_path(col["jsonPath"], path.child("JSONPath"))
    return errs


def validate_subresources(subs: dict | None, path: Path) -> list[FieldError]:
    """Upstream C{ValidateCustomResourceDefinitionSubresources} (the scale paths)."""
    errs: list[FieldError] = []
    scale = (subs or {}).get("scale")
    if not isinstance(scale, dict):
        return errs
    for key, prefix, text in (("specReplicasPath", (".spec.",),
                               "should be a json path under .spec"),
                              ("statusReplicasPath", (".status.",),
                               "should be a json path under .status")):
        p = path.child(f"scale.{key}")
        val = scale.get(key) or ""
        if not val:
            errs.append(fe.required(p, ""))
            continue
        bad = _simple_json_path(val, p)
        if bad:
            errs += bad
        elif not val.startswith(prefix):
            errs.append(fe.invalid(p, val, text))
    sel = scale.get("labelSelectorPath")
    if sel:
        p = path.child("scale.labelSelectorPath")
        bad = _simple_json_path(sel, p)
        if bad:
            errs += bad
        elif not sel.startswith((".spec.", ".status.")):
            errs.append(fe.invalid(p, sel, "should be a json path under either .spec or .status"))
    return errs


def _walk_schema(schema: dict, dotted: str) -> dict | None:
    node: dict | None = schema
    for part in [p for p in dotted.split(".") if p]:
        if not isinstance(node, dict):
            return None
        node = (node.get("properties") or {}).get(part)
    return node


def validate_selectable_fields(fields: list[dict], schema: dict | None,
                               path: Path) -> list[FieldError]:
    """Upstream C{ValidateCustomResourceSelectableFields}."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, sf in enumerate(fields):
        p = path.index(i).child("jsonPath")
        jp = sf.get("jsonPath") or ""
        if not jp:
            errs.append(fe.required(p, ""))
            continue
        target = _walk_schema(schema or {}, jp)
        if target is None:
            errs.append(fe.invalid(p, jp, "is an invalid path: does not refer to a valid field"))
            continue
        if jp.lstrip(".").split(".")[0] == "metadata":
            errs.append(fe.invalid(p, jp, "must not point to fields in metadata"))
        if target.get("type") not in ("string", "boolean", "integer"):
            errs.append(fe.invalid(p, jp, "must point to a field of type string, boolean or "
                                          "integer. Enum string fields and strings with formats "
                                          "are allowed."))
        if jp in seen:
            errs.append(fe.duplicate(p, jp))
        seen.add(jp)
    if len(seen) > MAX_SELECTABLE_FIELDS:
        errs.append(fe.too_many(path, len(seen), MAX_SELECTABLE_FIELDS))
    return errs


def validate_schema(schema: dict | None, status_enabled: bool, path: Path) -> list[FieldError]:
    """Upstream C{validateCustomResourceDefinitionValidation} of one C{{openAPIV3Schema}}."""
    errs: list[FieldError] = []
    if schema is None:
        return errs
    root = schema.get("openAPIV3Schema")
    if not isinstance(root, dict):
        return errs
    p = path.child("openAPIV3Schema")
    if status_enabled:
        for key, val in root.items():
            if val in (None, "", 0, False, [], {}):
                continue
            if key == "type":
                if val != "object":
                    errs.append(fe.invalid(path.child("openAPIV3Schema.type"), val,
                                           'only "object" is allowed as the type at the root of '
                                           'the schema if the status subresource is enabled'))
                    break
                continue
            if key not in _ROOT_ALLOWED_WITH_STATUS:
                errs.append(fe.invalid(p, fe.OMIT, f"only {_ROOT_ALLOWED_GO} fields are allowed "
                                                   "at the root of the schema if the status "
                                                   "subresource is enabled"))
                break
    if root.get("nullable"):
        errs.append(fe.forbidden(path.child("openAPIV3Schema.nullable"),
                                 "nullable cannot be true at the root"))
    structural = schemaops.structural_errors(root, p)
    errs += structural
    if not structural:
        errs += schemaops.compile_rules(root, p)
    return errs


def _deprecation_warning_errors(ver: dict) -> list[str]:
    warning = ver.get("deprecationWarning")
    if not ver.get("deprecated") and warning is not None:
        return ["can only be set for deprecated versions"]
    if warning is None:
        return []
    out = []
    if len(warning) > 256:
        out.append("must be <= 256 characters long")
    if not warning:
        out.append("must not be an empty string")
    for i, ch in enumerate(warning.encode("utf-8").decode("utf-8")):
        cat = unicodedata.category(ch)
        if cat == "Cc":
            out.append(f"must only contain printable UTF-8 characters; control character "
                       f"found at index {len(warning[:i].encode())}")
            break
        if cat in ("Cf", "Cs", "Co", "Cn") or (cat.startswith("Z") and ch != " "):
            out.append(f"must only contain printable UTF-8 characters; non-printable character "
                       f"found at index {len(warning[:i].encode())}")
            break
    return out


def _validate_webhook_url(url: str, path: Path) -> list[FieldError]:
    form = "; desired format: https://host[/path]"
    errs: list[FieldError] = []
    try:
        parts = urlsplit(url)
    except ValueError as e:
        return [fe.required(path, f"url must be a valid URL: {e}{form}")]
    if parts.scheme != "https":
        errs.append(fe.invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + form))
    if not parts.hostname:
        errs.append(fe.invalid(path, parts.hostname or "", "host must be specified" + form))
    if parts.username is not None:
        errs.append(fe.invalid(path, parts.netloc.rsplit("@", 1)[0],
                               "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(fe.invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(fe.invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return errs


def _validate_webhook_service(svc: dict, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if not svc.get("name"):
        errs.append(fe.required(path.child("name"), "service name is required"))
    if not svc.get("namespace"):
        errs.append(fe.required(path.child("namespace"), "service namespace is required"))
    port = svc.get("port", 443)
    bad = v.is_valid_port_num(port) if isinstance(port, int) else ["must be an integer"]
    if bad:
        errs.append(fe.invalid(path.child("port"), port, "port is not valid: " + ", ".join(bad)))
    url_path = svc.get("path")
    if url_path and url_path != "/" and not url_path.startswith("/"):
        errs.append(fe.invalid(path.child("path"), url_path, "must start with a '/'"))
    return errs


def validate_conversion(conversion: dict | None, path: Path,
                        require_recognized: bool = True) -> list[FieldError]:
    """Upstream C{validateCustomResourceConversion} over the v1 shape
    (C{webhook.clientConfig}, C{webhook.conversionReviewVersions})."""
    errs: list[FieldError] = []
    if not isinstance(conversion, dict):
        return errs
    strategy = conversion.get("strategy") or ""
    if not strategy:
        errs.append(fe.required(path.child("strategy"), ""))
    elif strategy not in ("None", "Webhook"):
        errs.append(fe.not_supported(path.child("strategy"), strategy, ["None", "Webhook"]))
    webhook = conversion.get("webhook") or {}
    cc = webhook.get("clientConfig")
    reviews = webhook.get("conversionReviewVersions")
    if strategy == "Webhook":
        cc_path = path.child("webhookClientConfig")
        if not isinstance(cc, dict):
            errs.append(fe.required(cc_path, "required when strategy is set to Webhook"))
        elif (cc.get("url") is None) == (cc.get("service") is None):
            errs.append(fe.required(cc_path, "exactly one of url or service is required"))
        elif cc.get("url") is not None:
            errs += _validate_webhook_url(cc["url"], cc_path.child("url"))
        else:
            errs += _validate_webhook_service(cc["service"], cc_path.child("service"))
        rv_path = path.child("conversionReviewVersions")
        if not reviews:
            errs.append(fe.required(rv_path, ""))
        else:
            seen: set[str] = set()
            accepted = False
            for i, rv in enumerate(reviews):
                if rv in seen:
                    errs.append(fe.invalid(rv_path.index(i), rv, "duplicate version"))
                    continue
                seen.add(rv)
                for msg in v.is_dns1035_label(rv):
                    errs.append(fe.invalid(rv_path.index(i), rv, msg))
                accepted = accepted or rv in ("v1", "v1beta1")
            if require_recognized and not accepted:
                errs.append(fe.invalid(rv_path, reviews,
                                       "must include at least one of v1, v1beta1"))
    else:
        if cc is not None:
            errs.append(fe.forbidden(path.child("webhookClientConfig"),
                                     "should not be set when strategy is not set to Webhook"))
        if reviews:
            errs.append(fe.forbidden(path.child("conversionReviewVersions"),
                                     "should not be set when strategy is not set to Webhook"))
    return errs


def validate_spec(spec: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateCustomResourceDefinitionSpec} over a v1 spec, with internal paths."""
    errs: list[FieldError] = []
    group = spec.get("group") or ""
    if not group:
        errs.append(fe.required(path.child("group"), ""))
    elif v.is_dns1123_subdomain(group):
        errs.append(fe.invalid(path.child("group"), group, ",".join(v.is_dns1123_subdomain(group))))
    elif len(group.split(".")) < 2:
        errs.append(fe.invalid(path.child("group"), group,
                               "should be a domain with at least one dot"))
    scope = spec.get("scope") or ""
    if not scope:
        errs.append(fe.required(path.child("scope"), ""))
    elif scope not in ("Cluster", "Namespaced"):
        errs.append(fe.not_supported(path.child("scope"), scope, ["Cluster", "Namespaced"]))
    layout = _Layout(spec)
    vs = [x for x in spec.get("versions") or [] if isinstance(x, dict)]
    vpath = path.child("versions")
    if not layout.schema_top:
        for i, ver in enumerate(vs):
            if not (ver.get("schema") or {}).get("openAPIV3Schema"):
                errs.append(fe.required(vpath.index(i).child("schema").child("openAPIV3Schema"),
                                        ""))
    elif vs and not (vs[0].get("schema") or {}).get("openAPIV3Schema"):
        for i in range(len(vs)):
            errs.append(fe.required(vpath.index(i).child("schema").child("openAPIV3Schema"), ""))
    storage_count = 0
    names_seen: set[str] = set()
    unique = True
    for i, ver in enumerate(vs):
        name = ver.get("name") or ""
        storage_count += 1 if ver.get("storage") else 0
        if name in names_seen:
            unique = False
        names_seen.add(name)
        errs += _dns1035(vpath.index(i).child("name"), name)
        for msg in _deprecation_warning_errors(ver):
            errs.append(fe.invalid(vpath.index(i).child("deprecationWarning"),
                                   ver.get("deprecationWarning"), msg))
        status_enabled = "status" in (ver.get("subresources") or {})
        if not layout.schema_top:
            errs += validate_schema(ver.get("schema"), status_enabled,
                                    vpath.index(i).child("schema"))
        if not layout.sub_top:
            errs += validate_subresources(ver.get("subresources"),
                                          vpath.index(i).child("subresources"))
        if not layout.cols_top:
            for j, col in enumerate(ver.get("additionalPrinterColumns") or []):
                errs += validate_column(
                    col, vpath.index(i).child("additionalPrinterColumns").index(j))
        if not layout.sel_top and ver.get("selectableFields"):
            errs += validate_selectable_fields(
                ver["selectableFields"], (ver.get("schema") or {}).get("openAPIV3Schema"),
                vpath.index(i).child("selectableFields"))
    if not unique:
        errs.append(fe.invalid(vpath, fe.OMIT, "must contain unique version names"))
    if storage_count != 1:
        errs.append(fe.invalid(vpath, fe.OMIT,
                               "must have exactly one version marked as storage version"))
    names = spec.get("names") or {}
    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            errs.append(fe.required(path.child("names", key), ""))
    errs += validate_names(names, path.child("names"))
    if vs and layout.schema_top:
        any_status = any("status" in (x.get("subresources") or {}) for x in vs)
        errs += validate_schema(vs[0].get("schema"), any_status, path.child("validation"))
    if vs and layout.sub_top:
        errs += validate_subresources(vs[0].get("subresources"), path.child("subresources"))
    if vs and layout.cols_top:
        for j, col in enumerate(vs[0].get("additionalPrinterColumns") or []):
            errs += validate_column(col, path.child("additionalPrinterColumns").index(j))
    if vs and layout.sel_top and vs[0].get("selectableFields"):
        errs += validate_selectable_fields(
            vs[0]["selectableFields"], (vs[0].get("schema") or {}).get("openAPIV3Schema"),
            path.child("selectableFields"))
    conversion = spec.get("conversion")
    if isinstance(conversion, dict) and conversion.get("strategy") not in (None, "None") and \
            spec.get("preserveUnknownFields"):
        errs.append(fe.invalid(path.child("conversion").child("strategy"),
                               conversion.get("strategy"),
                               "must be None if spec.preserveUnknownFields is true"))
    errs += validate_conversion(conversion, path.child("conversion"))
    return errs


def validate_stored_versions(crd: dict) -> list[FieldError]:
    """Upstream C{ValidateCustomResourceDefinitionStoredVersions}."""
    path = Path("status", "storedVersions")
    stored = list((crd.get("status") or {}).get("storedVersions") or [])
    if not stored:
        return [fe.invalid(path, stored, "must have at least one stored version")]
    errs: list[FieldError] = []
    remaining = {name: i for i, name in enumerate(stored)}
    for ver in versions(crd):
        name = ver.get("name")
        if ver.get("storage") and name not in remaining:
            errs.append(fe.invalid(path, stored, f"must have the storage version {name}"))
        remaining.pop(name, None)
    for name, i in remaining.items():
        errs.append(fe.invalid(path.index(i), name, (
            f"missing from spec.versions; {name} was previously a storage version, and must "
            f"remain in spec.versions until a storage migration ensures no data remains "
            f"persisted in {name} and removes {name} from status.storedVersions")))
    return errs


def _preserve_unknown(new: dict, old: dict | None) -> list[FieldError]:
    if (new.get("spec") or {}).get("preserveUnknownFields") is True:
        if old is not None and (old.get("spec") or {}).get("preserveUnknownFields") is True:
            return []
        return [fe.invalid(Path("spec", "preserveUnknownFields"), True,
                           "cannot set to true, set x-kubernetes-preserve-unknown-fields to true "
                           "in openAPIV3Schema instead")]
    return []


def _name_rule(crd: dict):
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    required = f"{names.get('plural', '')}.{spec.get('group', '')}"

    def check(name: str, prefix: bool) -> list[str]:
        out = v.name_is_dns_subdomain(name, prefix)
        if name != required:
            out = out + ['must be spec.names.plural+"."+spec.group']
        return out

    return check


def validate_crd(crd: dict) -> list[FieldError]:
    """Upstream C{ValidateCustomResourceDefinition} (create)."""
    errs = v.validate_object_meta(crd.get("metadata") or {}, False, _name_rule(crd),
                                  Path("metadata"))
    errs += validate_spec(crd.get("spec") or {}, Path("spec"))
    errs += validate_names((crd.get("status") or {}).get("acceptedNames") or {},
                           Path("status", "acceptedNames"))
    errs += validate_stored_versions(crd)
    errs += _validate_api_approval(crd, None)
    errs += _preserve_unknown(crd, None)
    return errs


def validate_crd_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateCustomResourceDefinitionUpdate}: the create rules plus immutable
    C{group}, C{names.plural}, and once Established C{scope} and C{names.kind}."""
    errs = v.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                         Path("metadata"))
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errs += validate_spec(spec, Path("spec"))
    if is_condition_true(old, "Established"):
        errs += v.validate_immutable_field(spec.get("scope"), old_spec.get("scope"),
                                           Path("spec", "scope"))
        errs += v.validate_immutable_field((spec.get("names") or {}).get("kind"),
                                           (old_spec.get("names") or {}).get("kind"),
                                           Path("spec", "names", "kind"))
    errs += v.validate_immutable_field(spec.get("group"), old_spec.get("group"),
                                       Path("spec", "group"))
    errs += v.validate_immutable_field((spec.get("names") or {}).get("plural"),
                                       (old_spec.get("names") or {}).get("plural"),
                                       Path("spec", "names", "plural"))
    errs += validate_names((new.get("status") or {}).get("acceptedNames") or {},
                           Path("status", "acceptedNames"))
    errs += validate_stored_versions(new)
    errs += _validate_api_approval(new, old)
    errs += _preserve_unknown(new, old)
    return errs


def validate_crd_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateUpdateCustomResourceDefinitionStatus}."""
    errs = v.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                         Path("metadata"))
    errs += validate_names((new.get("status") or {}).get("acceptedNames") or {},
                           Path("status", "acceptedNames"))
    return errs


def prepare_for_create(crd: dict) -> None:
    """Upstream strategy C{PrepareForCreate}: status reset to the storage version, generation 1."""
    sv = storage_version(crd)
    crd["status"] = {"storedVersions": [sv]} if sv else {}
    crd["metadata"]["generation"] = 1


def prepare_for_update(new: dict, old: dict) -> None:
    """Upstream strategy C{PrepareForUpdate}: status kept, generation bumped on spec changes,
    a new storage version appended to C{status.storedVersions}."""
    new["status"] = copy.deepcopy(old.get("status") or {})
    if new.get("spec") != old.get("spec"):
        new["metadata"]["generation"] = (old.get("metadata") or {}).get("generation", 0) + 1
    sv = storage_version(new)
    stored = new["status"].setdefault("storedVersions", [])
    if sv and sv not in stored:
        stored.append(sv)


def prepare_for_status_update(new: dict, old: dict) -> None:
    """Upstream C{statusStrategy.PrepareForUpdate}: a status update keeps the old spec,
    labels, annotations, owner references and generation (finalizers may change)."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})
    meta, old_meta = new.setdefault("metadata", {}), old.get("metadata") or {}
    for key in ("labels", "annotations", "ownerReferences", "generation"):
        if key in old_meta:
            meta[key] = copy.deepcopy(old_meta[key])
        else:
            meta.pop(key, None)
