"""
Tests for L{kubetwist.apimachinery.validation}, with messages taken from upstream v1.32.
"""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apimachinery import validation as v
from kubetwist.runtime.field import Path

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
QNAME_TAIL = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
    "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


class StringCheckTests(SynchronousTestCase):
    """The C{Is*} checks return upstream's message strings."""

    def test_subdomain(self):
        """A valid subdomain has no messages; an uppercase one gets the regex message."""
        self.assertEqual(v.is_dns1123_subdomain("example.com"), [])
        self.assertEqual(v.is_dns1123_subdomain("Example.com"), [SUBDOMAIN_MSG])

    def test_subdomain_too_long(self):
        """A 254-character subdomain reports the length, then nothing else if the regex matches."""
        self.assertEqual(
            v.is_dns1123_subdomain("a" * 254), ["must be no more than 253 characters"]
        )

    def test_label(self):
        """A label with dots that is a valid subdomain says C{must not contain dots}."""
        self.assertEqual(v.is_dns1123_label("my-name"), [])
        self.assertEqual(v.is_dns1123_label("a.b"), ["must not contain dots"])
        self.assertEqual(v.is_dns1123_label("-a"), [LABEL_MSG])
        self.assertEqual(
            v.is_dns1123_label("a" * 64), ["must be no more than 63 characters"]
        )

    def test_dns1035(self):
        """A DNS-1035 label must start with a letter."""
        self.assertEqual(v.is_dns1035_label("abc-1"), [])
        self.assertEqual(v.is_dns1035_label("1abc"), [DNS1035_MSG])

    def test_qualified_name(self):
        """Qualified names: prefix and name parts checked separately."""
        self.assertEqual(v.is_qualified_name("example.com/My_Name.1"), [])
        self.assertEqual(v.is_qualified_name("/a"), ["prefix part must be non-empty"])
        self.assertEqual(v.is_qualified_name("a/"),
                         ["name part must be non-empty", "name part " + QNAME_TAIL])
        self.assertEqual(v.is_qualified_name("A_B/c"), ["prefix part " + SUBDOMAIN_MSG])
        self.assertEqual(
            v.is_qualified_name("a/b/c"),
            ["a qualified name " + QNAME_TAIL + " with an optional DNS subdomain prefix and '/' "
             "(e.g. 'example.com/MyName')"],
        )
        self.assertEqual(
            v.is_qualified_name("a" * 64), ["name part must be no more than 63 characters"]
        )

    def test_label_value(self):
        """Label values may be empty; otherwise they are qualified-name shaped."""
        self.assertEqual(v.is_valid_label_value(""), [])
        self.assertEqual(v.is_valid_label_value("a b"), [LABEL_VALUE_MSG])

    def test_c_identifier(self):
        """C identifiers may not start with a digit."""
        self.assertEqual(v.is_c_identifier("_a1"), [])
        self.assertEqual(
            v.is_c_identifier("1a"),
            ["a valid C identifier must start with alphabetic character or '_', followed by a "
             "string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or "
             "'MyName', "
             "regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')"],
        )

    def test_port_num(self):
        """Port numbers are 1..65535."""
        self.assertEqual(v.is_valid_port_num(80), [])
        self.assertEqual(v.is_valid_port_num(0), ["must be between 1 and 65535, inclusive"])
        self.assertEqual(v.is_valid_port_num(65536), ["must be between 1 and 65535, inclusive"])

    def test_port_name(self):
        """Port names: every applicable message, in upstream order."""
        self.assertEqual(v.is_valid_port_name("http"), [])
        self.assertEqual(
            v.is_valid_port_name("-1--"),
            ["must contain at least one letter (a-z)", "must not contain consecutive hyphens",
             "must not begin or end with a hyphen"],
        )
        self.assertEqual(
            v.is_valid_port_name("A" * 16),
            ["must be no more than 15 characters",
             "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
             "must contain at least one letter (a-z)"],
        )

    def test_ip(self):
        """IPs are parsed sloppily (leading zeros allowed), zones are rejected."""
        self.assertEqual(v.is_valid_ip("10.09.8.7"), [])
        self.assertEqual(v.is_valid_ip("2001:db8::ffff"), [])
        msg = ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
        self.assertEqual(v.is_valid_ip("1.2.3"), msg)
        self.assertEqual(v.is_valid_ip("fe80::1%eth0"), msg)
        self.assertEqual(v.is_valid_ip("256.1.1.1"), msg)
        self.assertEqual(v.is_valid_ipv4_address("::1"), ["must be a valid IPv4 address"])
        self.assertEqual(v.is_valid_ipv6_address("1.2.3.4"), ["must be a valid IPv6 address"])
        self.assertEqual(
            [e.error() for e in v.validate_ip(Path("spec", "clusterIP"), "x")],
            ['spec.clusterIP: Invalid value: "x": must be a valid IP address, '
             "(e.g. 10.9.8.7 or 2001:db8::ffff)"],
        )

    def test_cidr(self):
        """CIDRs need a prefix length within the family's width."""
        self.assertEqual(v.is_valid_cidr("10.0.0.1/24"), [])
        self.assertEqual(v.is_valid_cidr("2001:db8::/64"), [])
        msg = ["must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]
        self.assertEqual(v.is_valid_cidr("10.0.0.0/33"), msg)
        self.assertEqual(v.is_valid_cidr("10.0.0.0"), msg)

    def test_percent(self):
        """Percent strings end in C{%}."""
        self.assertEqual(v.is_valid_percent("25%"), [])
        self.assertEqual(
            v.is_valid_percent("25"),
            ["a valid percent string must be a numeric string followed by an ending '%' (e.g. "
             "'1%',  or '93%', regex used for validation is '[0-9]+%')"],
        )

    def test_config_map_key(self):
        """Config keys reject C{..} prefixes after the regex."""
        self.assertEqual(v.is_config_map_key("a.b"), [])
        self.assertEqual(v.is_config_map_key(".."), ["must not be '..'"])
        self.assertEqual(v.is_config_map_key("..a"), ["must not start with '..'"])

    def test_env_var_name(self):
        """Environment variable names may not start with a digit."""
        self.assertEqual(v.is_env_var_name("MY_VAR"), [])
        self.assertEqual(len(v.is_env_var_name("1A")), 1)
        self.assertEqual(
            v.is_relaxed_env_var_name("a=b"),
            ["a valid environment variable name must consist only of printable ASCII characters "
             "other than '='"],
        )


class NameFuncTests(SynchronousTestCase):
    """The C{ValidateNameFunc}s and their generateName masking."""

    def test_prefix_masks_trailing_dash(self):
        """With C{prefix}, a trailing dash is masked so C{web-} is a valid generateName."""
        self.assertEqual(v.name_is_dns_subdomain("web-", True), [])
        self.assertEqual(v.name_is_dns_subdomain("web-", False), [SUBDOMAIN_MSG])
        self.assertEqual(v.name_is_dns_label("web-", True), [])
        self.assertEqual(v.name_is_dns1035_label("web-", True), [])

    def test_prefix_masks_two_characters(self):
        """
        Upstream's mask replaces the last two characters with C{a}: C{a.-} becomes C{a} and is
        accepted as a label prefix, faithfully.
        """
        self.assertEqual(v.name_is_dns_label("a.-", True), [])

    def test_single_dash(self):
        """A lone C{-} is not masked."""
        self.assertEqual(len(v.name_is_dns_subdomain("-", True)), 1)


def _errs(errors):
    return [e.error() for e in errors]


class ObjectMetaTests(SynchronousTestCase):
    """L{v.validate_object_meta} mirrors C{ValidateObjectMetaAccessor}."""

    def test_name_required(self):
        """Neither name nor generateName: one Required error."""
        self.assertEqual(
            _errs(v.validate_object_meta({"namespace": "ns"}, True, v.name_is_dns_subdomain,
                                         Path("metadata"))),
            ["metadata.name: Required value: name or generateName is required"],
        )

    def test_valid(self):
        """A complete, valid metadata has no errors."""
        meta = {
            "name": "web", "namespace": "default", "labels": {"app": "web"},
            "annotations": {"Example.com/X": "y"}, "finalizers": ["example.com/f"],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r",
                                 "uid": "u"}],
        }
        self.assertEqual(v.validate_object_meta(meta, True, v.name_is_dns_subdomain,
                                                Path("metadata")), [])

    def test_namespace_scope(self):
        """Namespace is required when namespaced, forbidden otherwise, and must be a label."""
        p = Path("metadata")
        self.assertEqual(
            _errs(v.validate_object_meta({"name": "a"}, True, v.name_is_dns_subdomain, p)),
            ["metadata.namespace: Required value"],
        )
        self.assertEqual(
            _errs(v.validate_object_meta({"name": "a", "namespace": "x"}, False,
                                         v.name_is_dns_subdomain, p)),
            ["metadata.namespace: Forbidden: not allowed on this type"],
        )
        self.assertEqual(
            _errs(v.validate_object_meta({"name": "a", "namespace": "a.b"}, True,
                                         v.name_is_dns_subdomain, p)),
            ['metadata.namespace: Invalid value: "a.b": must not contain dots'],
        )

    def test_bad_name_and_generate_name(self):
        """generateName errors come first, then name errors."""
        errs = _errs(v.validate_object_meta(
            {"name": "A", "generateName": "Bc-"}, False, v.name_is_dns_subdomain, Path("metadata")
        ))
        self.assertEqual(
            errs,
            ['metadata.generateName: Invalid value: "Bc-": ' + SUBDOMAIN_MSG,
             'metadata.name: Invalid value: "A": ' + SUBDOMAIN_MSG],
        )

    def test_labels(self):
        """A bad label value is reported at C{metadata.labels} with the value."""
        errs = _errs(v.validate_object_meta(
            {"name": "a", "labels": {"k": "-bad"}}, False, v.name_is_dns_subdomain, Path("metadata")
        ))
        self.assertEqual(errs, ['metadata.labels: Invalid value: "-bad": ' + LABEL_VALUE_MSG])

    def test_annotations_size(self):
        """Annotations over 256 KiB in total are C{Too long}."""
        errs = _errs(v.validate_annotations({"a": "x" * (256 * 1024)},
                                            Path("metadata", "annotations")))
        self.assertEqual(errs, [
            "metadata.annotations: Too long: may not be more than 262144 bytes"])
        self.assertEqual(v.validate_annotations({"a": "x" * (256 * 1024 - 1)}, Path("x")), [])

    def test_annotation_key_case_insensitive(self):
        """Annotation keys are checked lowercased, but the original key is printed."""
        self.assertEqual(v.validate_annotations({"Foo.COM/Bar": ""}, Path("a")), [])
        errs = _errs(v.validate_annotations({"A B": ""}, Path("a")))
        self.assertEqual(errs, ['a: Invalid value: "A B": name part ' + QNAME_TAIL])

    def test_generation_negative(self):
        """A negative generation is invalid."""
        errs = _errs(v.validate_object_meta({"name": "a", "generation": -1}, False,
                                            v.name_is_dns_subdomain, Path("metadata")))
        self.assertEqual(errs, ["metadata.generation: Invalid value: -1: must be greater than or "
                                "equal to 0"])

    def test_owner_references(self):
        """Empty owner reference fields are each reported; Events are banned owners."""
        errs = _errs(v.validate_owner_references([{}], Path("metadata", "ownerReferences")))
        self.assertEqual(errs, [
            'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
            'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
            'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
            'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
        ])
        ev = {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}
        errs = v.validate_owner_references([ev], Path("o"))
        self.assertEqual(errs[0].detail, "/v1, Kind=Event is disallowed from being an owner")

    def test_two_controllers(self):
        """Only one owner reference may be the controller."""
        refs = [
            {"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "controller": True},
            {"apiVersion": "v1", "kind": "B", "name": "b", "uid": "2", "controller": True},
        ]
        errs = v.validate_owner_references(refs, Path("o"))
        self.assertEqual(
            [e.detail for e in errs],
            ['Only one reference can have Controller set to true. Found "true" in references '
             "for A/a and B/b"],
        )

    def test_finalizers(self):
        """orphan and foregroundDeletion are mutually exclusive."""
        errs = v.validate_finalizers(["orphan", "foregroundDeletion"],
                                     Path("metadata", "finalizers"))
        self.assertEqual([e.detail for e in errs],
                         ["finalizer orphan and foregroundDeletion cannot be both set"])

    def test_managed_fields(self):
        """Managed fields entries need a valid operation and fieldsType."""
        errs = _errs(v.validate_managed_fields(
            [{"operation": "Patch", "fieldsType": "FieldsV2", "manager": "m"}],
            Path("metadata", "managedFields")
        ))
        self.assertEqual(errs, [
            'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or '
            '`Update`',
            'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
        ])


class ObjectMetaUpdateTests(SynchronousTestCase):
    """L{v.validate_object_meta_update} mirrors C{ValidateObjectMetaAccessorUpdate}."""

    old = {
        "name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "5", "generation": 2,
        "creationTimestamp": "2024-01-02T03:04:05Z",
    }

    def test_unchanged(self):
        """Same identity and a resourceVersion: no errors."""
        self.assertEqual(v.validate_object_meta_update(dict(self.old), self.old, Path("metadata")),
                         [])

    def test_immutable(self):
        """Changing name, namespace and uid: each is immutable, with the new value printed."""
        new = dict(self.old, name="b", namespace="other", uid="u2")
        self.assertEqual(_errs(v.validate_object_meta_update(new, self.old, Path("metadata"))), [
            'metadata.name: Invalid value: "b": field is immutable',
            'metadata.namespace: Invalid value: "other": field is immutable',
            'metadata.uid: Invalid value: "u2": field is immutable',
        ])

    def test_creation_timestamp_printed_as_go_time(self):
        """A changed creationTimestamp prints as Go's C{time.Time.String()}."""
        new = dict(self.old, creationTimestamp="2025-01-02T03:04:05Z")
        self.assertEqual(_errs(v.validate_object_meta_update(new, self.old, Path("metadata"))), [
            "metadata.creationTimestamp: Invalid value: 2025-01-02 03:04:05 +0000 UTC: field is "
            "immutable",
        ])

    def test_resource_version_and_generation(self):
        """resourceVersion is required; generation may not decrease."""
        new = dict(self.old, resourceVersion="", generation=1)
        self.assertEqual(_errs(v.validate_object_meta_update(new, self.old, Path("metadata"))), [
            'metadata.resourceVersion: Invalid value: "": must be specified for an update',
            "metadata.generation: Invalid value: 1: must not be decremented",
        ])

    def test_no_new_finalizers_while_deleting(self):
        """While being deleted, no finalizer may be added."""
        old = dict(self.old, deletionTimestamp="2024-01-02T03:04:05Z", finalizers=["a/x"])
        new = dict(old, finalizers=["a/x", "b/y"])
        self.assertEqual(_errs(v.validate_object_meta_update(new, old, Path("metadata"))), [
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being "
            'deleted, found new finalizers []string{"b/y"}',
        ])


class LabelSelectorValidationTests(SynchronousTestCase):
    """L{v.validate_label_selector} mirrors C{v1validation.ValidateLabelSelector}."""

    def test_operators(self):
        """Each operator's value rules, and an unknown operator."""
        sel = {"matchExpressions": [
            {"key": "a", "operator": "In"},
            {"key": "b", "operator": "Exists", "values": ["x"]},
            {"key": "c", "operator": "Foo"},
        ]}
        self.assertEqual(_errs(v.validate_label_selector(sel, Path("spec", "selector"))), [
            "spec.selector.matchExpressions[0].values: Required value: must be specified when "
            "`operator` is 'In' or 'NotIn'",
            "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when "
            "`operator` is 'Exists' or 'DoesNotExist'",
            'spec.selector.matchExpressions[2].operator: Invalid value: "Foo": not a valid '
            'selector operator',
        ])

    def test_values_and_match_labels(self):
        """Bad values are reported at their index; matchLabels as labels."""
        sel = {"matchLabels": {"k": "-"}, "matchExpressions": [
            {"key": "a", "operator": "In", "values": ["ok", "-"]}]}
        self.assertEqual(_errs(v.validate_label_selector(sel, Path("s"))), [
            's.matchLabels: Invalid value: "-": ' + LABEL_VALUE_MSG,
            's.matchExpressions[0].values[1]: Invalid value: "-": ' + LABEL_VALUE_MSG,
        ])

    def test_none(self):
        """A missing selector is valid."""
        self.assertEqual(v.validate_label_selector(None, Path("s")), [])


class OptionsTests(SynchronousTestCase):
    """Request option validators."""

    def test_dry_run(self):
        """Only C{All} is a supported dryRun value."""
        self.assertEqual(v.validate_dry_run(Path("dryRun"), ["All"]), [])
        errs = v.validate_dry_run(Path("dryRun"), ["x"])
        self.assertEqual(errs[0].detail, 'supported values: "All"')

    def test_patch_options(self):
        """Apply requires a fieldManager; other patches forbid force."""
        self.assertEqual(
            _errs(v.validate_patch_options({}, "application/apply-patch+yaml")),
            ["fieldManager: Required value: is required for apply patch"],
        )
        self.assertEqual(
            _errs(v.validate_patch_options({"force": True}, "application/merge-patch+json")),
            ["force: Forbidden: may not be specified for non-apply patch"],
        )

    def test_delete_options(self):
        """A bad propagationPolicy lists the allowed values and C{nil}."""
        errs = _errs(v.validate_delete_options({"propagationPolicy": "X"}))
        self.assertEqual(errs, [
            'propagationPolicy: Unsupported value: "X": supported values: "Foreground", '
            '"Background", "Orphan", "nil"'
        ])
