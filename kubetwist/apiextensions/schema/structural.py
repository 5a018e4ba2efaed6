# -*- test-case-name: tests.apiextensions.test_schema_structural -*-
"""
Structural-ness of a CRD version's C{openAPIV3Schema}.

Upstream: C{k8s.io/apiextensions-apiserver/pkg/apiserver/schema} (C{NewStructural} in
convert.go, C{ValidateStructural} in validation.go and complete.go), as the
C{NonStructuralSchema} condition controller and CRD validation call it.  A schema is
structural when every specified field has a C{type} (unless int-or-string or
preserve-unknown-fields), the junctors C{allOf}/C{anyOf}/C{oneOf}/C{not} only restrict values
(no types, defaults, descriptions, extensions, C{metadata}) and only name fields the
structural part also specifies, C{metadata} at the root restricts at most C{name} and
C{generateName}, and embedded resources are objects.
"""

from __future__ import annotations

from typing import Any

from kubetwist.apiextensions.schema.formats import GoRegexpError, compile_go_regexp
from kubetwist.runtime import field as fe
from kubetwist.runtime.field import FieldError, Path

_ROOT, _ITEM, _FIELD = 0, 1, 2
_EMPTY_TYPE = {
    _ROOT: "must not be empty at the root",
    _ITEM: "must not be empty for specified array items",
    _FIELD: "must not be empty for specified object fields",
}
_INT_OR_STRING_ANYOF = [{"type": "integer"}, {"type": "string"}]


class UnsupportedSchemaError(ValueError):
    """
    The schema uses a field C{NewStructural} refuses (upstream's conversion error, reported
    by the controller as reason C{StructuralError}: C{failed to check validation schema for
    version v1: OpenAPIV3Schema '$ref' is not supported}).
    """


_UNSUPPORTED = (("id", "id"), ("$schema", "schema"), ("$ref", "$ref"),
                ("patternProperties", "patternProperties"), ("dependencies", "dependencies"),
                ("additionalItems", "additionalItems"), ("definitions", "definitions"))


def _check_supported(s: Any) -> None:
    if not isinstance(s, dict):
        return
    for key, name in _UNSUPPORTED:
        v = s.get(key)
        if v is not None and v != "" and v != {}:
            raise UnsupportedSchemaError(f"OpenAPIV3Schema '{name}' is not supported")
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        raise UnsupportedSchemaError(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined")
    for key in ("not",):
        _check_supported(s.get(key))
    for key in ("allOf", "anyOf", "oneOf"):
        for x in s.get(key) or ():
            _check_supported(x)
    items = s.get("items")
    if isinstance(items, list):
        raise UnsupportedSchemaError("OpenAPIV3Schema 'items' must be a schema, but is an array")
    _check_supported(items)
    for v in (s.get("properties") or {}).values():
        _check_supported(v)
    ap = s.get("additionalProperties")
    if isinstance(ap, dict):
        _check_supported(ap)


def _zero(v: Any) -> bool:
    return v is None or v is False or (isinstance(v, (str, list, dict)) and len(v) == 0)


def _props(s: dict) -> dict:
    p = s.get("properties")
    return p if isinstance(p, dict) else {}


def _is_int_or_string_anyof(s: dict) -> bool:
    return s.get("anyOf") == _INT_OR_STRING_ANYOF


def _is_int_or_string_allof(s: dict) -> bool:
    all_of = s.get("allOf") or []
    return bool(all_of) and isinstance(all_of[0], dict) and \
        all_of[0].get("anyOf") == _INT_OR_STRING_ANYOF


def _invariants(s: dict, lvl: int, p: Path, errs: list[FieldError]) -> None:
    t = s.get("type") or ""
    items = s.get("items")
    if t == "array" and not isinstance(items, dict):
        errs.append(fe.required(p.child("items"), "must be specified"))
    if isinstance(items, dict):
        _invariants(items, _ITEM, p.child("items"), errs)
    props = _props(s)
    for k, v in props.items():
        _invariants(v, _FIELD, p.child("properties").key(k), errs)
    ap = s.get("additionalProperties")
    if ap is not None:
        if lvl == _ROOT:
            errs.append(fe.forbidden(p.child("additionalProperties"),
                                     "must not be used at the root"))
        if isinstance(ap, dict):
            _invariants(ap, _FIELD, p.child("additionalProperties"), errs)
    ios = bool(s.get("x-kubernetes-int-or-string"))
    puf = s.get("x-kubernetes-preserve-unknown-fields") is True
    emb = bool(s.get("x-kubernetes-embedded-resource"))
    if ios and puf:
        errs.append(fe.invalid(p.child("x-kubernetes-preserve-unknown-fields"), True,
                               "must be false if x-kubernetes-int-or-string is true"))
    if ios and emb:
        errs.append(fe.invalid(p.child("x-kubernetes-embedded-resource"), True,
                               "must be false if x-kubernetes-int-or-string is true"))
    _value_validation(s, _is_int_or_string_anyof(s), _is_int_or_string_allof(s), lvl, p, errs)
    check_meta = lvl == _ROOT or emb
    if emb and t != "object":
        msg = "must be object if x-kubernetes-embedded-resource is true"
        errs.append(fe.required(p.child("type"), msg) if not t
                    else fe.invalid(p.child("type"), t, msg))
    elif not t and not ios and not puf:
        errs.append(fe.required(p.child("type"), _EMPTY_TYPE[lvl]))
    if emb and ap is not None:
        errs.append(fe.forbidden(p.child("additionalProperties"),
                                 "must not be used if x-kubernetes-embedded-resource is set"))
    if lvl == _ROOT and t and t != "object":
        errs.append(fe.invalid(p.child("type"), t, "must be object at the root"))
    for name in ("kind", "apiVersion"):
        if name in props and check_meta:
            nt = props[name].get("type") or ""
            if nt != "string":
                errs.append(fe.invalid(p.child("properties").key(name).child("type"), nt,
                                       "must be string"))
    if "metadata" in props:
        _metadata_invariants(props["metadata"], check_meta, lvl,
                             p.child("properties").key("metadata"), errs)
    if emb and not puf and not props:
        errs.append(fe.required(p.child("properties"), "must not be empty if "
                                "x-kubernetes-embedded-resource is true without "
                                "x-kubernetes-preserve-unknown-fields"))


def _metadata_invariants(s: dict, check_meta: bool, lvl: int, p: Path,
                         errs: list[FieldError]) -> None:
    mt = s.get("type") or ""
    if check_meta and mt != "object":
        errs.append(fe.invalid(p.child("type"), mt, "must be object"))
    if lvl != _ROOT:
        return
    props = _props(s)
    ignored = {"type", "default"}
    if ("name" in props and "generateName" in props and len(props) == 2) or \
            (("name" in props or "generateName" in props) and len(props) == 1):
        ignored.add("properties")
    for k, v in s.items():
        if k in ignored or (v is None if k in ("default", "example") else _zero(v)):
            continue
        errs.append(fe.forbidden(p, "must not specify anything other than name and generateName, "
                                    "but metadata is implicitly specified"))
        return


def _value_validation(v: dict, skip_any: bool, skip_first_all_any: bool, lvl: int, p: Path,
                      errs: list[FieldError]) -> None:
    if not skip_any:
        for i, x in enumerate(v.get("anyOf") or ()):
            _nested(x, False, False, lvl, p.child("anyOf").index(i), errs)
    for i, x in enumerate(v.get("allOf") or ()):
        _nested(x, skip_first_all_any and i == 0, False, lvl, p.child("allOf").index(i), errs)
    for i, x in enumerate(v.get("oneOf") or ()):
        _nested(x, False, False, lvl, p.child("oneOf").index(i), errs)
    n = v.get("not")
    if isinstance(n, dict):
        _nested(n, False, False, lvl, p.child("not"), errs)
    pattern = v.get("pattern")
    if pattern:
        try:
            compile_go_regexp(pattern)
        except GoRegexpError as e:
            errs.append(fe.invalid(p.child("pattern"), pattern,
                                   f"must be a valid regular expression, but isn't: {e}"))


_FORBIDDEN_NESTED = (
    ("type", "must be empty to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
)


def _nested(v: Any, skip_any: bool, skip_all_any: bool, lvl: int, p: Path,
            errs: list[FieldError]) -> None:
    if not isinstance(v, dict):
        return
    _value_validation(v, skip_any, skip_all_any, lvl, p, errs)
    items = v.get("items")
    if isinstance(items, dict):
        _nested(items, False, False, lvl, p.child("items"), errs)
    props = _props(v)
    for k, x in props.items():
        _nested(x, False, False, _FIELD, p.child("properties").key(k), errs)
    if v.get("type"):
        errs.append(fe.forbidden(p.child("type"), "must be empty to be structural"))
    ap = v.get("additionalProperties")
    if isinstance(ap, dict) or ap is True:
        errs.append(fe.forbidden(p.child("additionalProperties"),
                                 "must be undefined to be structural"))
    if v.get("default") is not None:
        errs.append(fe.forbidden(p.child("default"), "must be undefined to be structural"))
    for key, msg in _FORBIDDEN_NESTED[2:]:
        if not _zero(v.get(key)):
            errs.append(fe.forbidden(p.child(key), msg))
    if v.get("x-kubernetes-list-type") is not None:
        errs.append(fe.forbidden(p.child("x-kubernetes-list-type"),
                                 "must be undefined to be structural"))
    if v.get("x-kubernetes-map-type") is not None:
        errs.append(fe.forbidden(p.child("x-kubernetes-map-type"),
                                 "must be undefined to be structural"))
    if not _zero(v.get("x-kubernetes-validations")):
        errs.append(fe.forbidden(p.child("x-kubernetes-validations"),
                                 "must be empty to be structural"))
    if "metadata" in props:
        errs.append(fe.forbidden(p.child("properties").key("metadata"),
                                 "must not be specified in a nested context"))


def _complete_vv(v: dict, s: dict | None, sp: Path, vp: Path, errs: list[FieldError]) -> None:
    if s is None:
        errs.append(fe.required(sp, f"because it is defined in {vp}"))
        return
    n = v.get("not")
    if isinstance(n, dict):
        _complete_nested(n, s, sp, vp.child("not"), errs)
    for key in ("allOf", "anyOf", "oneOf"):
        for i, x in enumerate(v.get(key) or ()):
            _complete_nested(x, s, sp, vp.child(key).index(i), errs)


def _complete_nested(v: Any, s: dict | None, sp: Path, vp: Path,
                     errs: list[FieldError]) -> None:
    if not isinstance(v, dict):
        return
    if s is None:
        errs.append(fe.required(sp, f"because it is defined in {vp}"))
        return
    _complete_vv(v, s, sp, vp, errs)
    items = v.get("items")
    if isinstance(items, dict):
        s_items = s.get("items")
        _complete_nested(items, s_items if isinstance(s_items, dict) else None,
                         sp.child("items"), vp.child("items"), errs)
    s_props = _props(s)
    for k, x in _props(v).items():
        if k not in s_props:
            errs.append(fe.required(sp.child("properties").key(k),
                                    f"because it is defined in {vp.child('properties').key(k)}"))
        else:
            _complete_nested(x, s_props[k], sp.child("properties").key(k),
                             vp.child("properties").key(k), errs)


def structural_errors(schema: dict, path: Path | str | None = None) -> list[FieldError]:
    """
    Why C{schema} (a v1 C{openAPIV3Schema}, wire form) is not structural: upstream
    C{ValidateStructural(fldPath, NewStructural(schema))}.

    @param schema: the schema dict.
    @param path: where it sits, e.g. C{spec.versions[0].schema.openAPIV3Schema}.
    @return: field errors sorted by their text as upstream (the C{NonStructuralSchema}
        condition's message is their aggregate, L{kubetwist.runtime.field.aggregate_message}),
        e.g. C{...properties[spec].type: Required value: must not be empty for specified
        object fields}.  Empty when structural.
    @raise UnsupportedSchemaError: the schema uses a field upstream cannot convert
        (C{$ref}, C{patternProperties}, C{items} as an array, ...).
    """
    if isinstance(path, str):
        p = Path(path) if path else Path()
    else:
        p = path if path is not None else Path()
    _check_supported(schema)
    errs: list[FieldError] = []
    _invariants(schema, _ROOT, p, errs)
    _complete_vv(schema, schema, p, p, errs)
    errs.sort(key=lambda e: e.error())
    return errs
