# -*- test-case-name: tests.apiextensions.test_schema_pruning -*-
"""
TypeMeta and ObjectMeta inside custom resources: embedded resources and metadata pruning.

Upstream: C{k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta}
(C{Validate}: every C{x-kubernetes-embedded-resource} object needs C{apiVersion} and
C{kind} and valid metadata; C{Coerce}/C{GetObjectMetaWithOptions}: metadata is decoded into
C{metav1.ObjectMeta}, which drops unknown fields and reports them for strict field
validation).  The root object's C{metadata} is validated by the registry, not here.
"""

from __future__ import annotations

from typing import Any

from kubetwist.apiextensions.schema.compiled import SchemaNode
from kubetwist.apimachinery.validation import name_is_dns1035_label, validate_object_meta
from kubetwist.runtime import field as fe
from kubetwist.runtime import gofmt
from kubetwist.runtime.field import FieldError, Path

#: JSON names of C{metav1.ObjectMeta} fields.
OBJECT_META_FIELDS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields",
})
_OWNER_REFERENCE_FIELDS = frozenset({
    "apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"})
_MANAGED_FIELDS_FIELDS = frozenset({
    "manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"})

# Go types of ObjectMeta fields, to report decoding errors as encoding/json does
_STRING_FIELDS = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion")
_INT_FIELDS = ("generation", "deletionGracePeriodSeconds")


def prune_object_meta(meta: Any, prefix: str, unknown: list[str]) -> None:
    """
    Drop fields C{metav1.ObjectMeta} does not have (also inside ownerReferences and
    managedFields entries), in place, recording C{<prefix>metadata.<field>} paths.

    @param prefix: the path of the object holding C{metadata}, with a trailing dot
        (C{""} at the root, C{"spec.template."} for an embedded resource).
    """
    if not isinstance(meta, dict):
        return
    base = prefix + "metadata"
    for k in list(meta):
        if k not in OBJECT_META_FIELDS:
            unknown.append(f"{base}.{k}")
            del meta[k]
    for name, allowed in (("ownerReferences", _OWNER_REFERENCE_FIELDS),
                          ("managedFields", _MANAGED_FIELDS_FIELDS)):
        entries = meta.get(name)
        if isinstance(entries, list):
            for i, entry in enumerate(entries):
                if isinstance(entry, dict):
                    for k in list(entry):
                        if k not in allowed:
                            unknown.append(f"{base}.{name}[{i}].{k}")
                            del entry[k]


_go_json_type = gofmt.json_kind


def object_meta_decode_error(meta: Any) -> str | None:
    """
    Why C{meta} does not decode into C{metav1.ObjectMeta}, in C{encoding/json}'s words
    (C{json: cannot unmarshal number into Go struct field ObjectMeta.name of type string}),
    or C{None}.
    """
    if meta is None:
        return None
    if not isinstance(meta, dict):
        return (f"json: cannot unmarshal {_go_json_type(meta)} into Go value of type "
                "v1.ObjectMeta")
    for k in _STRING_FIELDS:
        v = meta.get(k)
        if v is not None and not isinstance(v, str):
            return (f"json: cannot unmarshal {_go_json_type(v)} into Go struct field "
                    f"ObjectMeta.{k} of type string")
    for k in _INT_FIELDS:
        v = meta.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            return (f"json: cannot unmarshal {_go_json_type(v)} into Go struct field "
                    f"ObjectMeta.{k} of type int64")
    for k in ("labels", "annotations"):
        v = meta.get(k)
        if v is None:
            continue
        if not isinstance(v, dict):
            return (f"json: cannot unmarshal {_go_json_type(v)} into Go struct field "
                    f"ObjectMeta.{k} of type map[string]string")
        for x in v.values():
            if x is not None and not isinstance(x, str):
                return (f"json: cannot unmarshal {_go_json_type(x)} into Go struct field "
                        f"ObjectMeta.{k} of type string")
    v = meta.get("finalizers")
    if v is not None:
        if not isinstance(v, list):
            return (f"json: cannot unmarshal {_go_json_type(v)} into Go struct field "
                    "ObjectMeta.finalizers of type []string")
        for x in v:
            if x is not None and not isinstance(x, str):
                return (f"json: cannot unmarshal {_go_json_type(x)} into Go struct field "
                        "ObjectMeta.finalizers of type string")
    for k, typ in (("ownerReferences", "[]v1.OwnerReference"),
                   ("managedFields", "[]v1.ManagedFieldsEntry")):
        v = meta.get(k)
        if v is not None and not isinstance(v, list):
            return (f"json: cannot unmarshal {_go_json_type(v)} into Go struct field "
                    f"ObjectMeta.{k} of type {typ}")
    return None


def _path_segment(name: str, prefix: bool) -> list[str]:
    """C{path.ValidatePathSegmentName} (and its prefix form)."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    for bad in ("/", "%"):
        if bad in name:
            return [f"may not contain '{bad}'"]
    return []


def _parse_group_version_error(gv: str) -> str | None:
    if gv in ("", "/") or gv.count("/") <= 1:
        return None
    return f"unexpected GroupVersion string: {gv}"


def _validate_embedded(path: Path, obj: dict) -> list[FieldError]:
    errs: list[FieldError] = []
    if "apiVersion" not in obj:
        errs.append(fe.required(path.child("apiVersion")))
    if "kind" not in obj:
        errs.append(fe.required(path.child("kind")))
    for k, v in obj.items():
        if k == "apiVersion":
            p = path.child("apiVersion")
            if not isinstance(v, str):
                errs.append(fe.invalid(p, v, "must be a string"))
            elif not v:
                errs.append(fe.invalid(p, v, "must not be empty"))
            else:
                msg = _parse_group_version_error(v)
                if msg:
                    errs.append(fe.invalid(p, v, msg))
        elif k == "kind":
            p = path.child("kind")
            if not isinstance(v, str):
                errs.append(fe.invalid(p, v, "must be a string"))
            elif not v:
                errs.append(fe.invalid(p, v, "must not be empty"))
            else:
                msgs = name_is_dns1035_label(v.lower(), False)
                if msgs:
                    errs.append(fe.invalid(
                        p, v, "may have mixed case, but should otherwise match: " + ",".join(msgs)))
        elif k == "metadata":
            p = path.child("metadata")
            err = object_meta_decode_error(v)
            if err is not None:
                errs.append(fe.invalid(p, v, err))
                continue
            meta = dict(v or {})
            if not meta.get("name"):
                meta["name"] = "fakename"
            errs.extend(validate_object_meta(meta, bool(meta.get("namespace")), _path_segment, p))
    return errs


def validate_embedded_object_meta(node: SchemaNode | None, obj: Any,
                                  path: Path | str | None = None,
                                  is_resource_root: bool = False) -> list[FieldError]:
    """
    Upstream C{objectmeta.Validate}: TypeMeta and ObjectMeta of every embedded resource.

    @param node: the compiled schema of C{obj}.
    @param obj: the custom resource (or a part of it).
    @param path: where C{obj} sits (C{None}: the resource root).
    @param is_resource_root: also check C{obj} itself as a resource (the registry does that
        for whole custom resources, so the default is C{False}, as upstream's strategy).
    @return: C{Required} C{apiVersion}/C{kind}, C{Invalid} values, ObjectMeta errors (names
        are path segments, namespace optional).
    """
    errs: list[FieldError] = []
    _walk(node, obj, str(path) if path is not None else "", errs, is_resource_root)
    return errs


def _as_path(path: str) -> Path:
    return Path(path) if path else Path()


def _walk(node: SchemaNode | None, x: Any, path: str, errs: list[FieldError],
          force_embedded: bool = False) -> None:
    if node is None:
        if force_embedded and isinstance(x, dict):
            errs.extend(_validate_embedded(_as_path(path), x))
        return
    if not (node.has_embedded or force_embedded):
        return
    if isinstance(x, dict):
        if node.embedded or force_embedded:
            errs.extend(_validate_embedded(_as_path(path), x))
        props = node.properties
        for k, v in x.items():
            sub = props.get(k) if props is not None else None
            if sub is not None:
                _walk(sub, v, f"{path}.{k}" if path else k, errs)
            elif node.ap_present:
                _walk(node.ap_node, v, f"{path}[{k}]", errs)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            _walk(node.items, v, f"{path}[{i}]", errs)


def coerce_embedded(node: SchemaNode | None, x: Any, path: str, unknown: list[str],
                    force_embedded: bool = False) -> FieldError | None:
    """
    Upstream C{objectmeta.Coerce} (strict, not dropping invalid fields): embedded
    C{apiVersion}/C{kind} must be strings, embedded C{metadata} must decode (its unknown
    fields are pruned and recorded in C{unknown}; a zero C{creationTimestamp} is removed).

    @return: the first error (C{Invalid}), or C{None}.
    """
    if node is None and not force_embedded:
        return None
    if not force_embedded and not node.has_embedded:
        return None
    if isinstance(x, dict):
        embedded = force_embedded or (node is not None and node.embedded)
        dot = path + "." if path else ""
        for k in list(x):
            v = x[k]
            if embedded:
                if k in ("apiVersion", "kind") and not isinstance(v, str):
                    return fe.invalid(dot + k, v, "must be a string")
                if k == "metadata":
                    err = object_meta_decode_error(v)
                    if err is not None:
                        return fe.invalid(dot + "metadata", v, err)
                    if isinstance(v, dict):
                        prune_object_meta(v, dot, unknown)
                        if v.get("creationTimestamp", 0) is None:
                            del v["creationTimestamp"]
            if node is None:
                continue
            sub = node.properties.get(k) if node.properties is not None else None
            if sub is not None:
                err2 = coerce_embedded(sub, v, dot + k, unknown)
            elif node.ap_present:
                err2 = coerce_embedded(node.ap_node, v, f"{path}[{k}]", unknown)
            else:
                err2 = None
            if err2 is not None:
                return err2
    elif isinstance(x, list) and node is not None:
        for i, v in enumerate(x):
            err2 = coerce_embedded(node.items, v, f"{path}[{i}]", unknown)
            if err2 is not None:
                return err2
    return None
