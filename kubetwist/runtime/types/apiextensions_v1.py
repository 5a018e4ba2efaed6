# -*- test-case-name: tests.runtime.test_protobuf_kinds -*-
"""
Field tables of C{k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1} as of
Kubernetes v1.32 (protobuf package C{k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1};
OpenAPI names C{io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.*}).

Data only; the row format is described in L{kubetwist.runtime.types}.  The kinds here are
served in protobuf (L{kubetwist.runtime.types.PROTOBUF_KINDS}) but not yet described to the
other table readers (strict decoding, OpenAPI, server-side apply), whose CRD handling has its
own schema.

C{JSONSchemaProps} has four types with their own JSON forms (upstream C{marshal.go}), special
types in L{kubetwist.runtime.types.SPECIALS}: C{JSON} (any JSON value; protobuf C{{1: raw}}),
C{JSONSchemaPropsOrArray} (a schema or a list of schemas; C{{1: schema, 2: repeated
schemas}}), C{JSONSchemaPropsOrBool} (a schema or a bool; C{{1: allows, 2: schema}}) and
C{JSONSchemaPropsOrStringArray} (a schema or a list of strings; C{{1: schema, 2: repeated
property}}).
"""

PACKAGE = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1"

GROUP = "apiextensions.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "CustomResourceDefinition",
    "CustomResourceDefinitionList",
    "ConversionReview",
)

#: Served in protobuf only: the other readers of the tables do not see these kinds yet.
PROTOBUF_ONLY = True

TYPES = {
    "ConversionRequest": (
        ("uid", 1, "string", "r"),
        ("desiredAPIVersion", 2, "string", "r"),
        ("objects", 3, "[]RawExtension", "r"),
    ),
    "ConversionResponse": (
        ("uid", 1, "string", "r"),
        ("convertedObjects", 2, "[]RawExtension", "r"),
        ("result", 3, "meta.Status", "r"),
    ),
    "ConversionReview": (
        ("request", 1, "*ConversionRequest", "o"),
        ("response", 2, "*ConversionResponse", "o"),
    ),
    "CustomResourceColumnDefinition": (
        ("name", 1, "string", "r"),
        ("type", 2, "string", "r"),
        ("format", 3, "string", "o"),
        ("description", 4, "string", "o"),
        ("priority", 5, "int32", "o"),
        ("jsonPath", 6, "string", "r"),
    ),
    "CustomResourceConversion": (
        ("strategy", 1, "string", "r"),
        ("webhook", 2, "*WebhookConversion", "o"),
    ),
    "CustomResourceDefinition": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "CustomResourceDefinitionSpec", "r"),
        ("status", 3, "CustomResourceDefinitionStatus", "o"),
    ),
    "CustomResourceDefinitionCondition": (
        ("type", 1, "string", "r"),
        ("status", 2, "string", "r"),
        ("lastTransitionTime", 3, "Time", "o"),
        ("reason", 4, "string", "o"),
        ("message", 5, "string", "o"),
    ),
    "CustomResourceDefinitionList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]CustomResourceDefinition", "r"),
    ),
    "CustomResourceDefinitionNames": (
        ("plural", 1, "string", "r"),
        ("singular", 2, "string", "o"),
        ("shortNames", 3, "[]string", "o", {"list_type": "atomic"}),
        ("kind", 4, "string", "r"),
        ("listKind", 5, "string", "o"),
        ("categories", 6, "[]string", "o", {"list_type": "atomic"}),
    ),
    "CustomResourceDefinitionSpec": (
        ("group", 1, "string", "r"),
        ("names", 3, "CustomResourceDefinitionNames", "r"),
        ("scope", 4, "string", "r"),
        ("versions", 7, "[]CustomResourceDefinitionVersion", "r", {"list_type": "atomic"}),
        ("conversion", 9, "*CustomResourceConversion", "o"),
        ("preserveUnknownFields", 10, "bool", "o"),
    ),
    "CustomResourceDefinitionStatus": (
        ("conditions", 1, "[]CustomResourceDefinitionCondition", "",
         {"list_type": "map", "list_map_keys": ("type",)}),
        ("acceptedNames", 2, "CustomResourceDefinitionNames", ""),
        ("storedVersions", 3, "[]string", "", {"list_type": "atomic"}),
    ),
    "CustomResourceDefinitionVersion": (
        ("name", 1, "string", "r"),
        ("served", 2, "bool", "r"),
        ("storage", 3, "bool", "r"),
        ("deprecated", 7, "bool", "o"),
        ("deprecationWarning", 8, "*string", "o"),
        ("schema", 4, "*CustomResourceValidation", "o"),
        ("subresources", 5, "*CustomResourceSubresources", "o"),
        ("additionalPrinterColumns", 6, "[]CustomResourceColumnDefinition", "o",
         {"list_type": "atomic"}),
        ("selectableFields", 9, "[]SelectableField", "o", {"list_type": "atomic"}),
    ),
    "CustomResourceSubresourceScale": (
        ("specReplicasPath", 1, "string", "r"),
        ("statusReplicasPath", 2, "string", "r"),
        ("labelSelectorPath", 3, "*string", "o"),
    ),
    "CustomResourceSubresourceStatus": (),
    "CustomResourceSubresources": (
        ("status", 1, "*CustomResourceSubresourceStatus", "o"),
        ("scale", 2, "*CustomResourceSubresourceScale", "o"),
    ),
    "CustomResourceValidation": (
        ("openAPIV3Schema", 1, "*JSONSchemaProps", "o"),
    ),
    "ExternalDocumentation": (
        ("description", 1, "string", "o"),
        ("url", 2, "string", "o"),
    ),
    "JSONSchemaProps": (
        ("id", 1, "string", "o"),
        ("$schema", 2, "string", "o"),
        ("$ref", 3, "*string", "o"),
        ("description", 4, "string", "o"),
        ("type", 5, "string", "o"),
        ("format", 6, "string", "o"),
        ("title", 7, "string", "o"),
        ("default", 8, "*JSON", "o"),
        ("maximum", 9, "*double", "o"),
        ("exclusiveMaximum", 10, "bool", "o"),
        ("minimum", 11, "*double", "o"),
        ("exclusiveMinimum", 12, "bool", "o"),
        ("maxLength", 13, "*int64", "o"),
        ("minLength", 14, "*int64", "o"),
        ("pattern", 15, "string", "o"),
        ("maxItems", 16, "*int64", "o"),
        ("minItems", 17, "*int64", "o"),
        ("uniqueItems", 18, "bool", "o"),
        ("multipleOf", 19, "*double", "o"),
        ("enum", 20, "[]JSON", "o", {"list_type": "atomic"}),
        ("maxProperties", 21, "*int64", "o"),
        ("minProperties", 22, "*int64", "o"),
        ("required", 23, "[]string", "o", {"list_type": "atomic"}),
        ("items", 24, "*JSONSchemaPropsOrArray", "o"),
        ("allOf", 25, "[]JSONSchemaProps", "o", {"list_type": "atomic"}),
        ("oneOf", 26, "[]JSONSchemaProps", "o", {"list_type": "atomic"}),
        ("anyOf", 27, "[]JSONSchemaProps", "o", {"list_type": "atomic"}),
        ("not", 28, "*JSONSchemaProps", "o"),
        ("properties", 29, "map[string]JSONSchemaProps", "o"),
        ("additionalProperties", 30, "*JSONSchemaPropsOrBool", "o"),
        ("patternProperties", 31, "map[string]JSONSchemaProps", "o"),
        ("dependencies", 32, "map[string]JSONSchemaPropsOrStringArray", "o"),
        ("additionalItems", 33, "*JSONSchemaPropsOrBool", "o"),
        ("definitions", 34, "map[string]JSONSchemaProps", "o"),
        ("externalDocs", 35, "*ExternalDocumentation", "o"),
        ("example", 36, "*JSON", "o"),
        ("nullable", 37, "bool", "o"),
        ("x-kubernetes-preserve-unknown-fields", 38, "*bool", "o"),
        ("x-kubernetes-embedded-resource", 39, "bool", "o"),
        ("x-kubernetes-int-or-string", 40, "bool", "o"),
        ("x-kubernetes-list-map-keys", 41, "[]string", "o", {"list_type": "atomic"}),
        ("x-kubernetes-list-type", 42, "*string", "o"),
        ("x-kubernetes-map-type", 43, "*string", "o"),
        ("x-kubernetes-validations", 44, "[]ValidationRule", "o", {
            "patch_strategy": "merge",
            "patch_merge_key": "rule",
            "list_type": "map",
            "list_map_keys": ("rule",),
        }),
    ),
    "SelectableField": (
        ("jsonPath", 1, "string", "r"),
    ),
    "ServiceReference": (
        ("namespace", 1, "string", "r"),
        ("name", 2, "string", "r"),
        ("path", 3, "*string", "o"),
        ("port", 4, "*int32", "o"),
    ),
    "ValidationRule": (
        ("rule", 1, "string", "r"),
        ("message", 2, "string", "o"),
        ("messageExpression", 3, "string", "o"),
        ("reason", 4, "*string", "o"),
        ("fieldPath", 5, "string", "o"),
        ("optionalOldSelf", 6, "*bool", "o"),
    ),
    "WebhookClientConfig": (
        ("url", 3, "*string", "o"),
        ("service", 1, "*ServiceReference", "o"),
        ("caBundle", 2, "bytes", "o"),
    ),
    "WebhookConversion": (
        ("clientConfig", 2, "*WebhookClientConfig", "o"),
        ("conversionReviewVersions", 3, "[]string", "r", {"list_type": "atomic"}),
    ),
}
