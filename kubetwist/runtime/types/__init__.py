# -*- test-case-name: tests.runtime.test_types -*-
"""
kubetwist's own description of the built-in API types: the Go structs of C{k8s.io/api}
(core/v1, apps/v1, coordination/v1, autoscaling/v1, policy/v1) and
C{k8s.io/apimachinery/pkg/apis/meta/v1}, as data.

Each package module holds C{TYPES = {name: rows}}; a row describes one Go struct field, in the
struct's declaration order (which is the order of Go's JSON output)::

    (json_name, protobuf_number, type_expr, flags[, extra])

 - C{json_name}: the JSON key; C{""} for an embedded struct whose fields are promoted
   (C{json:",inline"}), e.g. C{Volume.VolumeSource}.  On the protobuf wire an inline struct is
   still one nested message under its own field number.
 - C{type_expr}: Go-like: C{string int32 int64 bool double bytes}; a message type name (local,
   or C{meta.X} / C{core.X} from another package); one of the special types L{SPECIALS}; a
   leading C{*} for a pointer (presence matters: nil is omitted or C{null}, a pointer to a zero
   value is written); C{[]T} for a repeated field; C{map[string]T} for a map.
 - C{flags}: C{"o"} when the json tag says C{omitempty}; C{"i"} for an inline embed; C{"r"}
   when upstream's OpenAPI lists the field as C{required} (kube-openapi's rule: C{+required},
   or neither C{+optional} nor C{omitempty}).
 - C{extra}: optional dict with C{patch_strategy}, C{patch_merge_key}, C{list_type},
   C{list_map_keys}, C{map_type} (the strategic-merge and SSA markers: C{patchStrategy},
   C{patchMergeKey}, C{+listType}, C{+listMapKey}, C{+mapType}), C{default} (the value of a
   C{+default=} marker, as JSON), C{enum} (the name of a C{+enum} string type, local or
   C{core.X}, looked up in the package's C{ENUMS}), and room for C{description}.

A module may also hold C{STRUCT_TYPES = {name: "atomic"}} for the structs marked
C{+structType=atomic} upstream (OpenAPI C{x-kubernetes-map-type: atomic} on the struct's own
schema; server-side apply replaces such a struct as a whole).  It lands in
L{TypeDef.struct_type}.  Likewise C{UNIONS = {name: (discriminator, {json_name: GoName})}}
for the C{+union} structs (OpenAPI C{x-kubernetes-unions}), in L{TypeDef.unions}, and
C{ENUMS = {name: (value, ...)}} for the C{+enum} string types (the values of the type's Go
constants, sorted: OpenAPI C{enum}), shared by every module of one package.

The registry below resolves rows into L{FieldDef}s keyed by full type name
(C{io.k8s.api.core.v1.PodSpec}) in C{TYPES}, and maps served kinds to type names in C{KINDS}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubetwist.runtime.types import (
    admissionregistration_v1,
    apidiscovery_v2,
    apidiscovery_v2beta1,
    apiextensions_v1,
    apiregistration_v1,
    apps_v1,
    authentication_v1,
    authorization_v1,
    autoscaling_v1,
    autoscaling_v2,
    batch_v1,
    certificates_v1,
    coordination_v1,
    core_v1,
    core_v1_persistentvolume,
    discovery_v1,
    events_v1,
    flowcontrol_v1,
    meta_v1,
    networking_v1,
    node_v1,
    policy_v1,
    rbac_v1,
    scheduling_v1,
    storage_v1,
)

#: Scalar protobuf types and their wire types (0 varint, 1 fixed64, 2 length-delimited).
SCALARS = {"string": 2, "bytes": 2, "int32": 0, "int64": 0, "bool": 0, "double": 1}

#: Types with their own wire/JSON codec (custom Marshal/MarshalJSON upstream): resource.Quantity,
#: intstr.IntOrString, metav1.Time, metav1.MicroTime, metav1.Duration, metav1.FieldsV1,
#: runtime.RawExtension, and C{ExtraValue} (authentication/authorization/certificates: a named
#: C{[]string}, a bare JSON list whose protobuf form is a message C{{repeated string items = 1}}).
#: Each is a length-delimited message on the wire.
#: The C{apiextensions.k8s.io} types with their own JSON forms (C{JSON}: any JSON value;
#: C{JSONSchemaPropsOr*}: a schema, or a list / bool / list of strings) are specials too; see
#: L{apiextensions_v1}.
SPECIALS = frozenset(
    {"Quantity", "IntOrString", "Time", "MicroTime", "Duration", "FieldsV1", "RawExtension",
     "ExtraValue", "JSON", "JSONSchemaPropsOrArray", "JSONSchemaPropsOrBool",
     "JSONSchemaPropsOrStringArray"}
)

_MODULES = (meta_v1, core_v1, apps_v1, coordination_v1, autoscaling_v1, policy_v1, batch_v1,
            networking_v1, autoscaling_v2, discovery_v1,
            rbac_v1, storage_v1, scheduling_v1, node_v1, flowcontrol_v1)
_MODULES += (certificates_v1, admissionregistration_v1)
_MODULES += (authentication_v1, authorization_v1)
_MODULES += (core_v1_persistentvolume,)
_MODULES += (events_v1,)
_MODULES += (apiextensions_v1, apiregistration_v1, apidiscovery_v2, apidiscovery_v2beta1)

#: Package aliases usable in a type expression (C{meta.ObjectMeta}).
ALIASES = {"meta": meta_v1.PACKAGE, "core": core_v1.PACKAGE}

#: Kinds of C{meta/v1} accepted under any group and version (upstream registers them as
#: unversioned types, or per group-version through C{metav1.AddToGroupVersion}).
META_KINDS = frozenset(
    {"Status", "DeleteOptions", "CreateOptions", "UpdateOptions", "PatchOptions", "WatchEvent"}
)


@dataclass(frozen=True)
class FieldDef:
    """
    One field of a message type.

    @ivar json_name: the JSON key (C{""} when C{inline}).
    @ivar number: the protobuf field number.
    @ivar type: a scalar name (L{SCALARS}), a special name (L{SPECIALS}) or a full message type
        name (C{io.k8s.api.core.v1.Container}).
    @ivar container: C{""}, C{"list"} (repeated) or C{"map"} (C{map<string, type>}).
    @ivar pointer: the Go field is a pointer (presence is significant).
    @ivar omitempty: the json tag has C{omitempty}.
    @ivar inline: an embedded struct whose fields are promoted into the parent in JSON.
    @ivar required: upstream's OpenAPI lists the field in its struct's C{required}.
    @ivar default: the C{+default=} marker's value (JSON-shaped), or C{None} when unmarked.
    @ivar enum: the allowed values of a C{+enum} string field, sorted; C{()} otherwise.
    """

    json_name: str
    number: int
    type: str
    container: str = ""
    pointer: bool = False
    omitempty: bool = False
    inline: bool = False
    patch_strategy: str = ""
    patch_merge_key: str = ""
    list_type: str = ""
    list_map_keys: tuple = ()
    map_type: str = ""
    description: str = ""
    required: bool = False
    default: Any = None
    enum: tuple = ()

    @property
    def is_message(self) -> bool:
        """True for a (non-special) message type."""
        return self.type not in SCALARS and self.type not in SPECIALS


@dataclass(frozen=True)
class TypeDef:
    """
    One message type.

    @ivar name: full name, C{io.k8s.api.core.v1.PodSpec}.
    @ivar fields: in Go declaration (JSON output) order.
    @ivar by_number: the same fields keyed by protobuf number.
    @ivar struct_type: C{"atomic"} for a C{+structType=atomic} struct, else C{""}.
    @ivar unions: C{+union} markers, each
        C{(discriminator json name, {member json name: Go field name})}.
    """

    name: str
    fields: tuple
    by_number: dict = field(default_factory=dict, compare=False, repr=False)
    struct_type: str = ""
    unions: tuple = ()

    @property
    def wire_order(self) -> tuple:
        """The fields sorted by number: the order Go's generated marshaller writes them in."""
        return tuple(sorted(self.fields, key=lambda f: f.number))


def _resolve(package: str, name: str) -> str:
    if name in SCALARS or name in SPECIALS:
        return name
    if "." in name:
        alias, local = name.split(".", 1)
        return f"{ALIASES[alias]}.{local}"
    return f"{package}.{name}"


def parse_row(package: str, row: tuple, enums: dict | None = None) -> FieldDef:
    """
    Turn one row of a package module (see the module docstring) into a L{FieldDef}.

    @param enums: C{{full enum type name: values}}, to resolve an C{enum} extra naming a type
        (C{KeyError} when it is not there); an C{enum} extra given as a tuple is kept as is.
    """
    json_name, number, expr, flags = row[:4]
    extra: dict = dict(row[4]) if len(row) > 4 else {}
    pointer = expr.startswith("*")
    expr = expr.lstrip("*")
    container = ""
    if expr.startswith("[]"):
        container, expr = "list", expr[2:]
    elif expr.startswith("map[string]"):
        container, expr = "map", expr[len("map[string]"):]
    return FieldDef(
        json_name=json_name,
        number=number,
        type=_resolve(package, expr),
        container=container,
        pointer=pointer,
        omitempty="o" in flags,
        inline="i" in flags,
        patch_strategy=extra.get("patch_strategy", ""),
        patch_merge_key=extra.get("patch_merge_key", ""),
        list_type=extra.get("list_type", ""),
        list_map_keys=tuple(extra.get("list_map_keys", ())),
        map_type=extra.get("map_type", ""),
        description=extra.get("description", ""),
        required="r" in flags,
        default=extra.get("default"),
        enum=_enum_values(package, extra.get("enum", ()), enums or {}),
    )


def _enum_values(package: str, enum: Any, enums: dict) -> tuple:
    if isinstance(enum, str):
        return tuple(enums[_resolve(package, enum)])
    return tuple(enum)


def _build() -> tuple[dict[str, TypeDef], dict[tuple[str, str, str], str],
                      dict[tuple[str, str, str], str]]:
    types: dict[str, TypeDef] = {}
    kinds: dict[tuple[str, str, str], str] = {}
    protobuf_kinds: dict[tuple[str, str, str], str] = {}
    enums = {f"{module.PACKAGE}.{name}": values
             for module in _MODULES for name, values in getattr(module, "ENUMS", {}).items()}
    for module in _MODULES:
        struct_types = getattr(module, "STRUCT_TYPES", {})
        unions = getattr(module, "UNIONS", {})
        for name, rows in module.TYPES.items():
            fields = tuple(parse_row(module.PACKAGE, row, enums) for row in rows)
            full = f"{module.PACKAGE}.{name}"
            types[full] = TypeDef(full, fields, {f.number: f for f in fields},
                                  struct_types.get(name, ""),
                                  (unions[name],) if name in unions else ())
        target = protobuf_kinds if getattr(module, "PROTOBUF_ONLY", False) else kinds
        for kind in getattr(module, "KINDS", ()):
            target[(module.GROUP, module.VERSION, kind)] = f"{module.PACKAGE}.{kind}"
        for kind in getattr(module, "PROTOBUF_KINDS", ()):
            protobuf_kinds[(module.GROUP, module.VERSION, kind)] = f"{module.PACKAGE}.{kind}"
    # core/v1 registers metav1.List as its own "List" kind.
    kinds[("", "v1", "List")] = f"{meta_v1.PACKAGE}.List"
    # the transforms of meta.k8s.io (as=PartialObjectMetadata[List]) have a protobuf form
    for version in ("v1", "v1beta1"):
        for kind in ("PartialObjectMetadata", "PartialObjectMetadataList"):
            protobuf_kinds[("meta.k8s.io", version, kind)] = f"{meta_v1.PACKAGE}.{kind}"
    # /api's APIVersions and /api/v1's APIResourceList are written without an apiVersion
    for kind in ("APIVersions", "APIResourceList"):
        protobuf_kinds[("", "", kind)] = f"{meta_v1.PACKAGE}.{kind}"
    return types, kinds, protobuf_kinds


#: Every message type by full name.
TYPES: dict[str, TypeDef]
#: C{(group, version, kind)} -> full type name, for the kinds served as top-level objects.
KINDS: dict[tuple[str, str, str], str]
#: Kinds with protobuf tables that the other readers of the tables (strict decoding, OpenAPI,
#: server-side apply) do not use yet: C{apiextensions.k8s.io}, C{apiregistration.k8s.io} and
#: the C{meta.k8s.io} transforms (C{PartialObjectMetadata[List]}).
PROTOBUF_KINDS: dict[tuple[str, str, str], str]
TYPES, KINDS, PROTOBUF_KINDS = _build()


def lookup_kind(group: str, version: str, kind: str, protobuf: bool = False) -> str | None:
    """
    The full type name for a kind, or C{None}.

    The C{meta/v1} kinds of L{META_KINDS} (Status, DeleteOptions, WatchEvent, ...) are
    accepted under any group and version, as upstream's scheme does.

    @param protobuf: also look in L{PROTOBUF_KINDS} (the protobuf codec does).
    """
    name = KINDS.get((group, version, kind))
    if name is None and protobuf:
        name = PROTOBUF_KINDS.get((group, version, kind))
    if name is None and kind in META_KINDS and version:
        name = f"{meta_v1.PACKAGE}.{kind}"
    return name


def fields_of(type_name: str) -> tuple:
    """The L{FieldDef}s of a message type, in JSON order; C{KeyError} if unknown."""
    return TYPES[type_name].fields


def register_package(module: Any) -> list[str]:
    """
    Add the type tables of one more API package to C{TYPES} and C{KINDS}: how a server built
    from kubetwist's parts (L{kubetwist.extension}) declares its own kinds, so that its
    OpenAPI schemas, strict field validation, strategic-merge-patch metadata and server-side
    apply schema are derived from them exactly as for the built-in kinds.

    @param module: any object with the attributes of a package module (see the module
        docstring): C{PACKAGE} (the full package name, e.g.
        C{io.k8s.sample-apiserver.pkg.apis.wardle.v1alpha1}), C{GROUP}, C{VERSION},
        C{KINDS} (the served kinds, lists included) and C{TYPES}; optionally C{ENUMS},
        C{STRUCT_TYPES} and C{UNIONS}.  Rows may name C{meta.X} and C{core.X} types.
    @return: the full type names added.
    @raise ValueError: a kind of this group-version, or a type name, is already registered
        with different rows (registering the same module twice is a no-op).
    """
    enums = {f"{m.PACKAGE}.{name}": values
             for m in _MODULES + (module,) for name, values in getattr(m, "ENUMS", {}).items()}
    struct_types = getattr(module, "STRUCT_TYPES", {})
    unions = getattr(module, "UNIONS", {})
    added: dict[str, TypeDef] = {}
    for name, rows in module.TYPES.items():
        fields = tuple(parse_row(module.PACKAGE, row, enums) for row in rows)
        full = f"{module.PACKAGE}.{name}"
        typedef = TypeDef(full, fields, {f.number: f for f in fields},
                          struct_types.get(name, ""), (unions[name],) if name in unions else ())
        if full in TYPES and TYPES[full] != typedef:
            raise ValueError(f"type {full} is already registered with other fields")
        added[full] = typedef
    kinds = {(module.GROUP, module.VERSION, kind): f"{module.PACKAGE}.{kind}"
             for kind in module.KINDS}
    for key, name in kinds.items():
        if KINDS.get(key, name) != name:
            raise ValueError(f"kind {key[2]} of {key[0]}/{key[1]} is already registered as "
                             f"{KINDS[key]}")
        if name not in added and name not in TYPES:
            raise ValueError(f"kind {key[2]} has no type {name}")
    TYPES.update(added)
    KINDS.update(kinds)
    return sorted(added)
