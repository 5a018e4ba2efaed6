# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/flowcontrol/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.flowcontrol.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.flowcontrol.v1"

GROUP = "flowcontrol.apiserver.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "FlowSchema",
    "FlowSchemaList",
    "PriorityLevelConfiguration",
    "PriorityLevelConfigurationList",
)

_ATOMIC = {"list_type": "atomic"}
_SET = {"list_type": "set"}
_CONDITIONS = {
    "patch_strategy": "merge",
    "patch_merge_key": "type",
    "list_type": "map",
    "list_map_keys": ("type",),
}

#: C{+union} structs: type name -> (discriminator, {member json name: Go field name}),
#: published as C{x-kubernetes-unions}.
UNIONS = {
    "LimitResponse": ("type", {"queuing": "Queuing"}),
    "PriorityLevelConfigurationSpec": ("type", {"exempt": "Exempt", "limited": "Limited"}),
    "Subject": ("kind", {"group": "Group", "serviceAccount": "ServiceAccount", "user": "User"}),
}

TYPES = {
    "FlowSchema": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "FlowSchemaSpec", "o"),
        ("status", 3, "FlowSchemaStatus", "o"),
    ),
    "FlowSchemaList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]FlowSchema", "r"),
    ),
    "FlowSchemaSpec": (
        ("priorityLevelConfiguration", 1, "PriorityLevelConfigurationReference", "r"),
        ("matchingPrecedence", 2, "int32", ""),
        ("distinguisherMethod", 3, "*FlowDistinguisherMethod", "o"),
        ("rules", 4, "[]PolicyRulesWithSubjects", "o", _ATOMIC),
    ),
    "FlowDistinguisherMethod": (
        ("type", 1, "string", "r"),
    ),
    "PriorityLevelConfigurationReference": (
        ("name", 1, "string", "r"),
    ),
    "PolicyRulesWithSubjects": (
        ("subjects", 1, "[]Subject", "r", _ATOMIC),
        ("resourceRules", 2, "[]ResourcePolicyRule", "o", _ATOMIC),
        ("nonResourceRules", 3, "[]NonResourcePolicyRule", "o", _ATOMIC),
    ),
    "Subject": (
        ("kind", 1, "string", "r"),
        ("user", 2, "*UserSubject", "o"),
        ("group", 3, "*GroupSubject", "o"),
        ("serviceAccount", 4, "*ServiceAccountSubject", "o"),
    ),
    "UserSubject": (
        ("name", 1, "string", "r"),
    ),
    "GroupSubject": (
        ("name", 1, "string", "r"),
    ),
    "ServiceAccountSubject": (
        ("namespace", 1, "string", "r"),
        ("name", 2, "string", "r"),
    ),
    "ResourcePolicyRule": (
        ("verbs", 1, "[]string", "r", _SET),
        ("apiGroups", 2, "[]string", "r", _SET),
        ("resources", 3, "[]string", "r", _SET),
        ("clusterScope", 4, "bool", "o"),
        ("namespaces", 5, "[]string", "", _SET),
    ),
    "NonResourcePolicyRule": (
        ("verbs", 1, "[]string", "r", _SET),
        ("nonResourceURLs", 6, "[]string", "r", _SET),
    ),
    "FlowSchemaStatus": (
        ("conditions", 1, "[]FlowSchemaCondition", "o", _CONDITIONS),
    ),
    "FlowSchemaCondition": (
        ("type", 1, "string", "o"),
        ("status", 2, "string", "o"),
        ("lastTransitionTime", 3, "Time", "o"),
        ("reason", 4, "string", "o"),
        ("message", 5, "string", "o"),
    ),
    "PriorityLevelConfiguration": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "PriorityLevelConfigurationSpec", "o"),
        ("status", 3, "PriorityLevelConfigurationStatus", "o"),
    ),
    "PriorityLevelConfigurationList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]PriorityLevelConfiguration", "r"),
    ),
    "PriorityLevelConfigurationSpec": (
        ("type", 1, "string", "r"),
        ("limited", 2, "*LimitedPriorityLevelConfiguration", "o"),
        ("exempt", 3, "*ExemptPriorityLevelConfiguration", "o"),
    ),
    "LimitedPriorityLevelConfiguration": (
        ("nominalConcurrencyShares", 1, "*int32", ""),
        ("limitResponse", 2, "LimitResponse", "o"),
        ("lendablePercent", 3, "*int32", "o"),
        ("borrowingLimitPercent", 4, "*int32", "o"),
    ),
    "ExemptPriorityLevelConfiguration": (
        ("nominalConcurrencyShares", 1, "*int32", "o"),
        ("lendablePercent", 2, "*int32", "o"),
    ),
    "LimitResponse": (
        ("type", 1, "string", "r"),
        ("queuing", 2, "*QueuingConfiguration", "o"),
    ),
    "QueuingConfiguration": (
        ("queues", 1, "int32", ""),
        ("handSize", 2, "int32", ""),
        ("queueLengthLimit", 3, "int32", ""),
    ),
    "PriorityLevelConfigurationStatus": (
        ("conditions", 1, "[]PriorityLevelConfigurationCondition", "o", _CONDITIONS),
    ),
    "PriorityLevelConfigurationCondition": (
        ("type", 1, "string", "o"),
        ("status", 2, "string", "o"),
        ("lastTransitionTime", 3, "Time", "o"),
        ("reason", 4, "string", "o"),
        ("message", 5, "string", "o"),
    ),
}
