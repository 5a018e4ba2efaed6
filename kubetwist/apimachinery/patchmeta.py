# -*- test-case-name: tests.apimachinery.test_patchmeta,tests.apimachinery.test_strategicpatch -*-
"""
Strategic-merge-patch metadata: the lookup that upstream
C{k8s.io/apimachinery/pkg/util/strategicpatch} performs over Go structs
(C{PatchMetaFromStruct}, C{LookupPatchMetadataForStruct}, C{LookupPatchMetadataForSlice}),
done over kubetwist's own tables of the Go API types (L{kubetwist.runtime.types}).

The C{patchStrategy} / C{patchMergeKey} struct tags live in those tables (a row's
C{patch_strategy} and C{patch_merge_key}), so every built-in kind with a type table gets
strategic merge patch with no further data.  A field without a tag has no strategy: maps merge,
lists are replaced whole, exactly what an untagged struct field gives upstream.
"""

from __future__ import annotations

from kubetwist.runtime import types as typetables

__all__ = ["PatchMeta", "patch_meta_for"]

#: ObjectMeta's full type name: the root of a built-in kind that has no type table yet.
_OBJECT_META = f"{typetables.meta_v1.PACKAGE}.ObjectMeta"


class PatchMeta:
    """
    The strategic-merge metadata of one struct type (upstream C{LookupPatchMeta}).

    @ivar name: the type's name (used in error messages), C{""} for an unknown schema.
    """

    __slots__ = ("name", "_type", "_fields")

    def __init__(self, name: str, type_name: str | None, fields: dict | None = None) -> None:
        """
        @param name: the name used in error messages (C{Pod}, C{Container}).
        @param type_name: a full type name of L{kubetwist.runtime.types.TYPES}
            (C{io.k8s.api.core.v1.PodSpec}), or C{None} for a schema with no fields (every
            lookup then answers "no strategy").
        @param fields: instead of C{type_name}, C{{json name: FieldDef}} directly.
        """
        self.name = name
        self._type = type_name
        if fields is None:
            fields = _json_fields(type_name) if type_name in typetables.TYPES else {}
        self._fields = fields

    def _lookup(self, key: str) -> tuple["PatchMeta", list[str], str]:
        f = self._fields.get(key)
        if f is None:
            return PatchMeta("", None), [], ""
        child = f.type if f.is_message else None
        sub = PatchMeta(child.rsplit(".", 1)[-1] if child else "", child)
        strategies = f.patch_strategy.split(",") if f.patch_strategy else []
        return sub, strategies, f.patch_merge_key

    def lookup_struct(self, key: str) -> tuple["PatchMeta", list[str], str]:
        """C{LookupPatchMetadataForStruct}: C{(subschema, strategies, merge key)}."""
        return self._lookup(key)

    def lookup_slice(self, key: str) -> tuple["PatchMeta", list[str], str]:
        """C{LookupPatchMetadataForSlice}: C{(element schema, strategies, merge key)}."""
        return self._lookup(key)

    def __repr__(self) -> str:
        return f"PatchMeta({self.name!r})"


def _json_fields(type_name: str) -> dict:
    """C{{json name: FieldDef}} of a struct, with inline embedded structs' fields promoted."""
    out: dict = {}
    for f in typetables.TYPES[type_name].fields:
        if f.inline:
            out.update(_json_fields(f.type))
        else:
            out[f.json_name] = f
    return out


def _kind_type(group: str, kind: str, version: str | None) -> str | None:
    if version:
        found = typetables.lookup_kind(group, version, kind)
        if found:
            return found
    for (g, _v, k), name in typetables.KINDS.items():
        if g == group and k == kind:
            return name
    return None


def _builtin_group(group: str) -> bool:
    return any(g == group for (g, _v, _k) in typetables.KINDS)


def patch_meta_for(group: str, kind: str, version: str | None = None) -> PatchMeta | None:
    """
    The root metadata for a built-in kind (in C{version} when given, else any served version
    of it), or C{None} for kinds without Go types (custom resources, for which kube-apiserver
    refuses strategic merge patch with 415).

    A kind of a built-in group whose type table is still missing gets a root knowing only
    C{metadata} (so C{ownerReferences} and C{finalizers} still merge as upstream).
    """
    name = _kind_type(group, kind, version)
    if name is not None:
        return PatchMeta(kind, name)
    if _builtin_group(group):
        meta = typetables.FieldDef("metadata", 1, _OBJECT_META, omitempty=True)
        return PatchMeta(kind, None, {"metadata": meta})
    return None
