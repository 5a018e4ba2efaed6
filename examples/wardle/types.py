# -*- test-case-name: tests.extension.test_wardle -*-
"""
The type tables of C{k8s.io/sample-apiserver/pkg/apis/wardle/v1alpha1} (C{types.go}), in the
row format of L{kubetwist.runtime.types}: C{(json name, protobuf number, type, flags[, extra])}.
Registered with L{kubetwist.extension.register_types}, they give the kinds their OpenAPI
schemas (component names as upstream's definition namer writes them), strict field validation,
strategic-merge-patch metadata and server-side apply schema.
"""

#: Upstream's OpenAPI definition names: the Go package path, reversed domain first.
PACKAGE = "io.k8s.sample-apiserver.pkg.apis.wardle.v1alpha1"

GROUP = "wardle.example.com"
VERSION = "v1alpha1"

KINDS = ("Flunder", "FlunderList", "Fischer", "FischerList")

TYPES = {
    "Flunder": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "FlunderSpec", "o"),
        ("status", 3, "FlunderStatus", "o"),
    ),
    "FlunderSpec": (
        # A name of another flunder or fischer, depending on the reference type.
        ("reference", 1, "string", "o"),
        # The reference type, defaults to "Flunder" if reference is set.
        ("referenceType", 2, "*string", "o"),
    ),
    "FlunderStatus": (),
    "FlunderList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]Flunder", "r"),
    ),
    "Fischer": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        # DisallowedFlunders holds a list of Flunder.Names that are disallowed.
        ("disallowedFlunders", 2, "[]string", "o", {"list_type": "atomic"}),
    ),
    "FischerList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]Fischer", "r"),
    ),
}
